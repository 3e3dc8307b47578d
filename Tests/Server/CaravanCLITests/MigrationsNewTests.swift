@testable import CaravanCLI
import CaravanCore
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import CaravanTesting
import Foundation
import class GRDB.DatabaseQueue
import class GRDB.Row
import Testing

/// A test app in two versions. Version 2 adds a column with a default, an index and a table, and renames a column
/// through a declared change (`renamedFrom:`).
enum TripsApp {
    static let v1Trips = TableSchema(
        "trips",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("name", .text, nullable: false),
            Column("note", .text),
        ],
        primaryKey: ["id"],
        indexes: [Index("idx_trips_owner", [IndexKey("owner")])]
    )
    static let v1 = [v1Trips]
    /// Version 1's migration, frozen beside the golden files of version 2 (`MigrationsNew/<dialect>/`).
    static let create = MigrationFiles(directory: golden).migration("trips-0001-create", changes: [.createTable(v1Trips)])

    static let v2Trips = TableSchema(
        "trips",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("title", .text, nullable: false, renamedFrom: "name"),
            Column("note", .text),
            Column("rating", .integer, nullable: false, default: .value(.integer(0))),
        ],
        primaryKey: ["id"],
        indexes: [Index("idx_trips_owner", [IndexKey("owner")]), Index("idx_trips_owner_rating", [IndexKey("owner"), IndexKey("rating", descending: true)])]
    )
    static let stops = TableSchema(
        "stops",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("trip_id", .uuid, nullable: false),
            Column("label", .text, nullable: false),
            Column("arrives_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["trip_id"], references: "trips", ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("stops_label_not_blank", .column("label", .neq, ""))],
        indexes: [Index("idx_stops_trip", [IndexKey("trip_id")])]
    )
    static let v2 = [v2Trips, stops]

    static func module(tables: [TableSchema], migrations: [Migration] = [create], removals: [SchemaRemoval] = []) -> AppModule {
        AppModule(name: "trips", tables: tables, migrations: migrations, removals: removals)
    }

    /// The app's committed migration files: version 1's, and the golden files of version 2's.
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("MigrationsNew")
    /// Version 2's migration as the app declares it once the files are committed.
    static let addStops = MigrationFiles(directory: golden).migration("trips-0002-v2", after: [create], to: v2)
}

@Suite struct MigrationsNewTests {
    /// `CARAVAN_UPDATE_GOLDEN_MIGRATIONS=1` rewrites the golden files (then read the diff before committing them).
    @Test func versionTwoMatchesTheGoldenFiles() throws {
        let out = URL(fileURLWithPath: temporaryDirectory())
        if ProcessInfo.processInfo.environment["CARAVAN_UPDATE_GOLDEN_MIGRATIONS"] == "1" {
            let v1 = Migration(id: "trips-0001-create", changes: TripsApp.create.changes)
            for dialect in SQLDialect.allCases {
                let folder = TripsApp.golden.appendingPathComponent(dialect.rawValue)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(try MigrationFreezer.render(v1, for: dialect).utf8).write(to: folder.appendingPathComponent("trips-0001-create.sql"))
                try? FileManager.default.removeItem(at: folder.appendingPathComponent("trips-0002-v2.sql"))
            }
            let module = TripsApp.module(tables: TripsApp.v2, migrations: [MigrationFiles(directory: TripsApp.golden).migration("trips-0001-create", changes: v1.changes)])
            _ = try MigrationGenerator.generate(module, into: TripsApp.golden, name: "v2")
        }
        let generated = try MigrationGenerator.generate(TripsApp.module(tables: TripsApp.v2), into: out, name: "v2")
        #expect(generated.id == "trips-0002-v2")
        #expect(generated.files == ["sqlite", "postgres"].map { "\(out.path)/\($0)/trips-0002-v2.sql" })
        #expect(generated.declaration.hasPrefix("MigrationFiles(embedded: EmbeddedFiles.contents).migration(\"trips-0002-v2\", after: "))
        #expect(generated.changes == [
            .renameColumn("name", to: "title", in: "trips"),
            .addColumn(Column("rating", .integer, nullable: false, default: .value(.integer(0))), to: TripsApp.v2Trips),
            .createIndex(TripsApp.v2Trips.indexes[1], on: TripsApp.v2Trips),
            .createTable(TripsApp.stops),
        ])
        for dialect in SQLDialect.allCases {
            let written = try String(contentsOf: out.appendingPathComponent("\(dialect.rawValue)/trips-0002-v2.sql"), encoding: .utf8)
            let golden = try String(contentsOf: TripsApp.golden.appendingPathComponent("\(dialect.rawValue)/trips-0002-v2.sql"), encoding: .utf8)
            #expect(written == golden, "\(dialect.rawValue):\n\(written)")
        }
        // Generating again finds the files there and refuses to overwrite them.
        #expect(throws: CaravanError.self) { try MigrationGenerator.generate(TripsApp.module(tables: TripsApp.v2), into: out, name: "v2") }
    }

    /// Once declared, version 2's migration renders to its committed files (the drift test), and the migrations
    /// fold to exactly the declarations: nothing is left to migrate.
    @Test func theDeclaredMigrationDoesNotDrift() throws {
        for dialect in SQLDialect.allCases {
            #expect(try MigrationFreezer.render(TripsApp.create, for: dialect) == TripsApp.create.sql[dialect], "\(dialect.rawValue)")
        }
        let migration = TripsApp.addStops
        #expect(!migration.changes.isEmpty)
        for dialect in SQLDialect.allCases {
            #expect(try MigrationFreezer.render(migration, for: dialect) == migration.sql[dialect], "\(dialect.rawValue)")
        }
        let folded = try SchemaModel(folding: [TripsApp.create, migration])
        #expect(try SchemaDiff.changes(from: folded.tables, to: TripsApp.v2).isEmpty)
        #expect(throws: CaravanError.self) {
            try MigrationGenerator.generate(TripsApp.module(tables: TripsApp.v2, migrations: [TripsApp.create, migration]),
                                            into: URL(fileURLWithPath: temporaryDirectory()), name: nil)
        }
    }

    /// A destructive change without its declaration is refused with a message naming it, and writes nothing.
    @Test func destructiveChangesNeedTheirDeclaration() throws {
        func refusal(_ tables: [TableSchema], removals: [SchemaRemoval] = []) -> String {
            let out = temporaryDirectory()
            do {
                _ = try MigrationGenerator.generate(TripsApp.module(tables: tables, removals: removals), into: URL(fileURLWithPath: out), name: nil)
                return "generated"
            } catch {
                #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) == [], "nothing written")
                return "\(error)"
            }
        }
        let columns = TripsApp.v1Trips.columns
        func trips(_ columns: [Column], indexes: [Index] = TripsApp.v1Trips.indexes) -> TableSchema {
            TableSchema("trips", columns: columns, primaryKey: ["id"], indexes: indexes)
        }
        // A rename without renamedFrom is a drop of the old column.
        let undeclaredRename = refusal([trips([columns[0], columns[1], Column("title", .text, nullable: false, default: .value(.text(""))), columns[3]])])
        #expect(undeclaredRename.contains("dropping trips.name"), "\(undeclaredRename)")
        #expect(refusal([trips(Array(columns.prefix(3)))]).contains("dropping trips.note"))
        #expect(refusal([trips(columns, indexes: [])]).contains("dropping the index idx_trips_owner of trips"))
        #expect(refusal([]).contains("dropping the table trips"))
        let narrowed = refusal([trips(Array(columns.prefix(3)) + [Column("note", .integer)])])
        #expect(narrowed.contains("changing the type of trips.note from text to int8"), "\(narrowed)")
        #expect(refusal([trips(Array(columns.prefix(3)) + [Column("note", .text, nullable: false, default: .value(.text("")))])])
            .contains("narrowing trips.note to NOT NULL"))
        #expect(refusal([trips(columns + [Column("budget", .double, nullable: false)])]).contains("adding trips.budget NOT NULL without a default"))

        // Declared, the same drops are generated (indexes before columns, tables last).
        let out = URL(fileURLWithPath: temporaryDirectory())
        let dropped = try MigrationGenerator.generate(
            TripsApp.module(tables: [TripsApp.stops], removals: [.table("trips")]), into: out, name: "drop")
        #expect(dropped.changes == [.createTable(TripsApp.stops), .dropTable("trips")])
        let module = TripsApp.module(tables: [trips(Array(columns.prefix(3)), indexes: [])],
                                     removals: [.column("note", of: "trips"), .index("idx_trips_owner", of: "trips")])
        let generated = try MigrationGenerator.generate(module, into: URL(fileURLWithPath: temporaryDirectory()), name: nil)
        #expect(generated.changes == [SchemaChange.dropIndex("idx_trips_owner", on: "trips"), .dropColumn("note", from: "trips")])
        #expect(try MigrationFreezer.render(Migration(id: "x", changes: generated.changes), for: .sqlite)
                == "DROP INDEX IF EXISTS \"idx_trips_owner\";\nALTER TABLE \"trips\" DROP COLUMN \"note\";\n")
    }

    /// A shipped migration whose declared changes name a table edited since (no version kept) is caught before anything
    /// is written: its rendering no longer matches its frozen file.
    @Test func anEditedShippedMigrationIsRefused() throws {
        let edited = Migration(id: "trips-0001-create", changes: [.createTable(TripsApp.v2Trips)], sql: TripsApp.create.sql)
        let error = #expect(throws: CaravanError.self) {
            try MigrationGenerator.generate(TripsApp.module(tables: TripsApp.v2, migrations: [edited]), into: URL(fileURLWithPath: temporaryDirectory()), name: nil)
        }
        #expect(error?.message.contains("trips-0001-create no longer renders to its frozen sqlite file") == true, "\(String(describing: error))")
    }

    @Test func nextIDs() throws {
        #expect(try MigrationGenerator.nextID(after: "notes-0001-create", app: "notes", name: nil) == "notes-0002")
        #expect(try MigrationGenerator.nextID(after: "group-decisions-0009-x", app: "group_decisions", name: "add-colour") == "group-decisions-0010-add-colour")
        #expect(try MigrationGenerator.nextID(after: nil, app: "group_decisions", name: nil) == "group-decisions-0001")
        #expect(throws: CaravanError.self) { try MigrationGenerator.nextID(after: "a-1", app: "a", name: nil) }
        #expect(throws: CaravanError.self) { try MigrationGenerator.nextID(after: "a-0001", app: "a", name: "Bad Name") }
    }

    /// The command: an app whose migrations already produce its declarations has nothing to migrate.
    @Test func theCommandSaysWhenThereIsNothingToMigrate() async throws {
        let notes = try CaravanBinary(named: "caravan-notes")
        let out = temporaryDirectory()
        let (status, _, error) = try await notes.run(["migrations", "new", "--app", "notes", "--out", out])
        #expect(status != 0 && error.contains("there is nothing to migrate"), "\(error)")
        let (unknown, _, unknownError) = try await notes.run(["migrations", "new", "--app", "places", "--out", out])
        #expect(unknown != 0 && unknownError.contains("unknown app places"))
    }

    /// Version 1 with rows, then version 2's committed migration, on each engine: the renamed column keeps its values,
    /// the new column has its default, the new table takes rows that reference the old ones.
    @Test(arguments: Engine.allCases)
    func versionTwoMigratesAVersionOneDatabase(engine: Engine) async throws {
        let owner = "00000000-0000-4000-8000-000000000001", trip = "00000000-0000-4000-8000-0000000000aa"
        let insertTrip = "INSERT INTO trips (id, owner, name, note) VALUES ('\(trip)', '\(owner)', 'Lisbon', 'tram 28')"
        let insertStop = "INSERT INTO stops (trip_id, label) VALUES ('\(trip)', 'Alfama')"
        let read = "SELECT title, note, CAST(rating AS TEXT), (SELECT label FROM stops) FROM trips"
        switch engine {
        case .sqlite:
            let path = temporaryDirectory() + "/caravan.sqlite"
            let store = try SQLiteStore(path: path)
            #expect(try await store.migrate([TripsApp.create]) == ["trips-0001-create"])
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: insertTrip) }
            #expect(try await store.migrate([TripsApp.create, TripsApp.addStops]) == ["trips-0002-v2"])
            try await queue.write { db in try db.execute(sql: insertStop) }
            let row = try await queue.read { db in try Row.fetchOne(db, sql: read) }
            #expect(row.map { [$0[0], $0[1], $0[2], $0[3]] as [String?] } == ["Lisbon", "tram 28", "0", "Alfama"])
        case .postgres:
            let store = try await Engine.makePostgresStore()
            #expect(try await store.migrate([TripsApp.create]) == ["trips-0001-create"])
            _ = try await store.unsafeRows(insertTrip)
            #expect(try await store.migrate([TripsApp.create, TripsApp.addStops]) == ["trips-0002-v2"])
            _ = try await store.unsafeRows(insertStop)
            #expect(try await store.unsafeRows(read) == [["Lisbon", "tram 28", "0", "Alfama"]])
        }
    }
}
