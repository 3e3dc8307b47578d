import CaravanClient
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Logging
import Places
import ServiceLifecycle
import Synchronization
import Testing

/// A new app over an old store, against a real server: the store made from version 1 of the declarations, with
/// unsynced writes, is opened with version 2 (a column with a default, a table, a renamed column), migrates in place,
/// pushes its writes and ends equal to the server's rows column by column (a fresh device's pull is the oracle). Then
/// the server raises `places`' sync epoch: the device gets 409 for `places` alone, pulls it anew, keeps its writes.
@Suite struct DeviceUpgradeTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    /// Version 1 and 2 of the device's declarations of Places (version 2 renames `favorites.comment` to `note`,
    /// adds `places.rating_count` and `reviews`); the server serves version 2.
    static let v2: [TableSchema] = PlacesModule.module.tables.filter(\.isSynced).map { table in
        guard table.name == "favorites" else { return table }
        return copy(table, columns: table.columns.map { $0.name == "note" ? Column("note", .text, renamedFrom: "comment") : $0 })
    }
    static let v1: [TableSchema] = v2.filter { $0.name != "reviews" }.map { table in
        switch table.name {
        case "favorites": copy(table, columns: table.columns.map { $0.name == "note" ? Column("comment", .text) : $0 })
        case "places": copy(table, columns: table.columns.filter { $0.name != "rating_count" })
        default: table
        }
    }
    static let scope = ["places", "favorites"]

    static func copy(_ table: TableSchema, columns: [Column]) -> TableSchema {
        TableSchema(table.name, columns: columns, primaryKey: table.primaryKey, uniques: table.uniques, foreignKeys: table.foreignKeys,
                    checks: table.checks, indexes: table.indexes, exposure: table.exposure, search: table.search, synced: table.isSynced,
                    owner: table.owner, participants: table.participants, exportCard: table.exportCard)
    }

    static func places(epoch: Int) -> AppModule {
        let module = PlacesModule.module
        return AppModule(name: module.name, tables: module.tables, migrations: module.migrations, policies: module.policies, functions: module.functions,
                         behaviours: module.behaviours, schedules: module.schedules, asyncFunctions: module.asyncFunctions,
                         clientCaches: module.clientCaches, buckets: module.buckets, edgeFunctions: module.edgeFunctions, removals: module.removals,
                         syncEpochs: ["places": epoch])
    }

    /// Runs a server with `module` over `settings` while `body` runs.
    func withServer(_ settings: [String: String], _ module: AppModule, _ body: (CaravanHost.Serving) async throws -> Void) async throws {
        try await CaravanHost.withServing(settings, apps: [module], logger: logger, body)
    }

    @Test(arguments: Engine.allCases)
    func anOldStoreMigratesAndARaisedEpochRefetchesOneTable(engine: Engine) async throws {
        var settings = ["port": "0", "data_dir": temporaryDirectory()]
        if engine == .postgres { settings["database_url"] = try await Engine.makeEmptyPostgresDatabase() }
        let transport = RecordingTransport()
        let storePath = temporaryDirectory() + "/device.sqlite"
        let now = Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000))
        do {
            try await upgrade(settings: settings, transport: transport, storePath: storePath, now: now)
        } catch {
            try await transport.base.shutdown()
            throw error
        }
        try await transport.base.shutdown()
    }

    func upgrade(settings: [String: String], transport: RecordingTransport, storePath: String, now: String) async throws {
        var kept = ""  // the id of the favorite written offline under version 1

        try await withServer(settings, Self.places(epoch: 1)) { serving in
            let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            for (id, rating) in [("kudu", 120), ("olaya", 7)] {
                let created = try await transport.send(TransportRequest(
                    method: "POST", url: serving.baseURL + "/rest/v1/places",
                    headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
                    body: Array(#"{"id":"\#(id)","name_ar":"مكان","category":"cafe","category_ar":"مقهى","rating_count":\#(rating)}"#.utf8)))
                #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            }
            // Version 1 of the app: a synced favorite, then two writes that wait.
            let store = try LocalStore(path: storePath, tables: Self.v1)
            let manager = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
            let engine = SyncEngine(store: store, api: api, session: manager, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
            let session = try await manager.signUp(email: "upgrade@example.com", password: "correct horse battery")
            // (Without `comment`: the server already serves version 2, which knows it as `note` only.)
            let synced = try store.insert("favorites", .object([("user_id", .string(session.userID)), ("place_id", .string("kudu"))]), now: now)
            let first = try await engine.sync(tables: Self.scope)
            #expect(first.pushed == 1 && first.rejected == 0)
            #expect(try store.rows("places").count == 2 && (try store.outbox().filter { $0.state == .pending }.isEmpty))
            let offline = try store.insert("favorites", .object([("user_id", .string(session.userID)), ("place_id", .string("olaya")),
                                                                 ("comment", .string("offline"))]), now: now)
            guard case .string(let id)? = offline["id"] else { Issue.record("no id"); return }
            kept = id
            try store.update("favorites", key: .object([("id", synced["id"] ?? .null)]), .object([("comment", .string("edited offline"))]), now: now)
        }

        try await withServer(settings, Self.places(epoch: 1)) { serving in
            // Version 2 of the app opens the store: migrated in place, its writes kept, then synced.
            let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            let device = try Device(path: storePath, api: api, tables: Self.v2)
            #expect(try device.store.outbox().compactMap { $0.record?["note"] } == [.string("offline"), .string("edited offline")])
            transport.reset()
            let report = try await device.engine.sync(tables: Self.scope)
            #expect(report.pushed == 2 && report.rejected == 0)
            #expect(transport.pulls().first?.contains("refetch=places,favorites") == true, "\(transport.pulls())")
            _ = try await device.engine.sync(tables: ["reviews"])
            try await Self.expectConverged(device, api: api)
            #expect(try device.store.rows("places", where: [("id", .string("kudu"))]).first?["rating_count"] == .integer(120))
            let notes = try device.store.rows("favorites").compactMap { $0["note"] }
            #expect(Set(notes) == [.string("offline"), .string("edited offline")])
        }

        try await withServer(settings, Self.places(epoch: 2)) { serving in
            // A breaking change raised places' epoch: 409 for places alone, a write waiting all along.
            let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            let device = try Device(path: storePath, api: api, tables: Self.v2)
            try device.store.update("favorites", key: .object([("id", .string(kept))]), .object([("note", .string("after the bump"))]), now: now)
            let created = try await transport.send(TransportRequest(
                method: "POST", url: serving.baseURL + "/rest/v1/places",
                headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
                body: Array(#"{"id":"nakheel","name_ar":"نخيل","category":"park","category_ar":"حديقة"}"#.utf8)))
            #expect(created.status == 201)
            transport.reset()
            let report = try await device.engine.sync(tables: Self.scope)
            #expect(report.pushed == 1)
            let exchanges = transport.exchanges()
            let pulls = exchanges.filter { $0.url.contains("/sync/v1/pull") }
            #expect(pulls.count == 2 && pulls[0].status == 409 && !pulls[0].url.contains("refetch="), "\(pulls)")
            #expect(pulls.last.map { $0.status == 200 && $0.url.hasSuffix("refetch=places") } == true)
            try await Self.expectConverged(device, api: api)
            #expect(try device.store.rows("favorites", where: [("id", .string(kept))]).first?["note"] == .string("after the bump"))
            // The next sync follows on with the new cursor: no 409.
            transport.reset()
            _ = try await device.engine.sync(tables: Self.scope)
            #expect(transport.exchanges().allSatisfy { $0.status == 200 })
        }
    }

    /// The device's rows of every synced table equal, column by column, those a fresh device pulls from the server.
    static func expectConverged(_ device: Device, api: CaravanAPI) async throws {
        guard let stored = try device.store.session() else { Issue.record("signed out"); return }
        let fresh = try Device(path: temporaryDirectory() + "/fresh.sqlite", api: api, tables: v2)
        try fresh.store.saveSession(stored)
        _ = try await fresh.engine.sync(tables: scope)
        _ = try await fresh.engine.sync(tables: ["reviews"])
        for table in scope + ["reviews"] {
            let mine = try device.store.rows(table), theirs = try fresh.store.rows(table)
            #expect(mine == theirs, "\(table): \(mine) vs \(theirs)")
        }
        #expect(try device.store.outbox().filter { $0.state != .pending }.allSatisfy { $0.state == .acked } && (try device.store.outbox().allSatisfy { $0.state != .parked }))
    }

    struct Device {
        let store: LocalStore
        let engine: SyncEngine

        init(path: String, api: CaravanAPI, tables: [TableSchema]) throws {
            store = try LocalStore(path: path, tables: tables)
            let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
            engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        }
    }
}

/// The HTTP client, recording each exchange's URL and status.
final class RecordingTransport: HTTPTransport {
    let base = AsyncHTTPClientTransport()
    private let recorded = Mutex<[(url: String, status: Int)]>([])

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await base.send(request)
        recorded.withLock { $0.append((request.url, response.status)) }
        return response
    }

    func reset() { recorded.withLock { $0 = [] } }
    func exchanges() -> [(url: String, status: Int)] { recorded.withLock { $0 } }
    func pulls() -> [String] { exchanges().map(\.url).filter { $0.contains("/sync/v1/pull") } }
}
