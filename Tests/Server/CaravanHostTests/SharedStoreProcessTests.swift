import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Places
import Synchronization
import Testing

/// One store, two processes (an app and its widget): this test process holds the store with a live query and a sync
/// engine; a child `caravan-client` on the same file writes a row offline. The row reaches the live query here, is
/// pushed once by this process's sync, and a child sync run while this one pushes does nothing (one sync at a time).
@Suite("A store shared by two processes", .timeLimit(.minutes(3)))
struct SharedStoreProcessTests {
    static let scope = ["places", "favorites"]

    @Test func aChildsWriteIsLiveHereAndPushedOnceWhileItsSyncWaitsItsTurn() async throws {
        let settings = ["port": "0", "data_dir": temporaryDirectory()]
        let transport = ChildSyncDuringPush()
        do {
            try await DeviceUpgradeTests().withServer(settings, PlacesModule.module) { serving in try await walk(serving, transport) }
        } catch {
            try await transport.base.shutdown()
            throw error
        }
        try await transport.base.shutdown()
    }

    func walk(_ serving: CaravanHost.Serving, _ transport: ChildSyncDuringPush) async throws {
        let created = try await transport.send(TransportRequest(
            method: "POST", url: serving.baseURL + "/rest/v1/places",
            headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
            body: Array(#"{"id":"kudu","name_ar":"كودو","category":"cafe","category_ar":"مقهى"}"#.utf8)))
        #expect(created.status == 201)
        let path = temporaryDirectory() + "/shared.sqlite"
        let store = try LocalStore(path: path, tables: PlacesModule.module.tables.filter(\.isSynced))
        let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
        let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        let engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        let user = try await session.signUp(email: "widget@example.com", password: "correct horse battery").userID
        _ = try await engine.sync(tables: Self.scope)
        let client = try ClientBinary()

        var favorites = try store.live(Favorite.self).makeAsyncIterator()
        #expect(try await favorites.next() == [])
        var status = engine.status.updates().makeAsyncIterator()
        let following = Task { try await store.followOtherProcesses(every: .milliseconds(20)) }
        defer { following.cancel() }

        // The widget writes (offline: no server needed); the app's live query and pending count follow.
        let inserted = try await client.run(serving, path, ["insert", "favorites", #"{"user_id":"\#(user)","place_id":"kudu","note":"from the widget"}"#])
        #expect(inserted.status == 0, "\(inserted.stderr)")
        #expect(try await favorites.next()?.map(\.note) == ["from the widget"], "the other process's row, in this process's live query")
        while let update = await status.next(), update.pending != 1 {}

        // The app syncs; in the middle of its push the widget syncs too: it finds the store's sync taken and does nothing.
        transport.during = { try await client.run(serving, path, ["sync", "--tables", Self.scope.joined(separator: ","), "--json"]) }
        let report = try await engine.sync(tables: Self.scope)
        #expect(report.pushed == 1 && !report.otherProcessSyncing)
        let concurrent = try #require(transport.outcome.withLock { $0 })
        #expect(concurrent.status == 0 && concurrent.stdout.contains(#""other_process_syncing":true"#) && concurrent.stdout.contains(#""pushed":0"#),
                "\(concurrent.stdout) \(concurrent.stderr)")
        // Its turn now: nothing left to push.
        let after = try await client.run(serving, path, ["sync", "--tables", Self.scope.joined(separator: ","), "--json"])
        #expect(after.status == 0 && after.stdout.contains(#""pushed":0"#) && !after.stdout.contains("other_process"), "\(after.stdout) \(after.stderr)")
        let onServer = try await transport.send(TransportRequest(
            method: "GET", url: serving.baseURL + "/rest/v1/favorites?select=note",
            headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)")]))
        #expect(try JSONParser.parse(String(decoding: onServer.body, as: UTF8.self)) == .array([.object([("note", .string("from the widget"))])]),
                "the widget's row reached the server once")
        #expect(try store.outbox().allSatisfy { $0.state != .pending })
    }
}

/// The HTTP client of the test's process; `during` runs (once) when its first push is under way, before the push is sent.
final class ChildSyncDuringPush: HTTPTransport {
    let base = AsyncHTTPClientTransport()
    let outcome = Mutex<ChildProcess.Outcome?>(nil)
    private let pending = Mutex<(@Sendable () async throws -> ChildProcess.Outcome)?>(nil)

    var during: (@Sendable () async throws -> ChildProcess.Outcome)? {
        get { pending.withLock { $0 } }
        set { pending.withLock { $0 = newValue } }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.url.contains("/sync/v1/push"), let run = pending.withLock({ value in defer { value = nil }; return value }) {
            let result = try await run()
            outcome.withLock { $0 = result }
        }
        return try await base.send(request)
    }
}
