import CaravanCore
import CaravanStorage
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The object bytes of a SQLite deployment (`<data dir>/storage/<2 hex>/<version>`, see `FileByteStore`) as a
/// backup carries them: under `storage/` in the archive, exactly the versions the backed-up `storage_objects` rows
/// point at, with a summary (files, bytes, checksum) in the manifest that a restore recomputes.
enum StorageFiles {
    /// The folder in the data directory and in the archive.
    static let folder = "storage"

    /// The relative path of a version's file (`storage/ab/ab12…`).
    static func entry(_ version: ObjectVersion) -> String { "\(folder)/\(version.id.prefix(2))/\(version.id)" }

    /// Hard-links (or, across filesystems, copies) the file of each of `versions` that `source` holds and
    /// `target` lacks into `target` (a data directory or a backup's work folder); returns the versions now in `target`.
    /// Linking is cheap and safe: a version's file is never written again once renamed into place.
    static func link(_ versions: [ObjectVersion], from source: URL, to target: URL) throws -> Set<ObjectVersion> {
        var present = Set<ObjectVersion>()
        let fileManager = FileManager.default
        for version in versions {
            let from = source.appendingPathComponent(entry(version)), to = target.appendingPathComponent(entry(version))
            if fileManager.fileExists(atPath: to.path) { present.insert(version); continue }
            guard fileManager.fileExists(atPath: from.path) else { continue }
            try fileManager.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            if posixLink(from.path, to.path) != 0 {
                let code = errno
                if code == ENOENT { continue }  // removed meanwhile (its object was replaced or deleted)
                guard code == EXDEV || code == EPERM else {
                    throw DeploymentError(.invalidBackup, "an object file could not be linked into place (errno \(code))")
                }
                do {
                    try fileManager.copyItem(at: from, to: to)
                } catch {
                    if !fileManager.fileExists(atPath: from.path) { continue }  // removed meanwhile
                    throw error
                }
            }
            present.insert(version)
        }
        return present
    }

    /// Every version whose file is under `directory`'s storage folder (temporary files aside).
    static func versionsOnDisk(in directory: URL) -> [ObjectVersion] {
        let root = directory.appendingPathComponent(folder, isDirectory: true)
        let fileManager = FileManager.default
        guard let folders = try? fileManager.contentsOfDirectory(atPath: root.path) else { return [] }  // no folder: no objects yet
        var versions: [ObjectVersion] = []
        for sub in folders where sub.count == 2 {
            // A file where a folder would be is not Caravan's: nothing to list in it.
            for name in (try? fileManager.contentsOfDirectory(atPath: root.appendingPathComponent(sub).path)) ?? [] {
                if let version = ObjectVersion(name), version.id == name { versions.append(version) }
            }
        }
        return versions
    }

    /// The versions the `storage_objects` rows read through `fetch` point at.
    static func referencedVersions(_ fetch: @escaping @Sendable (ReadPlan) async throws -> ReadResult) async throws -> [ObjectVersion] {
        let table = StorageSchema.objects
        guard let position = table.position(of: "version") else { return [] }
        var versions: [ObjectVersion] = []
        try await TableReader(fetch: fetch, table: table, pageSize: 1000).forEachPage { rows in
            for row in rows {
                guard let text = row[position].textValue, let version = ObjectVersion(text) else {
                    throw DeploymentError(.invalidBackup, "a storage_objects row has no valid version")
                }
                versions.append(version)
            }
        }
        return versions
    }

    /// Files, bytes and a checksum (SHA-256 over `version sha256(bytes)` lines in version order) of `versions`,
    /// their bytes read through `read`; a missing one is `storageIncomplete`, naming the version.
    static func summary(of versions: [ObjectVersion], read: (ObjectVersion) async throws -> Data?) async throws -> BackupManifest.Storage {
        var total: Int64 = 0
        var digest = SHA256()
        let distinct = Set(versions).sorted(by: { $0.id < $1.id })
        for version in distinct {
            guard let data = try await read(version) else {
                throw DeploymentError(.storageIncomplete, "the bytes of object version \(version) are missing")
            }
            total += Int64(data.count)
            let line = "\(version.id) \(SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined())\n"
            digest.update(data: Data(line.utf8))
        }
        return BackupManifest.Storage(files: distinct.count, bytes: total, checksum: digest.finalize().map { String(format: "%02x", $0) }.joined())
    }

    /// Writes the files of `versions` under `directory` as `storage_object_chunks` rows of `store` (a PostgreSQL
    /// deployment keeps object bytes in the database), then reads back the versions the store's rows point at and
    /// returns their summary.
    static func loadIntoDatabase(_ versions: [ObjectVersion], from directory: URL, store: any Store, catalog: Catalog) async throws -> BackupManifest.Storage {
        let chunks = DatabaseByteStore(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), catalog: catalog)
        for version in Set(versions).sorted(by: { $0.id < $1.id }) {
            guard let data = read(version, in: directory) else {
                throw DeploymentError(.storageIncomplete, "the bytes of object version \(version) are missing from \(directory.path)")
            }
            try await chunks.write(data, version: version)
        }
        let referenced = try await referencedVersions { try await store.fetch($0) }
        return try await summary(of: referenced) { try await chunks.read($0) }
    }

    /// The bytes of `version` in the storage folder under `directory`, or nil.
    static func read(_ version: ObjectVersion, in directory: URL) -> Data? {
        FileManager.default.contents(atPath: directory.appendingPathComponent(entry(version)).path)
    }

    /// The report line of the object files: the backup's summary beside the restored one.
    static func reportLine(_ expected: BackupManifest.Storage, _ restored: BackupManifest.Storage) -> CopyReport.Table {
        CopyReport.Table(name: "storage (object bytes)", sourceRows: expected.files, targetRows: restored.files,
                         sourceChecksum: expected.checksum, targetChecksum: restored.checksum)
    }
}

/// `link(2)`.
private func posixLink(_ from: String, _ to: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.link(from, to)
    #else
    Darwin.link(from, to)
    #endif
}
