import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanSQL
import CaravanSQLite
import Foundation
import GRDB
import Places
import Testing

@Suite("Frozen migrations")
struct MigrationTests {
    let catalog = Catalog(modules: [SystemModule.module, AuthModule.module, PlacesModule.module])

    @Test func migrationsRunOnceAndInOrder() async throws {
        let (store, _) = try await makeTemporaryStore(includeSystem: false)
        let first = try await store.migrate(catalog.migrations)
        #expect(first == ["system-0001-users", "system-0002-change-log", "system-0003-users-auth", "system-0004-secrets", "system-0005-sync", "auth-0001-create", "places-0001-create", "places-0002-search", "places-0003-search-postgres", "places-0004-search-plans", "system-0006-auth-users", "system-0007-search-functions", "auth-0002-flow-state", "auth-0003-mfa", "places-0005-derived-by-pipeline"])
        #expect(try await store.migrate(catalog.migrations).isEmpty)
        #expect(try await store.appliedMigrations() == first)
    }

    /// Instances starting together on one file (a pool each, as separate processes have): the database's write lock,
    /// taken by BEGIN IMMEDIATE for the whole run, lets exactly one of them apply each migration; the others wait,
    /// then find them applied (GRDB's migrator read the applied ids before taking the lock).
    @Test func concurrentInstancesApplyEachMigrationOnce() async throws {
        let directory = NSTemporaryDirectory() + "caravan-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let stores = try (0..<6).map { _ in try SQLiteStore(path: directory + "/caravan.sqlite") }
        let migrations = catalog.migrations
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for store in stores { group.addTask { try await store.migrate(migrations) } }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(applied.sorted() == migrations.map(\.id).sorted())
        #expect(try await stores[0].appliedMigrations() == migrations.map(\.id))
    }

    /// A failing migration applies nothing of the run it is in (one transaction), and the store can migrate again.
    @Test func aFailingMigrationLeavesTheDatabaseAsItWas() async throws {
        let (store, _) = try await makeTemporaryStore(includeSystem: false)
        let good = Migration(id: "t-0001", sql: [.sqlite: "CREATE TABLE t (id INTEGER PRIMARY KEY);\n"])
        let bad = Migration(id: "t-0002", sql: [.sqlite: "CREATE TABLE t (id INTEGER PRIMARY KEY);\n"])
        await #expect(throws: (any Error).self) { try await store.migrate([good, bad]) }
        #expect(try await store.appliedMigrations().isEmpty)
        #expect(try await store.migrate([good]) == ["t-0001"])
    }

    /// Drift check: the database the frozen SQL builds matches the schema model, column by column.
    @Test func migratedDatabaseMatchesTheSchemaModel() async throws {
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        for table in catalog.allTables {
            let columns = try await store.unsafeRead { db in try db.columns(in: table.name) }
            #expect(columns.map(\.name) == table.columns.map(\.name), "columns of \(table.name)")
            for (info, column) in zip(columns, table.columns) {
                #expect(info.isNotNull == !column.isNullable, "\(table.name).\(column.name) nullability")
                #expect((info.defaultValueSQL != nil) == (column.defaultValue != nil), "\(table.name).\(column.name) default")
            }
            let primaryKey = try await store.unsafeRead { db in try db.primaryKey(table.name).columns }
            #expect(primaryKey == table.primaryKey)
            let indexes = try await store.unsafeRead { db in try db.indexes(on: table.name).map(\.name) }
            for index in table.indexes where index.kind == .btree {
                #expect(indexes.contains(index.name), "index \(index.name)")
            }
            let foreignKeys = try await store.unsafeRead { db in try db.foreignKeys(on: table.name).map(\.destinationTable) }
            #expect(Set(foreignKeys) == Set(table.foreignKeys.map(\.referencedTable)))
        }
    }

    @Test func rendererAndFrozenSQLAgreeOnTheFirstMigration() throws {
        // While places-0001 is the only migration, the renderer reproduces its tables statement for statement.
        // Shipped before system-0006: the users table had its old name then.
        guard let frozen = PlacesMigrations.all.first?.sql[.sqlite]?.replacingOccurrences(of: #"REFERENCES "users""#, with: #"REFERENCES "auth_users""#) else {
            Issue.record("no SQLite migration"); return
        }
        for table in PlacesSchema.tables {
            for statement in try SQLSchema<SQLiteSyntax>.createTable(table) {
                #expect(frozen.contains(statement), "frozen SQL lacks: \(statement.prefix(80))")
            }
        }
    }
}
