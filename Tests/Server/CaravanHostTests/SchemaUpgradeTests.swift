import CaravanClient
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// A synced app in three versions. Version 2 expands version 1 (a column with a default, an index, a table); version 3
/// renames a column through a declared change (`renamedFrom:`). Each version's migrations are computed from its
/// declarations, as `caravan migrations new` writes them.
enum TripsUpgrade {
    static let v1Trips = TableSchema(
        "trips",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("name", .text, nullable: false),
            Column("note", .text),
        ],
        primaryKey: ["id"], indexes: [Index("idx_trips_owner", [IndexKey("owner")])], synced: true, owner: "owner"
    )
    static let v2Trips = TableSchema(
        "trips",
        columns: v1Trips.columns + [Column("rating", .integer, nullable: false, default: .value(.integer(0)))],
        primaryKey: ["id"],
        indexes: v1Trips.indexes + [Index("idx_trips_owner_rating", [IndexKey("owner"), IndexKey("rating", descending: true)])],
        synced: true, owner: "owner"
    )
    static let stops = TableSchema(
        "stops",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("trip_id", .uuid, nullable: false),
            Column("label", .text, nullable: false),
        ],
        primaryKey: ["id"], foreignKeys: [ForeignKey(["trip_id"], references: "trips", ["id"], onDelete: .cascade)],
        synced: true, owner: "owner"
    )
    static let v3Trips = TableSchema(
        "trips",
        columns: v2Trips.columns.map { $0.name == "name" ? Column("title", .text, nullable: false, renamedFrom: "name") : $0 },
        primaryKey: ["id"], indexes: v2Trips.indexes, synced: true, owner: "owner"
    )

    static let create = MigrationFiles(directory: nil).migration("trips-0001-create", changes: [.createTable(v1Trips)])
    static let expand = MigrationFiles(directory: nil).migration("trips-0002-expand", after: [create], to: [v2Trips, stops])
    static let rename = MigrationFiles(directory: nil).migration("trips-0003-rename", after: [create, expand], to: [v3Trips, stops])

    /// Another version 2: a column (`hidden_at`) that hides a row from its owner's reads.
    static let hidingTrips = TableSchema(
        "trips", columns: v1Trips.columns + [Column("hidden_at", .timestamp)], primaryKey: ["id"], indexes: v1Trips.indexes,
        synced: true, owner: "owner"
    )
    static let hide = MigrationFiles(directory: nil).migration("trips-0002-hide", after: [create], to: [hidingTrips])
    static let hiding = AppModule(name: "trips", tables: [hidingTrips], migrations: [create, hide], policies: ["trips": [
        TablePolicy("trips_write", for: [.insert, .update, .delete], to: [.authenticated], using: .ownedBy("owner")),
        TablePolicy("trips_read", for: [.select], to: [.authenticated], using: .and([.ownedBy("owner"), .isNull(.column("hidden_at"))])),
    ]])

    static func module(version: Int) -> AppModule {
        let own = { (table: String) in [TablePolicy("\(table)_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("owner"))] }
        switch version {
        case 1: return AppModule(name: "trips", tables: [v1Trips], migrations: [create], policies: ["trips": own("trips")])
        case 2: return AppModule(name: "trips", tables: [v2Trips, stops], migrations: [create, expand],
                                 policies: ["trips": own("trips"), "stops": own("stops")])
        default: return AppModule(name: "trips", tables: [v3Trips, stops], migrations: [create, expand, rename],
                                  policies: ["trips": own("trips"), "stops": own("stops")])
        }
    }
}

/// The HTTP client of these tests' devices, one for the whole run: never shut down, so a test that throws before
/// stopping its hosts fails alone (an HTTP client deinitialized without a shutdown takes the test process down).
let upgradeTestTransport = AsyncHTTPClientTransport()

/// An in-process host of one version of the app, serving until stopped.
final class UpgradeHost {
    let host: CaravanHost
    let group: ServiceGroup
    let running: Task<Void, any Error>
    let api: CaravanAPI
    let baseURL: String
    let anonKey: String

    convenience init(version: Int, settings: [String: String]) async throws {
        try await self.init(module: TripsUpgrade.module(version: version), settings: settings)
    }

    init(module: AppModule, settings: [String: String]) async throws {
        let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }
        var settings = settings
        settings["port"] = "0"
        host = try CaravanHost(configuration: .init(settings: settings), apps: [module], logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        self.group = group
        running = Task { try await group.run() }
        let serving = try await host.serving()
        baseURL = serving.baseURL
        anonKey = serving.anonKey
        api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: upgradeTestTransport)
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }
}

/// One device built against `tables`, syncing through `api`; `through` gives the same device (store, session) another
/// server to sync with.
struct UpgradeDevice {
    let store: LocalStore
    let session: SessionManager
    let engine: SyncEngine

    init(tables: [TableSchema], api: CaravanAPI) throws {
        try self.init(store: LocalStore(path: temporaryDirectory() + "/device.sqlite", tables: tables), api: api)
    }

    private init(store: LocalStore, api: CaravanAPI) {
        self.store = store
        session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
    }

    func through(_ api: CaravanAPI) -> UpgradeDevice { UpgradeDevice(store: store, api: api) }

    func insert(_ table: String, _ fields: [(String, JSONValue)]) throws -> String {
        let owner = try #require(try store.session()?.userID)
        let row = try store.insert(table, .object([("owner", .string(owner))] + fields), now: Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000)))
        guard case .string(let id)? = row["id"] else { throw CaravanError(.internalFailure, "no id") }
        return id
    }

    func update(_ table: String, id: String, _ fields: [(String, JSONValue)]) throws {
        try store.update(table, key: .object([("id", .string(id))]), .object(fields), now: Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000)))
    }

    /// Syncs `tables`, expecting every pushed write applied.
    @discardableResult
    func sync(_ tables: [String]) async throws -> SyncReport {
        let report = try await engine.sync(tables: tables)
        #expect(report.rejected == 0)
        #expect(try store.outbox().isEmpty)
        return report
    }

    /// The local rows of `table`: column `column` by id.
    func column(_ column: String, of table: String = "trips") throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for row in try store.rows(table) { if case .string(let id)? = row["id"] { out[id] = row[column] ?? .null } }
        return out
    }
}

@Suite struct SchemaUpgradeTests {
    /// A rolling upgrade on one PostgreSQL database: a version-1 instance serves while a version-2 instance migrates
    /// (expand: a defaulted column, an index, a table) and serves beside it. The old instance's writes get the new
    /// column's default, its reads and its sync ignore the extra column, the new instance's devices see the old one's
    /// writes, and a version-1 device's cursor from before the migration keeps working on either instance.
    @Test func oldAndNewInstancesServeOneDatabaseDuringAnUpgrade() async throws {
        let url = try await Engine.makeEmptyPostgresDatabase()
        let v1 = try await UpgradeHost(version: 1, settings: ["database_url": url, "data_dir": temporaryDirectory()])
        let old = try UpgradeDevice(tables: [TripsUpgrade.v1Trips], api: v1.api)
        _ = try await old.session.signUp(email: "ada@example.com", password: "correct horse battery")
        let lisbon = try old.insert("trips", [("name", .string("Lisbon"))])
        try await old.sync(["trips"])
        let cursorBefore = try #require(try old.store.syncState(tables: ["trips"]).cursor)

        // Version 2 starts on the same database and migrates while version 1 serves.
        let v2 = try await UpgradeHost(version: 2, settings: ["database_url": url, "data_dir": temporaryDirectory()])
        let new = try UpgradeDevice(tables: [TripsUpgrade.v2Trips, TripsUpgrade.stops], api: v2.api)
        _ = try await new.session.signIn(email: "ada@example.com", password: "correct horse battery")
        try await new.sync(["trips", "stops"])
        #expect(try new.column("rating") == [lisbon: .integer(0)])
        let porto = try new.insert("trips", [("name", .string("Porto")), ("rating", .integer(5))])
        _ = try new.insert("stops", [("trip_id", .string(porto)), ("label", .string("Ribeira"))])
        try await new.sync(["trips", "stops"])

        // The old instance keeps serving the old device: its cursor from before the migration, its writes.
        let token = try await old.session.accessToken()
        let page = try await v1.api.pull(tables: ["trips"], cursor: cursorBefore, limit: 100, token: token)
        #expect(page.changes.map(\.key["id"]) == [.string(porto)])
        try await old.sync(["trips"])
        #expect(try old.column("name") == [lisbon: .string("Lisbon"), porto: .string("Porto")])
        #expect(try old.store.rows("trips").allSatisfy { $0["rating"] == nil }, "the column it does not declare is skipped")
        let faro = try old.insert("trips", [("name", .string("Faro"))])
        try old.update("trips", id: porto, [("note", .string("bridge at dusk"))])
        try await old.sync(["trips"])
        #expect(try old.column("name") == [lisbon: .string("Lisbon"), porto: .string("Porto"), faro: .string("Faro")])
        #expect(try old.column("note")[porto] == .string("bridge at dusk"))
        // Its REST reads answer its own columns; the new instance's, the new column with its default.
        let oldRead = try #require(try await v1.api.fetchRow("trips", key: [("id", .string(faro))], token: token))
        #expect(oldRead["name"] == .string("Faro") && oldRead["rating"] == nil)
        #expect(try await v2.api.fetchRow("trips", key: [("id", .string(faro))], token: token)?["rating"] == .integer(0))
        #expect(try await v2.api.fetchRow("trips", key: [("id", .string(porto))], token: token)?["rating"] == .integer(5))

        // The new device sees the old instance's writes, with the new column as stored.
        try await new.sync(["trips", "stops"])
        #expect(try new.column("name") == [lisbon: .string("Lisbon"), porto: .string("Porto"), faro: .string("Faro")])
        #expect(try new.column("note")[porto] == .string("bridge at dusk"))
        #expect(try new.column("rating") == [lisbon: .integer(0), porto: .integer(5), faro: .integer(0)])
        #expect(try new.column("label", of: "stops").values.map { $0 } == [.string("Ribeira")])

        // The old device moves to the new instance (the old one is being retired) with the cursor it has.
        let moved = old.through(v2.api)
        let braga = try moved.insert("trips", [("name", .string("Braga"))])
        try await moved.sync(["trips"])
        #expect(try await v2.api.fetchRow("trips", key: [("id", .string(braga))], token: token)?["rating"] == .integer(0))
        try await v1.stop()
        try await new.sync(["trips", "stops"])
        #expect(try new.column("rating")[braga] == .integer(0))
        try await v2.stop()
    }

    /// A row a new instance hid through a column the old version does not know, then updated by the old instance: its
    /// logged row lacks that column, so the policy cannot judge the logged record. The pull reads the row as stored,
    /// under the caller's rule: hidden, it goes as a delete, never as the logged record.
    @Test func aRowHiddenThroughANewColumnStaysHiddenWhenAnOldInstanceUpdatesIt() async throws {
        let url = try await Engine.makeEmptyPostgresDatabase()
        let v1 = try await UpgradeHost(version: 1, settings: ["database_url": url, "data_dir": temporaryDirectory()])
        let old = try UpgradeDevice(tables: [TripsUpgrade.v1Trips], api: v1.api)
        _ = try await old.session.signUp(email: "ada@example.com", password: "correct horse battery")
        let lisbon = try old.insert("trips", [("name", .string("Lisbon"))])
        let porto = try old.insert("trips", [("name", .string("Porto"))])
        try await old.sync(["trips"])

        let v2 = try await UpgradeHost(module: TripsUpgrade.hiding, settings: ["database_url": url, "data_dir": temporaryDirectory()])
        let new = try UpgradeDevice(tables: [TripsUpgrade.hidingTrips], api: v2.api)
        _ = try await new.session.signIn(email: "ada@example.com", password: "correct horse battery")
        try await new.sync(["trips"])
        try new.update("trips", id: lisbon, [("hidden_at", .string("2026-11-29T00:00:00Z"))])
        try await new.sync(["trips"])
        #expect(Set(try new.column("name").keys) == [porto])
        let token = try await new.session.accessToken()
        let cursor = try #require(try new.store.syncState(tables: ["trips"]).cursor)

        // The old instance, which knows no `hidden_at`, updates both rows.
        try old.update("trips", id: lisbon, [("note", .string("hidden, yet edited"))])
        try old.update("trips", id: porto, [("note", .string("visible"))])
        try await old.sync(["trips"])

        let page = try await v2.api.pull(tables: ["trips"], cursor: cursor, limit: 100, token: token)
        #expect(!page.changes.contains { $0.key["id"] == .string(lisbon) && $0.record != nil }, "the hidden row's logged record was sent")
        try await new.sync(["trips"])
        #expect(try new.column("note") == [porto: .string("visible")])
        #expect(try new.column("hidden_at") == [porto: .null])
        try await v1.stop()
        try await v2.stop()
    }

    /// An old device against a new server, on each engine: a version-1 device syncs with version 1, then the server is
    /// upgraded to version 3 (expand, then a declared rename). Its cursor stays valid; its pushes without the new column
    /// get the default, and under the old name reach the renamed column; pulled rows carry the old name too (and the
    /// new column, which it ignores), including rows logged before the rename.
    @Test(arguments: Engine.allCases)
    func anOldDeviceKeepsSyncingWithANewServer(engine: Engine) async throws {
        var settings = ["data_dir": temporaryDirectory()]
        if engine == .postgres { settings["database_url"] = try await Engine.makeEmptyPostgresDatabase() }
        let v1 = try await UpgradeHost(version: 1, settings: settings)
        let old = try UpgradeDevice(tables: [TripsUpgrade.v1Trips], api: v1.api)
        _ = try await old.session.signUp(email: "ada@example.com", password: "correct horse battery")
        let token = try await old.session.accessToken()
        let early = try #require(try await v1.api.pull(tables: ["trips"], cursor: nil, limit: 100, token: token).cursor)
        let lisbon = try old.insert("trips", [("name", .string("Lisbon"))])
        try await old.sync(["trips"])
        // Another user's trips, logged without the columns of later versions. On SQLite, 1,100: filling them takes several
        // reads (one read of them all would nest past SQLite's expression depth).
        let bo = try await v1.api.signUp(email: "bo@example.com", password: "correct horse battery")
        let boEarly = try #require(try await v1.api.pull(tables: ["trips"], cursor: nil, limit: 100, token: bo.accessToken).cursor)
        let rows = JSONValue.array((0..<(engine == .sqlite ? 1_100 : 50)).map { index in .object([("owner", .string(bo.userID)), ("name", .string("trip \(index)"))]) })
        let inserted = try await upgradeTestTransport.send(TransportRequest(
            method: "POST", url: v1.baseURL + "/rest/v1/trips",
            headers: [("apikey", v1.anonKey), ("Authorization", "Bearer " + bo.accessToken), ("Content-Type", "application/json"), ("Prefer", "return=minimal")],
            body: Array(rows.jsonText.utf8)))
        #expect(inserted.status == 201)
        try await v1.stop()

        let v3 = try await UpgradeHost(version: 3, settings: settings)
        let boReplay = try await v3.api.pull(tables: ["trips"], cursor: boEarly, limit: 2_000, token: bo.accessToken)
        #expect(boReplay.changes.count == (engine == .sqlite ? 1_100 : 50))
        #expect(boReplay.changes.allSatisfy { $0.record?["rating"] == .integer(0) && $0.record?["title"] == $0.record?["name"] })
        // A cursor made before both migrations: the row logged under its old name comes with both names.
        let replay = try await v3.api.pull(tables: ["trips"], cursor: early, limit: 100, token: token)
        let logged = try #require(replay.changes.first { $0.key["id"] == .string(lisbon) }?.record)
        #expect(logged["name"] == .string("Lisbon") && logged["title"] == .string("Lisbon"))
        // Logged before the column was added, it comes with the column as stored.
        #expect(logged["rating"] == .integer(0))

        let device = old.through(v3.api)
        let faro = try device.insert("trips", [("name", .string("Faro")), ("note", .string("beach"))])
        try device.update("trips", id: lisbon, [("name", .string("Lisboa"))])
        let report = try await device.sync(["trips"])
        #expect(report.pushed == 2)
        #expect(try device.column("name") == [lisbon: .string("Lisboa"), faro: .string("Faro")])
        let stored = try #require(try await v3.api.fetchRow("trips", key: [("id", .string(faro))], token: token))
        #expect(stored["title"] == .string("Faro") && stored["rating"] == .integer(0) && stored["name"] == nil)

        // A new device built against version 3 reads the same rows under the new name, and its writes reach the old one.
        let new = try UpgradeDevice(tables: [TripsUpgrade.v3Trips, TripsUpgrade.stops], api: v3.api)
        _ = try await new.session.signIn(email: "ada@example.com", password: "correct horse battery")
        try await new.sync(["trips", "stops"])
        #expect(try new.column("title") == [lisbon: .string("Lisboa"), faro: .string("Faro")])
        #expect(try new.column("rating") == [lisbon: .integer(0), faro: .integer(0)])
        try new.update("trips", id: faro, [("title", .string("Faro, Algarve")), ("rating", .integer(4))])
        try await new.sync(["trips", "stops"])
        try await device.sync(["trips"])
        #expect(try device.column("name") == [lisbon: .string("Lisboa"), faro: .string("Faro, Algarve")])
        #expect(try device.column("note")[faro] == .string("beach"))
        // A fresh pull (the snapshot) carries both names too.
        let snapshot = try await v3.api.pull(tables: ["trips"], cursor: nil, limit: 100, token: token)
        #expect(snapshot.changes.allSatisfy { $0.record?["name"] != nil && $0.record?["name"] == $0.record?["title"] })
        #expect(snapshot.changes.count == 2)
        try await v3.stop()
    }
}
