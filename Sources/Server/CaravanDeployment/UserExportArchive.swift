package import CaravanCore
import Foundation
import ZIPFoundation

/// `caravan export user … --format csv`: a ZIP archive with one CSV file per part of a `UserExport` (`user.csv`,
/// then `<table>.csv`), written beside `path` and renamed into place. Mode 0600: it holds personal data.
package enum UserExportArchive {
    package static func write(_ export: UserExport, to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw DeploymentError(.outputExists, "\(path) already exists; choose another name")
        }
        let output = URL(fileURLWithPath: path)
        let partial = output.deletingLastPathComponent().appendingPathComponent(".\(output.lastPathComponent).partial-\(UUID().uuidString)")
        do {
            try writeEntries(export.csvFiles, to: partial)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: partial.path)
            try FileManager.default.moveItem(at: partial, to: output)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            throw error
        }
    }

    private static func writeEntries(_ files: [(name: String, bytes: [UInt8])], to url: URL) throws {
        let archive = try Archive(url: url, accessMode: .create)
        for file in files {
            let data = Data(file.bytes)
            try archive.addEntry(with: file.name, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
    }
}
