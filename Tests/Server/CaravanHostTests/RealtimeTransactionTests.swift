import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Logging
import Places
import Testing

/// A server transaction of several rows, followed over realtime: the client holds its events until the last one
/// (`tx_events`, counted after the subscriber's policy) and applies them in one local transaction, so a live query
/// emits once with all of them; another user's row in the same transaction is not waited for.
@Suite("Realtime applies a server transaction whole", .timeLimit(.minutes(3)))
struct RealtimeTransactionTests {
    @Test(arguments: Engine.allCases)
    func aMultiRowServerTransactionReachesALiveQueryInOneEmission(engine: Engine) async throws {
        var settings = ["port": "0", "data_dir": temporaryDirectory()]
        if engine == .postgres { settings["database_url"] = try await Engine.makeEmptyPostgresDatabase() }
        let transport = AsyncHTTPClientTransport()
        do {
            try await DeviceUpgradeTests().withServer(settings, PlacesModule.module) { serving in try await walk(serving, transport) }
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    func walk(_ serving: CaravanHost.Serving, _ transport: AsyncHTTPClientTransport) async throws {
        let service = [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
        let created = try await transport.send(TransportRequest(method: "POST", url: serving.baseURL + "/rest/v1/places", headers: service, body: Array(
            #"[{"id":"kudu","name_ar":"كودو","category":"cafe","category_ar":"مقهى"},{"id":"olaya","name_ar":"العليا","category":"cafe","category_ar":"مقهى"}]"#.utf8)))
        #expect(created.status == 201)
        let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
        let tables = PlacesModule.module.tables.filter(\.isSynced)
        let other = try LocalStore(path: temporaryDirectory() + "/bob.sqlite", tables: tables)
        let bob = try await SessionManager(store: other, api: api, now: { Int64(Date().timeIntervalSince1970) })
            .signUp(email: "bob@example.com", password: "correct horse battery").userID

        let store = try LocalStore(path: temporaryDirectory() + "/alice.sqlite", tables: tables)
        let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        let alice = try await session.signUp(email: "alice@example.com", password: "correct horse battery").userID
        let engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        let realtime = RealtimeClient(store: store, engine: engine, session: session, logger: Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() },
                                      transactionWait: .seconds(60))
        let (live, arrived) = AsyncStream.makeStream(of: LiveChange.self)
        let following = Task { try await realtime.run(tables: ["favorites"]) { arrived.yield($0) } }
        defer { following.cancel() }
        var status = engine.status.updates().makeAsyncIterator()
        while let now = await status.next(), !(now.connected && now.lastSyncedAt != nil) {}   // joined, and the first pull done

        var results = try store.live(Favorite.self, order: [OrderTerm(Favorite.CodingKeys.placeID, .ascending)]).makeAsyncIterator()
        #expect(try await results.next() == [])
        // One request, one server transaction: two of Alice's favorites and one of Bob's between them.
        let rows = [(alice, "kudu"), (bob, "kudu"), (alice, "olaya")].map { #"{"user_id":"\#($0.0)","place_id":"\#($0.1)"}"# }
        let inserted = try await transport.send(TransportRequest(method: "POST", url: serving.baseURL + "/rest/v1/favorites", headers: service,
                                                                 body: Array(("[" + rows.joined(separator: ",") + "]").utf8)))
        #expect(inserted.status == 201)
        #expect(try await results.next()?.map(\.placeID) == ["kudu", "olaya"], "both rows in the first result after the transaction, never one")
        var changes = live.makeAsyncIterator()
        let first = await changes.next(), second = await changes.next()
        #expect([first?.table, second?.table] == ["favorites", "favorites"], "applied from realtime (a pull reports no live change)")
        // The socket is closed before the server stops: a graceful shutdown waits for open connections.
        following.cancel()
        _ = await following.result
    }
}
