import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import CaravanPostgres
import CaravanTesting
import Foundation
import Logging
import Places
import Testing

/// A server whose `database_url` goes through PgBouncer in transaction mode (Debian's pgbouncer 1.18, which keeps no
/// prepared statement across transactions) with two server connections shared by the server's whole pool, and whose
/// `listen_url` reaches PostgreSQL directly: REST writes and reads, an RPC, a sync push and pull, and a realtime
/// event all work. (With `db_prepared_statements=true` instead of `db_pooler=transaction` the same walk fails: a
/// statement prepared on one server connection is unknown on the next.) Skipped without pgbouncer unless
/// `CARAVAN_REQUIRE_POSTGRES=1`.
@Suite("Behind PgBouncer in transaction mode", .timeLimit(.minutes(3)))
struct PoolerTests {
    @Test func aServerBehindATransactionPoolerServesRESTRPCSyncAndRealtime() async throws {
        guard PgBouncerScript.isInstalled else {
            let reason = "pooler test SKIPPED: pgbouncer is not installed (apt-get install -y pgbouncer)"
            if ProcessInfo.processInfo.environment["CARAVAN_REQUIRE_POSTGRES"] == "1" {
                throw CaravanError(.internalFailure, reason + "; this run requires it (CARAVAN_REQUIRE_POSTGRES=1)")
            }
            try Test.cancel(Comment(rawValue: reason))
        }
        let direct = try await Engine.makeEmptyPostgresDatabase()
        guard var pooled = URLComponents(string: direct), let port = pooled.port else { throw CaravanError(.invalidConfiguration, "no port in \(direct)") }
        let state = NSTemporaryDirectory() + "caravan-pgbouncer-" + UUID().uuidString.prefix(8).lowercased()
        pooled.port = try await PgBouncerScript.start(targetPort: port, poolSize: 2, state: state)
        let settings = ["port": "0", "data_dir": temporaryDirectory(), "database_url": pooled.string ?? "", "listen_url": direct,
                        "db_pooler": "transaction"]
        let transport = AsyncHTTPClientTransport()
        do {
            try await DeviceUpgradeTests().withServer(settings, PlacesModule.module) { serving in
                try await walk(serving, transport)
                try await checkConnections(direct)
            }
        } catch {
            try await transport.shutdown()
            try await PgBouncerScript.stop(state: state)
            throw error
        }
        try await transport.shutdown()
        try await PgBouncerScript.stop(state: state)
    }

    /// PostgreSQL sees the pooler's two server connections and the direct LISTEN connections, not the server's pool
    /// of twenty (plus this check's own connection).
    func checkConnections(_ direct: String) async throws {
        let rows = try await PostgresStore.withRunning(try PostgresStoreConfiguration(url: direct)) { store in
            try await store.unsafeRows("""
                SELECT count(*)::text, count(*) FILTER (WHERE query ILIKE 'LISTEN%')::text FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """)
        }
        let backends = Int(rows.first?[0] ?? "") ?? -1, listening = Int(rows.first?[1] ?? "") ?? -1
        #expect((1...4).contains(backends), "\(backends) connections reached PostgreSQL: at most 2 from the pooler and 2 listening")
        #expect(listening >= 1, "no LISTEN connection reached PostgreSQL directly")
    }

    func walk(_ serving: CaravanHost.Serving, _ transport: AsyncHTTPClientTransport) async throws {
        let service = [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
        func send(_ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, body: String) {
            let response = try await transport.send(TransportRequest(method: method, url: serving.baseURL + path, headers: service, body: body.map { Array($0.utf8) }))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        // REST: writes, reads (several times: each read after the first runs a statement shape seen before), an RPC.
        let created = try await send("POST", "/rest/v1/places",
                                     #"[{"id":"kudu","name_ar":"كودو","category":"cafe","category_ar":"مقهى"},{"id":"olaya","name_ar":"العليا","category":"cafe","category_ar":"مقهى"}]"#)
        #expect(created.status == 201, "\(created.body)")
        for _ in 0..<4 {
            let read = try await send("GET", "/rest/v1/places?select=id&order=id")
            #expect(read.status == 200 && read.body == #"[{"id":"kudu"},{"id":"olaya"}]"#, "\(read.body)")
            let counted = try await send("POST", "/rest/v1/rpc/count_places", #"{"cat":"cafe"}"#)
            #expect(counted.status == 200 && counted.body == "2", "\(counted.body)")
        }

        // Sync: a device's first pull, then a push of a favorite written offline, through the pooler.
        let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
        let store = try LocalStore(path: temporaryDirectory() + "/alice.sqlite", tables: PlacesModule.module.tables.filter(\.isSynced))
        let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        let alice = try await session.signUp(email: "alice@example.com", password: "correct horse battery").userID
        let engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        let realtime = RealtimeClient(store: store, engine: engine, session: session, logger: Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() })
        let (live, arrived) = AsyncStream.makeStream(of: LiveChange.self)
        let following = Task { try await realtime.run(tables: ["favorites"]) { arrived.yield($0) } }
        defer { following.cancel() }
        var status = engine.status.updates().makeAsyncIterator()
        while let now = await status.next(), !(now.connected && now.lastSyncedAt != nil) {}   // joined, and the first pull done

        _ = try await store.insert(Favorite(id: UUID(), userID: try #require(UUID(uuidString: alice)), placeID: "kudu"))
        // A sync the realtime client started may be under way: sync again until the push has landed (bounded).
        var pushed = (status: 0, body: "")
        let landed = try await eventually(within: .seconds(60)) {
            _ = try await engine.sync(tables: ["favorites"])
            pushed = try await send("GET", "/rest/v1/favorites?select=place_id&user_id=eq.\(alice)")
            return pushed.body == #"[{"place_id":"kudu"}]"#
        }
        #expect(landed, "the pushed favorite is on the server: \(pushed.body)")

        // Realtime: a row written by REST reaches the device over its socket (the change listener's LISTEN goes
        // straight to PostgreSQL).
        let favorite = try await send("POST", "/rest/v1/favorites", #"{"user_id":"\#(alice)","place_id":"olaya"}"#)
        #expect(favorite.status == 201, "\(favorite.body)")
        var changes = live.makeAsyncIterator()
        var tables: [String] = []
        while tables.isEmpty, let change = await changes.next() { tables.append(change.table) }
        #expect(tables == ["favorites"], "the REST write arrived over realtime")
        // The socket is closed before the server stops: a graceful shutdown waits for open connections.
        following.cancel()
        _ = await following.result
    }
}
