import CaravanCore
import CaravanTesting
import Foundation
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import Testing

/// Caravan's own users table is `auth_users` (system-0006 renamed it from `users`), so an app may declare a `users`
/// table of its own. Deployments made before the rename are renamed in place, foreign keys included; migrations
/// shipped before it (whose frozen SQL says `users`) run before it on a fresh deployment.
@Suite struct UsersNamespaceTests {
    /// The system users table under its old name, as a deployment made before system-0006 has it.
    static let legacyUsers = TableSchema("users", columns: SystemModule.users.columns, primaryKey: ["id"], exposure: .secret)
    /// An app table whose frozen migration predates the rename: its foreign key names `users`.
    static let pets = TableSchema(
        "pets",
        columns: [Column("id", .integer, nullable: false), Column("owner", .uuid, nullable: false)],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["owner"], references: "users", ["id"], onDelete: .cascade)]
    )
    static let legacyPets = Migration(id: "pets-0001", changes: [.createTable(pets)], sql: [
        .sqlite: (try? SQLSchema<SQLiteSyntax>.render([.createTable(pets)])) ?? "",
        .postgres: (try? SQLSchema<PostgresSyntax>.render([.createTable(pets)])) ?? "",
    ], phase: .beforeUsersRename)
    /// An app's own `users` table (GroupDecisions has one), keyed by the auth user's id.
    static let members = TableSchema(
        "users",
        columns: [Column("id", .uuid, nullable: false), Column("name", .text, nullable: false)],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)]
    )
    static let club = AppModule(name: "club", tables: [members], migrations: [Migration(id: "club-0001", changes: [.createTable(members)])])

    static let petShop = AppModule(name: "pets", tables: [pets], migrations: [legacyPets])
    let alice = "4d1c3b7e-52a1-4c55-9a5e-1f1e7a6f0a01"
    let stranger = "4d1c3b7e-52a1-4c55-9a5e-1f1e7a6f0a02"

    func insert(_ store: any Store, _ table: TableSchema, _ pairs: [(String, Value)], apps: [AppModule] = [club, petShop]) async throws {
        _ = try await WritePipeline(store: store, publisher: ChangePublisher()).run(Self.service(apps)) { tx in
            try await tx.insert([RowValues(columns: pairs.map(\.0), values: pairs.map(\.1))], into: table, conflict: nil)
        }
    }

    static func service(_ apps: [AppModule]) -> AccessContext {
        Catalog(modules: [SystemModule.module] + apps).access(for: .serviceRole)
    }

    func count(_ store: any Store, _ table: TableSchema) async throws -> Int {
        try await store.fetch(try ReadPlan(table: table, query: Query(), access: .constant(true), maxRows: nil, includeCount: false)).rows.count
    }

    @Test(arguments: Engine.allCases)
    func aDeploymentMadeBeforeTheRenameIsRenamedInPlaceWithItsForeignKeys(engine: Engine) async throws {
        let store = try await engine.makeStore(includeSystem: false)
        let before = SystemModule.migrations.filter { $0.phase == .beforeUsersRename } + [Self.legacyPets]
        _ = try await store.migrate(before)
        try await insert(store, Self.legacyUsers, [("id", .text(alice)), ("email", .text("alice@example.com"))], apps: [Self.petShop])
        try await insert(store, Self.pets, [("id", .integer(1)), ("owner", .text(alice))], apps: [Self.petShop])

        #expect(try await store.migrate(SystemModule.migrations + [Self.legacyPets]) == [Migration.usersRenameMigrationID, "system-0007-search-functions"])
        #expect(try await count(store, SystemModule.users) == 1)
        // The pets' foreign key followed the table: an unknown owner is refused, deleting the user cascades.
        let refused = await #expect(throws: CaravanError.self) {
            try await insert(store, Self.pets, [("id", .integer(2)), ("owner", .text(stranger))], apps: [Self.petShop])
        }
        #expect(refused?.code == .foreignKeyViolation)
        let id = try SystemModule.users.requireColumn("id")
        _ = try await WritePipeline(store: store, publisher: ChangePublisher()).run(Self.service([Self.petShop])) { tx in
            try await tx.delete(from: SystemModule.users, where: .compare(id, .eq, .text(alice)))
        }
        #expect(try await count(store, Self.pets) == 0)
    }

    @Test(arguments: Engine.allCases)
    func anAppDeclaresItsOwnUsersTableBesideCaravans(engine: Engine) async throws {
        _ = try Catalog.validated(modules: [SystemModule.module, Self.club])
        // The legacy migration is listed after the app's, yet runs before the rename, as it did when it shipped.
        let store = try await engine.makeStore(migrations: Self.club.migrations + [Self.legacyPets])
        #expect(try await store.appliedMigrations().firstIndex(of: "pets-0001")! < store.appliedMigrations().firstIndex(of: Migration.usersRenameMigrationID)!)
        try await insert(store, SystemModule.users, [("id", .text(alice)), ("email", .text("alice@example.com"))])
        try await insert(store, Self.members, [("id", .text(alice)), ("name", .text("Alice"))])
        #expect(try await count(store, Self.members) == 1)
        #expect(try await count(store, SystemModule.users) == 1)
        // The app's users reference Caravan's: an app user without an auth user is refused.
        let refused = await #expect(throws: CaravanError.self) {
            try await insert(store, Self.members, [("id", .text(stranger)), ("name", .text("Nobody"))])
        }
        #expect(refused?.code == .foreignKeyViolation)
        // The legacy table's foreign key points at Caravan's users, not at the app's table of the same old name.
        try await insert(store, Self.pets, [("id", .integer(1)), ("owner", .text(alice))])
        let id = try SystemModule.users.requireColumn("id")
        _ = try await WritePipeline(store: store, publisher: ChangePublisher()).run(Self.service([Self.club, Self.petShop])) { tx in
            try await tx.delete(from: SystemModule.users, where: .compare(id, .eq, .text(alice)))
        }
        #expect(try await count(store, Self.pets) == 0)
        #expect(try await count(store, Self.members) == 0)
    }

    @Test(arguments: Engine.allCases)
    func aMigrationOlderThanTheRenameIsRefusedOnADeploymentMadeAfterIt(engine: Engine) async throws {
        let store = try await engine.makeStore()
        let refused = await #expect(throws: CaravanError.self) { try await store.migrate([Self.legacyPets]) }
        #expect(refused?.code == .invalidConfiguration)
        #expect(try await !store.appliedMigrations().contains("pets-0001"))
    }
}
