import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import Foundation
import Places
import Testing

@Suite("Frozen migrations on PostgreSQL")
struct PostgresMigrationTests {
    let catalog = Catalog(modules: [SystemModule.module, AuthModule.module, PlacesModule.module])

    @Test func migrationsRunOnceAndInOrder() async throws {
        let store = try await Engine.makePostgresStore()
        #expect(try await store.appliedMigrations().isEmpty)
        let first = try await store.migrate(catalog.migrations)
        #expect(first == ["system-0001-users", "system-0002-change-log", "system-0003-users-auth", "system-0004-secrets", "system-0005-sync", "auth-0001-create", "places-0001-create", "places-0002-search", "places-0003-search-postgres", "places-0004-search-plans", "system-0006-auth-users", "system-0007-search-functions", "auth-0002-flow-state", "auth-0003-mfa", "places-0005-derived-by-pipeline"])
        #expect(try await store.migrate(catalog.migrations).isEmpty)
        #expect(try await store.appliedMigrations() == first)
    }

    /// Instances starting together: the advisory lock lets exactly one of them apply each migration.
    @Test func concurrentInstancesApplyEachMigrationOnce() async throws {
        let first = try await Engine.makePostgresStore()
        let second = PostgresStore(configuration: first.configuration)
        await second.start()
        defer { Task { await second.shutdown() } }
        let migrations = catalog.migrations
        async let a = first.migrate(migrations)
        async let b = second.migrate(migrations)
        let (appliedByA, appliedByB) = try await (a, b)
        #expect((appliedByA + appliedByB).sorted() == migrations.map(\.id).sorted())
        #expect(try await first.appliedMigrations() == migrations.map(\.id))
    }

    @Test func aMigrationWithoutPostgresSQLIsRefused() async throws {
        let store = try await Engine.makePostgresStore()
        await #expect(throws: CaravanError.self) {
            try await store.migrate([Migration(id: "sqlite-only", sql: [.sqlite: "SELECT 1"])])
        }
        #expect(try await store.appliedMigrations().isEmpty)
    }

    /// Drift check: the database the frozen SQL builds matches the schema model, column by column.
    @Test func migratedDatabaseMatchesTheSchemaModel() async throws {
        let store = try await Engine.makePostgresStore()
        _ = try await store.migrate(catalog.migrations)
        for table in catalog.allTables {
            let columns = try await store.unsafeRows("""
                SELECT column_name::text, is_nullable::text, (column_default IS NOT NULL)::text, udt_name::text FROM information_schema.columns
                WHERE table_schema = 'public' AND table_name = '\(table.name)' ORDER BY ordinal_position
                """)
            #expect(columns.map { $0[0] } == table.columns.map(\.name), "columns of \(table.name)")
            for (info, column) in zip(columns, table.columns) {
                #expect(info[1] == (column.isNullable ? "YES" : "NO"), "\(table.name).\(column.name) nullability")
                #expect(info[2] == (column.defaultValue != nil ? "true" : "false"), "\(table.name).\(column.name) default")
                #expect(info[3] == column.type.postgresName, "\(table.name).\(column.name) type")
            }
            let primaryKey = try await store.unsafeRows("""
                SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = '\(table.name)'::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
                """).map { $0[0] }
            #expect(primaryKey == table.primaryKey)
            let indexes = Set(try await store.unsafeRows("SELECT indexname::text FROM pg_indexes WHERE tablename = '\(table.name)'").compactMap { $0[0] })
            for index in table.indexes {
                #expect(indexes.contains(index.name), "index \(index.name)")
            }
            let foreignKeys = try await store.unsafeRows("""
                SELECT confrelid::regclass::text FROM pg_constraint WHERE conrelid = '\(table.name)'::regclass AND contype = 'f'
                """).compactMap { $0[0] }
            #expect(Set(foreignKeys) == Set(table.foreignKeys.map(\.referencedTable)))
        }
        let gin = try await store.unsafeRows("SELECT indexdef::text FROM pg_indexes WHERE indexname = 'idx_places_tags'")
        #expect(gin.first?.first??.contains("USING gin") == true)
    }

    @Test func rendererAndFrozenSQLAgree() throws {
        let frozen = [
            (PlacesMigrations.all.first { $0.id == "places-0001-create" }, PlacesSchema.tables),
            (AuthModule.migrations.first { $0.id == "auth-0001-create" }, AuthSchema.tables.filter { table in table.name != AuthSchema.flowState.name && !AuthSchema.mfaTables.contains { $0.name == table.name } }),
            (AuthModule.migrations.first { $0.id == "auth-0002-flow-state" }, [AuthSchema.flowState]),
            (AuthModule.migrations.first { $0.id == "auth-0003-mfa" }, AuthSchema.mfaTables),
        ]
        for (migration, tables) in frozen {
            // Shipped before system-0006: the users table had its old name then.
            guard let sql = migration?.sql[.postgres]?.replacingOccurrences(of: #"REFERENCES "users""#, with: #"REFERENCES "auth_users""#) else {
                Issue.record("no PostgreSQL migration"); continue
            }
            for table in tables {
                for statement in try SQLSchema<PostgresSyntax>.createTable(table) {
                    #expect(sql.contains(statement), "frozen SQL lacks: \(statement.prefix(80))")
                }
            }
        }
    }

    @Test func everyMigrationHasBothDialects() {
        for migration in catalog.migrations {
            // Its own SQL per dialect, or (system migrations declared without SQL) the adapter's.
            #expect(SQLSchema<SQLiteSyntax>.sql(of: migration) != nil && SQLSchema<PostgresSyntax>.sql(of: migration) != nil, "\(migration.id)")
        }
    }
}

/// The test harness itself: PostgreSQL stores cloned from a migrated template, and a run that requires PostgreSQL
/// failing instead of skipping.
@Suite struct PostgresTestHarnessTests {
    @Test func storesWithTheSameMigrationsAreClonedFromOneMigratedTemplate() async throws {
        let migrations = SystemModule.migrations + AuthModule.migrations
        let first = try await Engine.makePostgresStore(cloning: migrations)
        let second = try await Engine.makePostgresStore(cloning: migrations)
        #expect(first.configuration.database != second.configuration.database, "each test gets its own database")
        for store in [first, second] {
            #expect(try await store.appliedMigrations() == Migration.applyOrder(migrations).map(\.id), "the copy is migrated")
            #expect(try await store.migrate(migrations).isEmpty, "and has nothing left to apply")
        }
        // The copies are independent: a row in one is not in the other.
        _ = try await first.unsafeRows(#"INSERT INTO "auth_users" ("email") VALUES ('only@first.test')"#)
        #expect(try await second.unsafeRows(#"SELECT count(*)::text FROM "auth_users""#).first?.first == "0")
    }

    @Test func aRunThatRequiresPostgreSQLFailsInsteadOfSkipping() throws {
        let failure = #expect(throws: CaravanError.self) {
            try Engine.skipWithoutPostgres("harness check", environment: ["CARAVAN_REQUIRE_POSTGRES": "1"])
        }
        #expect(failure?.message.contains("CARAVAN_REQUIRE_POSTGRES=1") == true)
        #expect(failure?.message.contains("harness check SKIPPED") == true)
    }
}
