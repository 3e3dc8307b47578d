import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import Foundation
import Logging
import Observation
import Places
import ServiceLifecycle
import Synchronization
import Testing

/// The sync status across an offline/online cycle against a real server (`caravan serve` in-process, stopped and
/// started again on the same port and data directory).
@Suite("Sync status", .timeLimit(.minutes(3)))
struct SyncStatusTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    /// Runs a server on `port` (0: any) over `dataDirectory` while `body` runs, then stops it.
    func withServer(port: Int, dataDirectory: String, _ body: (CaravanHost.Serving) async throws -> Void) async throws {
        try await CaravanHost.withServing(["port": "\(port)", "data_dir": dataDirectory], apps: [PlacesModule.module], logger: logger, body)
    }

    @Test func statusFollowsAnOfflineOnlineCycle() async throws {
        try await AsyncHTTPClientTransport.using { try await offlineOnlineCycle($0) }
    }

    func offlineOnlineCycle(_ transport: AsyncHTTPClientTransport) async throws {
        let dataDirectory = NSTemporaryDirectory() + "caravan-status-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let storePath = dataDirectory + "-device.sqlite"
        let recorded = Recorded()
        var port = 0
        var api: CaravanAPI!
        var store: LocalStore!
        var engine: SyncEngine!
        var following: Task<Void, Never>?
        defer { following?.cancel() }

        // Online: sign up, a place to favour, a first sync.
        try await withServer(port: 0, dataDirectory: dataDirectory) { serving in
            port = serving.port
            api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            store = try LocalStore(path: storePath, tables: PlacesModule.module.tables.filter(\.isSynced))
            let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
            engine = SyncEngine(store: store, api: api, session: session, retry: RetryPolicy(attempts: 2, baseDelay: .milliseconds(1)),
                                sleep: { _ in }, now: { recorded.clock.withLock { $0 } })
            #expect(engine.status.current == SyncStatus(), "nothing known before the first sync")
            let updates = engine.status.updates()
            following = Task { for await status in updates { recorded.statuses.withLock { $0.append(status) } } }
            _ = try await session.signUp(email: "status@example.com", password: "correct horse battery")
            let created = try await transport.send(TransportRequest(
                method: "POST", url: serving.baseURL + "/rest/v1/places",
                headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
                body: Array(#"{"id":"kudu","name_ar":"كودو","category":"cafe","category_ar":"مقهى"}"#.utf8)))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")

            _ = try await engine.sync(tables: ["places", "favorites"])
            let status = engine.status.current
            #expect(status.connected && !status.uploading && !status.downloading)
            #expect(status.lastSyncedAt == Date(timeIntervalSince1970: 1_795_000_000) && status.lastError == nil)
            #expect(recorded.statuses.withLock { $0 }.contains { $0.downloading }, "the pull was shown while it ran")
        }
        let userID = try #require(try store.session()?.userID)
        let me = try #require(UUID(uuidString: userID))

        // Offline: two writes wait; the sync fails with the offline code and keeps them.
        try await store.insert(Favorite(id: UUID(), userID: me, placeID: "kudu", note: "offline", createdAt: nil))
        try await store.insert(Favorite(id: UUID(), userID: me, placeID: "no-such-place", note: "refused later", createdAt: nil))
        try await Self.waitUntil(engine.status) { $0.pending == 2 }
        recorded.clock.withLock { $0 += 60_000_000 }
        await #expect(throws: ClientError.self) { try await engine.sync(tables: ["places", "favorites"]) }
        var status = engine.status.current
        #expect(!status.connected && !status.uploading && !status.downloading)
        #expect(status.lastError?.code == "offline")
        #expect(status.pending == 2 && status.parked == 0)
        #expect(status.lastSyncedAt == Date(timeIntervalSince1970: 1_795_000_000), "the last sync that finished")

        // Online again: the writes go up — one applied, one refused and parked — and the error clears.
        let before = recorded.statuses.withLock { $0.count }
        try await withServer(port: port, dataDirectory: dataDirectory) { _ in
            let report = try await engine.sync(tables: ["places", "favorites"])
            #expect(report.pushed == 1 && report.rejected == 1)
        }
        status = engine.status.current
        #expect(status.connected && !status.uploading && !status.downloading)
        #expect(status.pending == 0 && status.parked == 1)
        #expect(status.lastError == nil)
        #expect(status.lastSyncedAt == Date(timeIntervalSince1970: 1_795_000_060))
        let during = recorded.statuses.withLock { Array($0[before...]) }
        #expect(during.contains { $0.uploading && $0.connected }, "the push was shown while it ran")
    }

    @MainActor
    @Test func observedSyncStatusFollowsLocalWrites() async throws {
        let store = try Fixture.store()
        let api = CaravanAPI(baseURL: "http://fake", apiKey: "anon", transport: PagedPullTransport(pages: 1, perPage: 0, row: { _ in .null }) { _ in })
        let engine = SyncEngine(store: store, api: api, session: SessionManager(store: store, api: api, now: { 0 }), now: { 0 })
        let observed = ObservedSyncStatus(engine.status)
        #expect(observed.status.pending == 0)
        try store.insert("favorites", Fixture.favorite("p1"), now: Fixture.now)
        while observed.status.pending == 0 {
            await withCheckedContinuation { continuation in
                withObservationTracking { _ = observed.status } onChange: { continuation.resume() }
            }
        }
        #expect(observed.status.pending == 1 && !observed.status.connected)
        observed.cancel()
    }

    /// The test's clock (microseconds) and the statuses seen.
    final class Recorded: Sendable {
        let clock = Mutex<Int64>(1_795_000_000_000_000)
        let statuses = Mutex<[SyncStatus]>([])
    }

    /// Waits until the monitor's status satisfies `condition`.
    static func waitUntil(_ monitor: SyncStatusMonitor, _ condition: (SyncStatus) -> Bool) async throws {
        for await status in monitor.updates() where condition(status) { return }
    }
}
