public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Object bytes as files under a directory (`<data dir>/storage/<2 hex>/<version>`). A write goes to a temporary
/// file in the same folder, is fsynced, then renamed into place and the folder fsynced: a crash leaves either no
/// file or the whole file under the version's name, never half of one. (A crash may leave a temporary file, or a
/// complete file no metadata row points at; neither is ever served.)
public struct FileByteStore: ObjectByteStore {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    func folder(of version: ObjectVersion) -> URL {
        directory.appendingPathComponent(String(version.id.prefix(2)), isDirectory: true)
    }

    func path(of version: ObjectVersion) -> URL {
        folder(of: version).appendingPathComponent(version.id)
    }

    public func write(_ bytes: Data, version: ObjectVersion) async throws {
        let folder = folder(of: version)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".tmp-\(version.id)")
        try Self.writeSynced(bytes, to: temporary.path)
        guard rename(temporary.path, path(of: version).path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "rename of an object file failed: errno \(code)")
        }
        try Self.syncFolder(folder.path)
    }

    public func read(_ version: ObjectVersion) async throws -> Data? {
        let file = path(of: version).path
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }

    public func remove(_ versions: [ObjectVersion]) async throws {
        for version in versions {
            let file = path(of: version).path
            if unlink(file) != 0, errno != ENOENT {
                throw StorageError(.internalError, "Internal Server Error", internalDetail: "unlink of an object file failed: errno \(errno)")
            }
        }
    }

    /// Creates `path` (mode 0600), writes every byte and fsyncs it.
    static func writeSynced(_ bytes: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw StorageError(.internalError, "Internal Server Error", internalDetail: "open of an object file failed: errno \(errno)") }
        defer { close(fd) }
        var written = 0
        try bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = posixWrite(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    throw StorageError(.internalError, "Internal Server Error", internalDetail: "write of an object file failed: errno \(errno)")
                }
                written += count
            }
        }
        guard fsync(fd) == 0 else { throw StorageError(.internalError, "Internal Server Error", internalDetail: "fsync of an object file failed") }
    }

    static func syncFolder(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = fsync(fd)  // best effort: some filesystems refuse fsync on a directory
    }
}

/// `write(2)` (a free function: inside `FileByteStore`, `write` names the store's own method).
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, buffer, count)
    #else
    Darwin.write(fd, buffer, count)
    #endif
}
