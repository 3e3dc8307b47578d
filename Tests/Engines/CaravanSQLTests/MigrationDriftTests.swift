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

    /// A module whose migrations all declare their changes: those changes, folded, produce exactly the tables the
    /// module declares — a declaration changed without its migration (`caravan migrations new`) fails here.
    /// (Not yet LanguageExchange: its `language-exchange-0002-match-order` index is declared beside `profiles`, not in
    /// its `indexes`, so the tables it declares lack that index.)
    @Test(arguments: modules.filter { $0.migrations.allSatisfy { !$0.changes.isEmpty } && $0.name != "language_exchange" }.map(\.name))
    func theDeclarationsAreWhatTheMigrationsProduce(app: String) throws {
        let module = try #require(Self.modules.first { $0.name == app })
        let produced = try SchemaModel(folding: module.migrations)
        #expect(try SchemaDiff.changes(from: produced.tables, to: module.tables, removals: module.removals) == [])
    }

    /// The frozen files are compiled into each module (the EmbedFiles build plugin): every `.sql` file committed under a
    /// module's `Migrations/` folder is one of its migrations, byte for byte, and no migration has SQL from elsewhere.
    @Test func theCompiledInMigrationsAreTheCommittedFilesByteForByte() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let folders: [(AppModule, String)] = [
            (SystemModule.module, "Core/CaravanCore"), (AuthModule.module, "Services/CaravanAuth"), (StorageModule.module, "Services/CaravanStorage"),
            (PlacesModule.module, "Apps/Places/Places"), (TravelLogModule.module, "Apps/TravelLog/TravelLog"),
            (GroupDecisionsModule.module, "Apps/GroupDecisions/GroupDecisions"), (LanguageExchangeModule.module, "Apps/LanguageExchange/LanguageExchange"),
        ]
        for (module, folder) in folders {
            var committed: [String: String] = [:]
            for dialect in SQLDialect.allCases {
                let directory = sources.appendingPathComponent(folder).appendingPathComponent("Migrations").appendingPathComponent(dialect.rawValue)
                for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".sql") {
                    let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
                    committed["\(dialect.rawValue)/\(file)"] = String(decoding: bytes, as: UTF8.self)
                }
            }
            var compiled: [String: String] = [:]
            for migration in module.migrations {
                for (dialect, sql) in migration.sql { compiled["\(dialect.rawValue)/\(migration.id).sql"] = sql }
            }
            #expect(!committed.isEmpty, "\(folder) has migration files")
            #expect(compiled == committed, "\(folder): the compiled-in migrations differ from the committed files")
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
