package import CaravanCore
import CaravanSQL
import CaravanPostgres
package import CaravanSQLite
import Foundation

/// A fresh SQLite store in its own temporary directory.
/// The system migrations (users, change log) run first unless `includeSystem` is false; duplicates are skipped.
package func makeTemporaryStore(migrations: [Migration] = [], includeSystem: Bool = true) async throws -> (SQLiteStore, String) {
    let directory = NSTemporaryDirectory() + "caravan-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let store = try SQLiteStore(path: directory + "/caravan.sqlite")
    let system = includeSystem ? SystemModule.migrations.filter { m in !migrations.contains(where: { $0.id == m.id }) } : []
    _ = try await store.migrate(system + migrations)
    return (store, directory)
}

/// The repository's `../shared/data` directory, or nil when it is absent.
package func sharedDataFile(_ relative: String) -> String? {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let path = root.deletingLastPathComponent().appendingPathComponent("shared/data/" + relative).path
    return FileManager.default.fileExists(atPath: path) ? path : nil
}

/// A migration creating `tables`, rendered for both engines.
package func renderedMigration(_ id: String, _ tables: [TableSchema]) throws -> Migration {
    Migration(id: id, sql: [
        .sqlite: try tables.flatMap(SQLSchema<SQLiteSyntax>.createTable).joined(separator: ";\n"),
        .postgres: try tables.flatMap(SQLSchema<PostgresSyntax>.createTable).joined(separator: ";\n"),
    ])
}

extension Store {
    /// Upserts rows as the service role through the write pipeline's per-row path (test setup).
    package func upsert(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String], catalog: Catalog = Catalog(modules: [])) async throws -> [RowOutcome] {
        try await transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { transaction in
            try await transaction.upsertEach(rows, into: table, conflictColumns: conflictColumns)
        }.0
    }
}
