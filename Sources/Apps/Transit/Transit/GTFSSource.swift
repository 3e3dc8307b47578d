package import CaravanCore
import Foundation
import ZIPFoundation

/// The files of a GTFS feed: a `.zip` archive or a directory.
///
/// Files are found by name at the top level, or inside one folder when the archive wraps the feed in a folder
/// (a common packaging). macOS resource forks (`__MACOSX/`, `._name`) are ignored.
package struct GTFSSource {
    private enum Storage {
        case directory(String)
        case archive(Archive, [String: Entry])
    }

    private let storage: Storage
    /// The feed file names present (`stops.txt`, …).
    package let fileNames: Set<String>

    package init(path: String) throws(CaravanError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CaravanError(.invalidFeed, "the feed \(path) does not exist")
        }
        if isDirectory.boolValue {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw CaravanError(.invalidFeed, "the feed directory \(path) cannot be listed", internalDetail: "\(error)")
            }
            storage = .directory(path)
            fileNames = Set(names.filter { $0.hasSuffix(".txt") && !$0.hasPrefix("._") })
            return
        }
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw CaravanError(.invalidFeed, "the feed \(path) is neither a directory nor a readable ZIP archive", internalDetail: "\(error)")
        }
        var entries: [String: Entry] = [:]
        var folders: [String: Set<String>] = [:]
        for entry in archive where entry.type == .file {
            let entryPath = entry.path
            if entryPath.hasPrefix("__MACOSX/") { continue }
            let components = entryPath.split(separator: "/")
            guard let last = components.last, last.hasSuffix(".txt"), !last.hasPrefix("._"), components.count <= 2 else { continue }
            let folder = components.count == 2 ? String(components[0]) : ""
            folders[folder, default: []].insert(String(last))
            if folder.isEmpty || entries[String(last)] == nil { entries[String(last)] = entry }
        }
        if folders[""] == nil, folders.count > 1 {
            throw CaravanError(.invalidFeed, "the archive \(path) holds several folders of .txt files (\(folders.keys.sorted().joined(separator: ", "))); expected one feed")
        }
        storage = .archive(archive, entries)
        fileNames = Set(entries.keys)
    }

    /// The bytes of `name`, or nil when the feed has no such file.
    package func contents(of name: String) throws(CaravanError) -> [UInt8]? {
        switch storage {
        case .directory(let directory):
            guard fileNames.contains(name) else { return nil }
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CaravanError(.invalidFeed, "\(name) cannot be read")
            }
            return Array(data)
        case .archive(let archive, let entries):
            guard let entry = entries[name] else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(clamping: entry.uncompressedSize))
            do {
                _ = try archive.extract(entry, skipCRC32: false) { chunk in bytes.append(contentsOf: chunk) }
            } catch {
                throw CaravanError(.invalidFeed, "\(name) cannot be extracted from the archive (corrupt entry)", internalDetail: "\(error)")
            }
            return bytes
        }
    }
}
