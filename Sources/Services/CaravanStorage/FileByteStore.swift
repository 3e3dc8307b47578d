package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Object bytes as files under a directory (`<data dir>/storage/<2 hex>/<version>`). A write goes to a temporary
/// file in the same folder, is fsynced, then renamed into place and the folder fsynced: a crash leaves either no
/// file or the whole file under the version's name, never half of one. (A crash may leave a temporary file, or a
/// complete file no metadata row points at; neither is ever served, and `removeOrphans(keeping:)` sweeps both at start.)
package struct FileByteStore: ObjectByteStore {
    package let directory: URL

    package init(directory: URL) {
        self.directory = directory
    }

    func folder(of version: ObjectVersion) -> URL {
        directory.appendingPathComponent(String(version.id.prefix(2)), isDirectory: true)
    }

    func path(of version: ObjectVersion) -> URL {
        folder(of: version).appendingPathComponent(version.id)
    }

    package func write(_ bytes: Data, version: ObjectVersion) async throws {
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

    package func read(_ version: ObjectVersion) async throws -> Data? {
        let file = path(of: version).path
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }

    package func remove(_ versions: [ObjectVersion]) async throws {
        for version in versions {
            let file = path(of: version).path
            if unlink(file) != 0, errno != ENOENT {
                throw StorageError(.internalError, "Internal Server Error", internalDetail: "unlink of an object file failed: errno \(errno)")
            }
        }
    }

    /// What `removeOrphans(keeping:)` removed.
    package struct Sweep: Sendable, Hashable {
        /// Complete files of versions no row points at (a crash between the rename and the row's commit).
        package var orphans = 0
        /// Temporary files of interrupted writes.
        package var temporary = 0

        package init(orphans: Int = 0, temporary: Int = 0) {
            self.orphans = orphans
            self.temporary = temporary
        }
    }

    /// Removes what a crash can leave under the directory: temporary files (`.tmp-<version>`) and the files of
    /// versions not in `keeping` (the versions the metadata rows point at). Files whose names are not versions are
    /// not Caravan's and are left alone. Only call it while nothing writes objects (at start, before serving).
    package func removeOrphans(keeping versions: Set<ObjectVersion>) throws -> Sweep {
        var sweep = Sweep()
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: directory.path) else { return sweep }
        let folders: [String]
        do {
            folders = try fileManager.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "the storage folder cannot be listed: \(error)")
        }
        for folder in folders.sorted() where folder.count == 2 {
            let folderURL = directory.appendingPathComponent(folder, isDirectory: true)
            guard let names = try? fileManager.contentsOfDirectory(atPath: folderURL.path) else { continue }  // a file, not a folder: not Caravan's
            var removed = false
            for name in names {
                let temporary = name.hasPrefix(".tmp-") && ObjectVersion(String(name.dropFirst(".tmp-".count))) != nil
                if !temporary {
                    guard let version = ObjectVersion(name), version.id == name, version.id.hasPrefix(folder), !versions.contains(version) else { continue }
                }
                let path = folderURL.appendingPathComponent(name).path
                guard unlink(path) == 0 || errno == ENOENT else {
                    throw StorageError(.internalError, "Internal Server Error", internalDetail: "unlink of an orphaned object file failed: errno \(errno)")
                }
                if temporary { sweep.temporary += 1 } else { sweep.orphans += 1 }
                removed = true
            }
            if removed { try Self.syncFolder(folderURL.path) }
        }
        return sweep
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
