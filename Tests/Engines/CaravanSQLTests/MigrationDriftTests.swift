import CaravanAuth
import CaravanCore
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import CaravanStorage
import Foundation
import GroupDecisions
import LanguageExchange
import Places
import TravelLog
import Testing

/// Frozen migrations and declarations must not drift apart: every shipped migration has a committed file per
/// dialect, and a migration declared as schema changes still renders, byte for byte, to its files. (A renderer
/// change that would alter a shipped migration fails here; ship it as a new migration instead.)
@Suite struct MigrationDriftTests {
    static let modules = [SystemModule.module, AuthModule.module, StorageModule.module, PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, LanguageExchangeModule.module]

    @Test(arguments: modules.flatMap(\.migrations).map(\.id))
    func everyShippedMigrationIsFrozenForBothDialects(id: String) throws {
        let migration = try #require(Self.modules.flatMap(\.migrations).first { $0.id == id })
        for dialect in SQLDialect.allCases {
            let text = try #require(migration.sql[dialect], "\(id) has no frozen \(dialect.rawValue) file")
            #expect(!text.isEmpty)
        }
    }

    @Test func declaredMigrationsRenderToTheirFrozenFiles() throws {
        for migration in Self.modules.flatMap(\.migrations) where !migration.changes.isEmpty {
            #expect(try SQLSchema<SQLiteSyntax>.render(migration.changes) == migration.sql[.sqlite], "\(migration.id) drifted on SQLite")
            #expect(try SQLSchema<PostgresSyntax>.render(migration.changes) == migration.sql[.postgres], "\(migration.id) drifted on PostgreSQL")
        }
    }

    @Test func aDriftedFileIsCaught() throws {
        let table = TableSchema("notes", columns: [Column("id", .integer, nullable: false), Column("body", .text)], primaryKey: ["id"])
        let rendered = try SQLSchema<SQLiteSyntax>.render([.createTable(table)])
        let edited = Migration(id: "notes-0001", changes: [.createTable(table)], sql: [.sqlite: rendered.replacingOccurrences(of: "body", with: "text")])
        #expect(try SQLSchema<SQLiteSyntax>.render(edited.changes) != edited.sql[.sqlite])
        #expect(try SQLSchema<SQLiteSyntax>.render(edited.changes) == rendered)
    }
}
