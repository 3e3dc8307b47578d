import CaravanCore
import Foundation

/// The package `caravan new` writes: `Examples/Notes` with "Notes"/"notes" replaced by the new app's names
/// (`ScaffoldTests` keeps these texts equal to the example's files, which the main package builds and tests).
struct Scaffold {
    enum CaravanDependency { case path(String), repository(String, from: String) }

    /// Where Caravan's releases are published (`--caravan-path` names a local checkout instead).
    static let repository = "https://github.com/caravan-swift/caravan.git"

    let typeName: String
    let appName: String
    let caravan: CaravanDependency

    var binaryName: String { "caravan-\(appName)" }

    init(name: String, caravan: CaravanDependency) throws(CaravanError) {
        guard let first = name.first, first.isASCII, first.isLetter, name.count <= 40,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw CaravanError(.invalidConfiguration, "the name \(name) is not allowed: use 1 to 40 letters and digits (A–Z, a–z, 0–9), starting with a letter")
        }
        typeName = name.prefix(1).uppercased() + name.dropFirst()
        appName = name.lowercased()
        self.caravan = caravan
    }

    /// The app's one table: `Examples/Notes`'s `notes`, named after the app.
    static func table(_ name: String) -> TableSchema {
        TableSchema(
            name,
            columns: [
                Column("id", .uuid, nullable: false, default: .randomUUID),
                Column("owner", .uuid, nullable: false),
                Column("title", .text, nullable: false),
                Column("body", .text),
                Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
                Column("created_at", .timestamp, nullable: false, default: .now),
            ],
            primaryKey: ["id"],
            checks: [CheckConstraint("\(name)_title_not_blank", .column("title", .neq, ""))],
            indexes: [Index("idx_\(name)_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)])],
            synced: true,
            owner: "owner"
        )
    }

    /// Every file of the package by its path inside it, the frozen migrations included.
    func files() throws -> [String: String] {
        let (dependency, package) = switch caravan {
        case .path(let path): (".package(name: \"Caravan\", path: \"\(path)\")", "Caravan")
        case .repository(let url, let version): (".package(url: \"\(url)\", from: \"\(version)\")", "caravan")
        }
        var files: [String: String] = [:]
        for (path, template) in Self.templates {
            let named = { (text: String) in text.replacingOccurrences(of: "Notes", with: typeName).replacingOccurrences(of: "notes", with: appName) }
            files[named(path)] = named(template).replacingOccurrences(of: "{{dependency}}", with: dependency)
                .replacingOccurrences(of: "{{package}}", with: package)
        }
        let migration = Migration(id: "\(appName)-0001-create", changes: [.createTable(Self.table(appName))])
        for dialect in SQLDialect.allCases {
            files["Sources/\(typeName)/Migrations/\(dialect.rawValue)/\(migration.id).sql"] = try MigrationFreezer.render(migration, for: dialect)
        }
        return files
    }

    static let templates: [String: String] = [
        "Package.swift": #"""
// swift-tools-version: 6.1
// A Caravan deployment with an app of your own. Build and run it from this folder:
//   swift run caravan-notes serve --data-dir ./notes-data
import PackageDescription

let package = Package(
    name: "Notes",
    platforms: [.macOS(.v15)],
    dependencies: [
        {{dependency}},
    ],
    targets: [
        // Migrations/<dialect>/<id>.sql: the frozen migrations, written by `caravan-notes migrations freeze` and compiled
        // into the module by Caravan's EmbedFiles build plugin (the binary needs no resource folder beside it).
        .target(name: "Notes", dependencies: [.product(name: "CaravanCore", package: "{{package}}")],
                plugins: [.plugin(name: "EmbedFiles", package: "{{package}}")]),
        .executableTarget(name: "caravan-notes", dependencies: ["Notes", .product(name: "CaravanCLI", package: "{{package}}")]),
        // `swift test`: the module's policies and RPC on both engines, with Caravan's testing kit.
        .testTarget(name: "NotesTests", dependencies: ["Notes", .product(name: "CaravanTesting", package: "{{package}}")]),
    ]
)

"""#,
        "README.md": #"""
# Notes

A backend of your own on [Caravan](https://github.com/caravan-swift/caravan): the `notes` app module (one table, its
owner policy, one RPC function), served by the whole `caravan` command line as `caravan-notes`.

## Run it

```sh
swift run caravan-notes serve --data-dir ./notes-data
```

It serves on http://127.0.0.1:8080 (SQLite in `./notes-data`; `--database postgres://…` for PostgreSQL). Its keys:
`swift run caravan-notes keys --data-dir ./notes-data`. Connect any Supabase client with that URL and the `anon` key;
`/rest/v1/notes`, `/rest/v1/rpc/count_notes`, `/auth/v1`, `/realtime/v1`, `/sync/v1` and the console at `/admin`
are served.

## Test it

```sh
swift test
```

`Tests/NotesTests` checks the policy and the RPC with Caravan's testing kit, on SQLite (and on PostgreSQL too when
`CARAVAN_TEST_DATABASE_URL` names a database server).

## Change it

The module is `Sources/Notes/NotesModule.swift`: tables, policies and functions, declared in Swift, no SQL. A shipped
migration is never edited: declare a change as a new migration in `migrations`, then freeze it into the files that
ship:

```sh
swift run caravan-notes migrations freeze --app notes --out Sources/Notes/Migrations
```

"""#,
        ".gitignore": #"""
.build/
/*-data/

"""#,
        "Sources/Notes/NotesModule.swift": #"""
public import CaravanCore
import Foundation

/// A Caravan app module of your own: one table, one policy, one RPC function, and no SQL. The table is declared
/// once; Caravan renders it for SQLite and PostgreSQL when the deployment migrates.
public enum NotesModule {
    /// `notes`: a user's private notes. `owner` is the auth user's id.
    public static let notes = TableSchema(
        "notes",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("title", .text, nullable: false),
            Column("body", .text),
            Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        checks: [CheckConstraint("notes_title_not_blank", .column("title", .neq, ""))],
        indexes: [Index("idx_notes_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)])],
        synced: true,
        owner: "owner"
    )

    /// Each signed-in user reads and writes only their own notes; anonymous callers see none.
    public static let policies: [String: [TablePolicy]] = [
        "notes": [TablePolicy("notes_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("owner"))],
    ]

    /// `count_notes(only_pinned boolean default false) → bigint`: the caller's notes, counted under their policies.
    public static let countNotes = RPCFunction(
        "count_notes", parameters: [RPCParameter("only_pinned", .boolean, default: .bool(false))], readOnly: true
    ) { arguments, transaction in
        var query = Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0)
        if arguments["only_pinned"] == .bool(true) { query.filters = [.isTrue("pinned")] }
        let plan = try ReadPlan(table: notes, query: query, access: try transaction.access.readRule(notes), maxRows: nil, includeCount: true)
        return await .scalar(.integer(Int64(try transaction.fetch(plan).totalCount ?? 0)))
    }

    public static let module = AppModule(
        name: "notes",
        tables: [notes],
        // Declared, and frozen into Migrations/<dialect>/ by `caravan-notes migrations freeze --app notes --out
        // Sources/Notes/Migrations`; a later change is a new migration, never an edit of a shipped one.
        migrations: [MigrationFiles(embedded: EmbeddedFiles.contents).migration("notes-0001-create", changes: [.createTable(notes)])],
        policies: policies,
        functions: [countNotes]
    )
}

"""#,
        "Sources/caravan-notes/main.swift": #"""
import CaravanCLI
import Notes

// The whole `caravan` command line (serve, migrate, keys, user, backup, …) with the notes app in it.
await CaravanCommandLine.main(apps: [NotesModule.module])

"""#,
        "Tests/NotesTests/NotesPolicyTests.swift": #"""
import CaravanCore
import CaravanTesting
import Notes
import Testing

/// The notes app's policy and RPC, tested as an app author tests their own module: the testing kit's fixture on
/// both engines (PostgreSQL when `CARAVAN_TEST_DATABASE_URL` names a cluster) and its policy-matrix runner.
@Suite struct NotesPolicyTests {
    enum Actor: CaseIterable, Sendable {
        case owner, otherUser, anon, service

        var identity: Identity {
            switch self {
            case .owner: Identity(role: .authenticated, userID: AppFixture.uuid(1))
            case .otherUser: Identity(role: .authenticated, userID: AppFixture.uuid(2))
            case .anon: Identity(role: .anon)
            case .service: .serviceRole
            }
        }
    }

    /// Two notes of user 1 (one pinned) and one of user 2.
    static func seeded(_ engine: Engine) async throws -> AppFixture {
        let f = try await AppFixture(engine: engine, modules: [NotesModule.module])
        for (owner, title, pinned) in [(1, "buy dates", false), (1, "call home", true), (2, "secret", false)] {
            _ = try await f.asUser(AppFixture.uuid(owner)) { tx in
                try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(owner)), "title": .text(title), "pinned": .bool(pinned)])],
                                    into: NotesModule.notes, conflict: nil)
            }
        }
        return f
    }

    @Test(arguments: Engine.allCases)
    func eachUserReadsAndWritesOnlyTheirOwnNotes(engine: Engine) async throws {
        let f = try await Self.seeded(engine)
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        #expect(try await matrix.readMismatches(NotesModule.module.tables, expected: [
            "notes": [.owner: 2, .otherUser: 1, .anon: 0, .service: 3],
        ]) == [])
        #expect(await matrix.writeMismatches("pin every note", expected: [.owner: .rows(2), .otherUser: .rows(1), .anon: .rows(0), .service: .rows(3)]) { tx in
            try await tx.update(NotesModule.notes, set: RowValues(["pinned": .bool(true)]), where: .constant(true))
        } == [])
        #expect(await matrix.writeMismatches("write a note in user 1's name", expected: [
            .owner: .rows(1), .otherUser: .refused(.permissionDenied), .anon: .refused(.permissionDenied), .service: .rows(1),
        ]) { tx in
            try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(1)), "title": .text("planted")])], into: NotesModule.notes, conflict: nil)
        } == [])
    }

    @Test(arguments: Engine.allCases)
    func countNotesCountsTheCallersNotesOnly(engine: Engine) async throws {
        let f = try await Self.seeded(engine)
        func countNotes(as user: Int, _ arguments: [String: JSONValue] = [:]) async throws -> Int64? {
            guard case .scalar(.integer(let count)) = try await f.call("count_notes", as: AppFixture.uuid(user), arguments) else { return nil }
            return count
        }
        #expect(try await countNotes(as: 1) == 2)
        #expect(try await countNotes(as: 1, ["only_pinned": .bool(true)]) == 1)
        #expect(try await countNotes(as: 2) == 1)
    }

    @Test(arguments: Engine.allCases)
    func aBlankTitleIsRefusedNamingTheCheck(engine: Engine) async throws {
        let f = try await AppFixture(engine: engine, modules: [NotesModule.module])
        await expectFailure(.checkViolation, naming: "notes_title_not_blank") {
            _ = try await f.asUser(AppFixture.uuid(1)) { tx in
                try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(1)), "title": .text("")])], into: NotesModule.notes, conflict: nil)
            }
        }
    }
}

"""#,
    ]
}
