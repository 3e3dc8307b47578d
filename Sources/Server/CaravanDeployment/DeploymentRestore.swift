import CaravanAuth
package import CaravanCore
import CaravanPostgres
import CaravanSQLite
import CaravanStorage
import Foundation
package import Logging
import ZIPFoundation

/// `caravan restore`: puts a backup (see `DeploymentBackup`) into an empty deployment, gives it a new sync epoch
/// (sync cursors from the backed-up deployment must refetch), and verifies every table's rows and checksum against
/// the backup's manifest. A `caravan.sqlite` backup restores into a data directory or, through `DeploymentCopier`,
/// into a PostgreSQL database; a `pg_dump` backup restores into a PostgreSQL database with `pg_restore`.
package struct DeploymentRestore: Sendable {
    package let catalog: Catalog
    package let logger: Logger
    package let now: @Sendable () -> Int64

    package init(catalog: Catalog, logger: Logger, now: @escaping @Sendable () -> Int64) {
        self.catalog = catalog
        self.logger = logger
        self.now = now
    }

    /// Restores `file` into `target`. A table that differs is in the report (`mismatches`), not thrown.
    package func run(file: String, into target: DeploymentLocation, progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> CopyReport {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("caravan-restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: work) }
        let manifest = try Self.extract(file, into: work, progress: progress)
        switch (manifest.payload, target) {
        case (.sqlite, .directory(let directory)):
            return try await restoreSQLite(manifest, from: work, into: directory, progress: progress)
        case (.sqlite, .database):
            return try await copySQLite(manifest, from: work, into: target, progress: progress)
        case (.pgDump, .database(let configuration)):
            return try await restoreDump(manifest, from: work, into: configuration, progress: progress)
        case (.pgDump, .directory):
            throw DeploymentError(.unsupportedEngine, "a pg_dump backup restores into a PostgreSQL database: pass --database postgres://…")
        }
    }

    /// Extracts the archive's entries into `directory` (the secret file with mode 0600) and reads the manifest.
    static func extract(_ file: String, into directory: URL, progress: @escaping @Sendable (BackupProgress) -> Void) throws -> BackupManifest {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: file), accessMode: .read)
        } catch {
            throw DeploymentError(.invalidBackup, "\(file) cannot be read as a Caravan backup (not a ZIP archive)")
        }
        guard let manifestEntry = archive[BackupManifest.entry] else {
            throw DeploymentError(.invalidBackup, "\(file) is not a Caravan backup (no manifest.json)")
        }
        var manifestBytes: [UInt8] = []
        _ = try archive.extract(manifestEntry) { manifestBytes.append(contentsOf: $0) }
        let manifest = try BackupManifest(parsing: manifestBytes)
        for (index, name) in [manifest.payload.entry, BackupManifest.secretEntry].enumerated() {
            guard let entry = archive[name] else {
                if name == manifest.payload.entry { throw DeploymentError(.invalidBackup, "\(file) lacks its database (\(name))") }
                continue
            }
            let destination = directory.appendingPathComponent(name)
            do {
                _ = try archive.extract(entry, to: destination)
            } catch {
                throw DeploymentError(.invalidBackup, "\(name) in \(file) is damaged (\(error))")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination.path)
            progress(BackupProgress(phase: "extract", done: index + 1, total: 2))
        }
        // Object files: only entries of the exact form storage/<2 hex>/<version>, so no entry can name a path outside.
        for entry in archive where entry.path.hasPrefix(StorageFiles.folder + "/") {
            guard let version = ObjectVersion(String(entry.path.split(separator: "/").last ?? "")), entry.path == StorageFiles.entry(version) else {
                throw DeploymentError(.invalidBackup, "\(file) holds an unexpected entry under storage/")
            }
            let destination = directory.appendingPathComponent(entry.path)
            do {
                _ = try archive.extract(entry, to: destination)
            } catch {
                throw DeploymentError(.invalidBackup, "\(entry.path) in \(file) is damaged (\(error))")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination.path)
        }
        return manifest
    }

    /// The object files extracted into `work` against the manifest's summary (nil when the backup carries none).
    static func checkedObjectFiles(_ manifest: BackupManifest, in work: URL) async throws -> [ObjectVersion] {
        let versions = StorageFiles.versionsOnDisk(in: work)
        guard let expected = manifest.storage else { return versions }
        let found = try await StorageFiles.summary(of: versions) { StorageFiles.read($0, in: work) }
        guard found == expected else {
            throw DeploymentError(.invalidBackup, "the backup's object files differ from its manifest (\(found.files) files, \(expected.files) expected)")
        }
        return versions
    }

    /// SQLite into a data directory: the copy becomes the directory's database (with the secret file), is migrated
    /// to this version and gets a new epoch. Nothing is left behind when it fails.
    private func restoreSQLite(_ manifest: BackupManifest, from work: URL, into directory: String,
                               progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> CopyReport {
        let database = (directory as NSString).appendingPathComponent("caravan.sqlite")
        let secret = (directory as NSString).appendingPathComponent(BackupManifest.secretEntry)
        let target = URL(fileURLWithPath: directory, isDirectory: true)
        guard !FileManager.default.fileExists(atPath: database), !FileManager.default.fileExists(atPath: secret),
              StorageFiles.versionsOnDisk(in: target).isEmpty else {
            throw DeploymentError(.targetNotEmpty, "\(directory) already holds a deployment; restore into an empty directory")
        }
        let versions = try await Self.checkedObjectFiles(manifest, in: work)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            try FileManager.default.moveItem(atPath: work.appendingPathComponent(manifest.payload.entry).path, toPath: database)
            let backupSecret = work.appendingPathComponent(BackupManifest.secretEntry).path
            if FileManager.default.fileExists(atPath: backupSecret) { try FileManager.default.moveItem(atPath: backupSecret, toPath: secret) }
            _ = try StorageFiles.link(versions, from: work, to: target)
            return try await Deployment.withOpened(.directory(directory), migrations: catalog.migrations, logger: logger) { deployment in
                guard let store = deployment.sqliteStore else { throw DeploymentError(.unsupportedEngine, "not a SQLite store") }
                try await store.renewSyncEpoch()
                let report = try await verify(manifest, in: deployment.store, progress: progress)
                guard let expected = manifest.storage else { return report }
                // What the restored rows point at, read back from the restored folder.
                let referenced = try await StorageFiles.referencedVersions { try await store.fetch($0) }
                let restored = try await StorageFiles.summary(of: referenced) { StorageFiles.read($0, in: target) }
                return CopyReport(tables: report.tables + [StorageFiles.reportLine(expected, restored)], replacedExistingRows: false)
            }
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            try? FileManager.default.removeItem(atPath: secret)
            try? FileManager.default.removeItem(at: target.appendingPathComponent(StorageFiles.folder))  // it held no object before
            throw error
        }
    }

    /// SQLite into PostgreSQL: `DeploymentCopier` moves every row (refusing a database that holds rows) and the
    /// secret; then a new epoch and the check against the manifest.
    private func copySQLite(_ manifest: BackupManifest, from work: URL, into target: DeploymentLocation,
                            progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> CopyReport {
        let versions = try await Self.checkedObjectFiles(manifest, in: work)
        let source = work.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in [manifest.payload.entry, BackupManifest.secretEntry] where FileManager.default.fileExists(atPath: work.appendingPathComponent(name).path) {
            try FileManager.default.moveItem(at: work.appendingPathComponent(name), to: source.appendingPathComponent(name))
        }
        let (catalog, logger) = (self.catalog, self.logger)
        return try await Deployment.withOpened(.directory(source.path), migrations: catalog.migrations, logger: logger) { sourceDeployment in
            try await Deployment.withOpened(target, migrations: catalog.migrations, logger: logger, creating: true) { deployment in
                guard let bulk = deployment.postgresStore else { throw DeploymentError(.unsupportedEngine, "not a PostgreSQL store") }
                let copier = DeploymentCopier(source: sourceDeployment.store, sourceSecret: try SigningSecret.existing(in: source.path),
                                              target: bulk, catalog: catalog)
                progress(BackupProgress(phase: "copy", done: 0, total: 1))
                _ = try await copier.run(force: false)
                progress(BackupProgress(phase: "copy", done: 1, total: 1))
                try await bulk.renewSyncEpoch()
                let report = try await verify(manifest, in: bulk, progress: progress)
                guard let expected = manifest.storage else { return report }
                // A PostgreSQL deployment keeps object bytes in the database: the files become chunks (after the
                // table check, which compares the chunk table with the backup's, empty on SQLite).
                let restored = try await StorageFiles.loadIntoDatabase(versions, from: work, store: bulk, catalog: catalog)
                return CopyReport(tables: report.tables + [StorageFiles.reportLine(expected, restored)], replacedExistingRows: false)
            }
        }
    }

    /// pg_dump into PostgreSQL: only into a database with no tables at all; `pg_restore` in one transaction, then
    /// the migrations of this version, a new epoch and the check.
    private func restoreDump(_ manifest: BackupManifest, from work: URL, into configuration: PostgresStoreConfiguration,
                             progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> CopyReport {
        guard let tool = PostgresDumpTool.locate() else {
            throw DeploymentError(.toolMissing, "pg_restore was not found on PATH or in /usr/lib/postgresql/*/bin; install the PostgreSQL client tools")
        }
        let probe = PostgresStore(configuration: configuration, logger: logger)
        await probe.start()
        let relations: Int
        do { relations = try await probe.relationCount() } catch { await probe.shutdown(); throw error }
        await probe.shutdown()
        guard relations == 0 else {
            throw DeploymentError(.targetNotEmpty, "database \(configuration.database) already holds tables; a pg_dump backup restores into an empty database (createdb a new one)")
        }
        progress(BackupProgress(phase: "pg_restore", done: 0, total: 1))
        try await tool.restore(configuration, from: work.appendingPathComponent(manifest.payload.entry).path)
        progress(BackupProgress(phase: "pg_restore", done: 1, total: 1))
        return try await Deployment.withOpened(.database(configuration), migrations: catalog.migrations, logger: logger, creating: true) { deployment in
            guard let store = deployment.postgresStore else { throw DeploymentError(.unsupportedEngine, "not a PostgreSQL store") }
            try await store.renewSyncEpoch()
            return try await verify(manifest, in: store, progress: progress)
        }
    }

    /// Each manifest table's rows and checksum read back from `store`, beside the backup's.
    func verify(_ manifest: BackupManifest, in store: any Store, progress: @escaping @Sendable (BackupProgress) -> Void) async throws -> CopyReport {
        let known = Dictionary((catalog.allTables + [SystemModule.changeLog]).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var tables: [CopyReport.Table] = []
        for (index, expected) in manifest.tables.enumerated() {
            guard let table = known[expected.name] else {
                throw DeploymentError(.invalidBackup, "the backup names table \(expected.name), which this caravan does not know")
            }
            let restored = try await DeploymentCopier.checksum(of: table, in: store, pageSize: 1000)
            tables.append(CopyReport.Table(name: table.name, sourceRows: expected.rows, targetRows: restored.rows,
                                           sourceChecksum: expected.checksum, targetChecksum: restored.hex))
            progress(BackupProgress(phase: "verify", done: index + 1, total: manifest.tables.count))
        }
        return CopyReport(tables: tables, replacedExistingRows: false)
    }
}
