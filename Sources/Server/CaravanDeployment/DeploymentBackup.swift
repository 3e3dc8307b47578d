package import CaravanCore
import CaravanPostgres
import CaravanSQLite
import Foundation
import ZIPFoundation

/// A step of a backup or restore, for a progress bar: `done` of `total` units (pages, tables or bytes) of `phase`.
package struct BackupProgress: Sendable {
    package let phase: String
    package let done: Int
    package let total: Int
}

/// `caravan backup`: one file (a ZIP archive, mode 0600: it holds password hashes and the signing secret) with
/// `manifest.json` and the database — for SQLite a copy made by the online backup API while the deployment serves,
/// for PostgreSQL `pg_dump --format=custom` of an exported snapshot. Each table's rows and checksum are computed from
/// exactly the state that was copied (the copy itself, or the same snapshot), so a restore can prove it reproduced it.
package struct DeploymentBackup: Sendable {
    package let deployment: Deployment
    /// Every table to checksum (the signing-secret table aside: it is compared separately).
    package let tables: [TableSchema]
    package let now: @Sendable () -> Int64

    package init(deployment: Deployment, catalog: Catalog, now: @escaping @Sendable () -> Int64) {
        self.deployment = deployment
        self.tables = Self.checkedTables(catalog)
        self.now = now
    }

    static func checkedTables(_ catalog: Catalog) -> [TableSchema] {
        (catalog.allTables + [SystemModule.changeLog]).filter { $0.name != SystemModule.secrets.name }
    }

    /// Writes the backup to `output` (which must not exist; written beside it and renamed, so it is never half there).
    package func run(to output: String, progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> BackupManifest {
        guard !FileManager.default.fileExists(atPath: output) else {
            throw DeploymentError(.outputExists, "\(output) already exists; choose another name")
        }
        let outputURL = URL(fileURLWithPath: output)
        let work = outputURL.deletingLastPathComponent().appendingPathComponent(".\(outputURL.lastPathComponent).partial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: work) }
        let manifest: BackupManifest
        switch deployment.location {
        case .directory(let directory):
            manifest = try await backupSQLite(directory: directory, into: work, progress: progress)
        case .database(let configuration):
            manifest = try await backupPostgres(configuration, into: work, progress: progress)
        }
        try Data(manifest.json.jsonText.utf8).write(to: work.appendingPathComponent(BackupManifest.entry))
        let objectFiles = StorageFiles.versionsOnDisk(in: work).map(StorageFiles.entry).sorted()
        try Self.archive(work, entries: [BackupManifest.entry, manifest.payload.entry, BackupManifest.secretEntry] + objectFiles,
                         to: outputURL, progress: progress)
        return manifest
    }

    private func backupSQLite(directory: String, into work: URL, progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> BackupManifest {
        guard let store = deployment.sqliteStore else {
            throw DeploymentError(.unsupportedEngine, "the deployment's store is not SQLite")
        }
        let copyPath = work.appendingPathComponent(BackupManifest.Payload.sqlite.entry).path
        let createdAt = now()
        // Object bytes, first pass: link every object file there is before the snapshot starts. Bytes are written
        // before the row that points at them commits and removed only after a later commit, so every file the
        // snapshot's rows name exists now or is written before the snapshot; the second pass links those.
        let dataDirectory = URL(fileURLWithPath: directory, isDirectory: true)
        _ = try StorageFiles.link(StorageFiles.versionsOnDisk(in: dataDirectory), from: dataDirectory, to: work)
        try store.backup(to: copyPath) { done, total in progress(BackupProgress(phase: "copy", done: done, total: total)) }
        if let secret = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent(BackupManifest.secretEntry)) {
            try secret.write(to: work.appendingPathComponent(BackupManifest.secretEntry))
        }
        let copy = try SQLiteStore(path: copyPath)
        do {
            let sums = try await checksums { try await copy.fetch($0) } progress: { progress($0) }
            let migrations = try await copy.appliedMigrations()
            let storage = try await objectFiles(referencedBy: copy, in: dataDirectory, into: work)
            try copy.close()
            return BackupManifest(payload: .sqlite, createdAt: createdAt, migrations: migrations, tables: sums, storage: storage)
        } catch {
            try? copy.close()
            throw error
        }
    }

    /// Object bytes, second pass: exactly the versions the copy's `storage_objects` rows name end up in `work`
    /// (those written since the first pass are linked now; files no row of the copy names are dropped), with their
    /// summary. A version whose file is gone (replaced or deleted by a write racing the backup) is `storageIncomplete`.
    private func objectFiles(referencedBy copy: SQLiteStore, in dataDirectory: URL, into work: URL) async throws -> BackupManifest.Storage {
        let referenced = try await StorageFiles.referencedVersions { try await copy.fetch($0) }
        let present = try StorageFiles.link(referenced, from: dataDirectory, to: work)
        if let missing = Set(referenced).subtracting(present).first {
            throw DeploymentError(.storageIncomplete, "the bytes of object version \(missing) disappeared during the backup (a write replaced or deleted the object); take the backup again")
        }
        let wanted = Set(referenced)
        for version in StorageFiles.versionsOnDisk(in: work) where !wanted.contains(version) {
            try FileManager.default.removeItem(at: work.appendingPathComponent(StorageFiles.entry(version)))
        }
        return try await StorageFiles.summary(of: referenced) { StorageFiles.read($0, in: work) }
    }

    private func backupPostgres(_ configuration: PostgresStoreConfiguration, into work: URL,
                                progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> BackupManifest {
        guard let store = deployment.postgresStore else {
            throw DeploymentError(.unsupportedEngine, "the deployment's store is not PostgreSQL")
        }
        guard let tool = PostgresDumpTool.locate() else {
            throw DeploymentError(.toolMissing, "pg_dump and pg_restore were not found on PATH or in /usr/lib/postgresql/*/bin; install the PostgreSQL client tools")
        }
        let migrations = try await store.appliedMigrations()
        let dumpPath = work.appendingPathComponent(BackupManifest.Payload.pgDump.entry).path
        let createdAt = now()
        let sums = try await store.withExportedSnapshot { snapshot, reader in
            progress(BackupProgress(phase: "pg_dump", done: 0, total: 1))
            try await tool.dump(configuration, snapshot: snapshot, to: dumpPath)
            progress(BackupProgress(phase: "pg_dump", done: 1, total: 1))
            return try await checksums { try await reader.fetch($0) } progress: { progress($0) }
        }
        return BackupManifest(payload: .pgDump, createdAt: createdAt, migrations: migrations, tables: sums)
    }

    /// Every checked table's rows and checksum, read through `fetch`.
    func checksums(_ fetch: @escaping @Sendable (ReadPlan) async throws -> ReadResult,
                   progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> [BackupManifest.Table] {
        var result: [BackupManifest.Table] = []
        for (index, table) in tables.enumerated() {
            var sum = TableChecksum()
            try await TableReader(fetch: fetch, table: table, pageSize: 1000).forEachPage { rows in
                for row in rows { try sum.add(row, of: table) }
            }
            result.append(BackupManifest.Table(name: table.name, rows: sum.rows, checksum: sum.hex))
            progress(BackupProgress(phase: "checksum", done: index + 1, total: tables.count))
        }
        return result
    }

    /// Zips the `entries` of `directory` that exist (stored, not compressed) into `output` via a temporary file,
    /// flushed to disk and renamed.
    static func archive(_ directory: URL, entries: [String], to output: URL,
                        progress: @escaping @Sendable (BackupProgress) -> Void) throws {
        let partial = directory.appendingPathComponent("archive.zip")
        try writeEntries(entries, of: directory, to: partial, progress: progress)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: partial.path)
        let handle = try FileHandle(forUpdating: partial)
        try handle.synchronize()
        try handle.close()
        try FileManager.default.moveItem(at: partial, to: output)
    }

    /// Writes the archive; it is closed (its buffers written) when this returns.
    private static func writeEntries(_ entries: [String], of directory: URL, to archiveURL: URL,
                                     progress: @escaping @Sendable (BackupProgress) -> Void) throws {
        let archive = try Archive(url: archiveURL, accessMode: .create)
        let present = entries.filter { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
        for (index, entry) in present.enumerated() {
            try archive.addEntry(with: entry, fileURL: directory.appendingPathComponent(entry), compressionMethod: .none)
            progress(BackupProgress(phase: "archive", done: index + 1, total: present.count))
        }
    }
}
