package import CaravanAuth
package import CaravanCore
import CaravanStorage
import Foundation

/// Moves a deployment into an empty database: every table's rows, in dependency order, in batches, inside one
/// transaction on the target, then verifies each table's count and checksum read back through the storage port.
///
/// The target's schema must be migrated first (`Deployment.open` does it). Rows are copied verbatim (see
/// `BulkLoadingStore`): password hashes, the change log with its `seq` values (the identity sequence then moves past
/// them), and the signing secret, so tokens issued by the source stay valid on the target.
package struct DeploymentCopier: Sendable {
    package let source: any Store
    /// The source's signing secret when it lives outside its store (a SQLite deployment's `jwt_secret.json`); it
    /// becomes the target's `caravan_secrets` row `jwt`.
    package let sourceSecret: SigningSecret?
    package let target: any BulkLoadingStore
    /// Every table to copy; the change log is added.
    package let tables: [TableSchema]
    package let batchSize: Int

    package init(source: any Store, sourceSecret: SigningSecret?, target: any BulkLoadingStore, catalog: Catalog, batchSize: Int = 1000) {
        self.source = source
        self.sourceSecret = sourceSecret
        self.target = target
        self.tables = catalog.allTables + [SystemModule.changeLog]
        self.batchSize = max(1, batchSize)
    }

    /// Copies and verifies. Throws `targetNotEmpty` when a table of the target has rows and `force` is false; with
    /// `force` the target's rows are removed first, in the same transaction. A checksum mismatch is in the report
    /// (`mismatches`), not thrown, so the caller can print the whole report first.
    package func run(force: Bool) async throws -> CopyReport {
        let ordered = try TableOrder.dependencyOrder(tables)
        let occupied = try await occupiedTables(ordered)
        if !occupied.isEmpty && !force {
            throw DeploymentError(.targetNotEmpty, "the target database already holds rows (\(occupied.joined(separator: ", "))); pass --force to replace them")
        }
        let secretRows = sourceSecret.map { [$0.databaseRow] }
        let source = self.source
        let batchSize = self.batchSize
        let sourceSums = try await target.withBulkLoad { loader in
            if force {
                try await loader.removeAllRows(of: ordered)
            } else if secretRows != nil {
                try await loader.removeAllRows(of: [SystemModule.secrets])
            }
            var sums: [String: TableChecksum] = [:]
            for table in ordered {
                var sum = TableChecksum()
                if table.name == SystemModule.secrets.name, let secretRows {
                    for row in secretRows { try sum.add(row, of: table) }
                    try await loader.insert(secretRows, into: table)
                } else {
                    try await TableReader(store: source, table: table, pageSize: batchSize).forEachPage { rows in
                        for row in rows { try sum.add(row, of: table) }
                        try await loader.insert(rows, into: table)
                    }
                }
                try await loader.resetIdentity(of: table)
                sums[table.name] = sum
            }
            return sums
        }
        var report: [CopyReport.Table] = []
        for table in ordered {
            let copied = try await Self.checksum(of: table, in: target, pageSize: batchSize)
            let original = sourceSums[table.name] ?? TableChecksum()
            report.append(CopyReport.Table(name: table.name, sourceRows: original.rows, targetRows: copied.rows,
                                           sourceChecksum: original.hex, targetChecksum: copied.hex))
        }
        return CopyReport(tables: report, replacedExistingRows: force && !occupied.isEmpty)
    }

    /// `run(force:)` for a SQLite source whose object bytes are files under `dataDirectory/storage/`: they are
    /// checked first (a version a source row names without its file is `storageIncomplete`, before the target is
    /// touched), and after the rows are copied they become `storage_object_chunks` rows of the target (written as
    /// each object's chunks, committed per object), read back and compared: one more report line,
    /// `storage (object bytes)`. A failure after the rows' commit leaves them copied; run again with `--force`.
    package func run(force: Bool, objectFilesIn dataDirectory: String, catalog: Catalog) async throws -> CopyReport {
        let directory = URL(fileURLWithPath: dataDirectory, isDirectory: true)
        let source = self.source
        let versions = try await StorageFiles.referencedVersions { try await source.fetch($0) }
        let expected = try await StorageFiles.summary(of: versions) { StorageFiles.read($0, in: directory) }
        let report = try await run(force: force)
        let copied = try await StorageFiles.loadIntoDatabase(versions, from: directory, store: target, catalog: catalog)
        return CopyReport(tables: report.tables + [StorageFiles.reportLine(expected, copied)], replacedExistingRows: report.replacedExistingRows)
    }

    /// The tables of the target that hold at least one row (the signing secret aside: it is replaced).
    private func occupiedTables(_ tables: [TableSchema]) async throws -> [String] {
        var occupied: [String] = []
        for table in tables where table.name != SystemModule.secrets.name {
            let plan = try ReadPlan(table: table, query: Query(limit: 1), access: .constant(true), maxRows: nil, includeCount: false)
            if try await !target.fetch(plan).rows.isEmpty { occupied.append(table.name) }
        }
        return occupied
    }

    /// A table's count and checksum, read through the storage port.
    static func checksum(of table: TableSchema, in store: any Store, pageSize: Int) async throws -> TableChecksum {
        var sum = TableChecksum()
        try await TableReader(store: store, table: table, pageSize: pageSize).forEachPage { rows in
            for row in rows { try sum.add(row, of: table) }
        }
        return sum
    }
}
