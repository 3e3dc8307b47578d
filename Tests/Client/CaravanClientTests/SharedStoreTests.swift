@testable import CaravanClient
import CaravanClientModels
import CaravanClientSQLite
import CaravanCore
import Foundation
import Places
import Synchronization
import Testing

/// One store file opened twice, as an app and its widget do (two connections; the two-process walk against a server is
/// `SharedStoreProcessTests`): the other's commits reach live queries and the status counts once noticed, and one
/// sync runs at a time.
@Suite("A store shared by processes", .timeLimit(.minutes(2)))
struct SharedStoreTests {
    static func pair() throws -> (app: LocalStore, widget: LocalStore) {
        let app = try Fixture.store()
        return (app, try LocalStore(path: app.path, tables: PlacesModule.module.tables.filter(\.isSynced)))
    }

    @Test func anotherConnectionsWriteReachesLiveQueriesAndCountsOnceNoticed() async throws {
        let (app, widget) = try Self.pair()
        var results = try app.live(Favorite.self).makeAsyncIterator()
        #expect(try await results.next() == [])
        let status = SyncStatusMonitor(store: app)
        var updates = status.updates().makeAsyncIterator()
        #expect(await updates.next()?.pending == 0)
        #expect(try app.noticeOtherProcesses() == false, "nothing committed elsewhere yet")
        try widget.insert("favorites", Fixture.favorite("kudu"), now: Fixture.now)
        #expect(try app.noticeOtherProcesses() == true)
        #expect(try await results.next()?.map(\.placeID) == ["kudu"], "the other connection's row, in the live query")
        while let update = await updates.next(), update.pending != 1 {}
        #expect(try app.noticeOtherProcesses() == false, "noticed once")
        // This store's own writes are seen without a look (GRDB observes its own pool).
        try app.insert("favorites", Fixture.favorite("olaya"), now: Fixture.now)
        #expect(try await results.next()?.count == 2)
        #expect(try app.noticeOtherProcesses() == false)
    }

    @Test func oneSyncAtATimeAcrossConnections() async throws {
        let (app, widget) = try Self.pair()
        try widget.insert("favorites", Fixture.favorite("kudu"), now: Fixture.now)
        let transport = CountingTransport()
        let api = CaravanAPI(baseURL: "http://fake", apiKey: "anon", transport: transport)
        let engine = SyncEngine(store: widget, api: api, session: SessionManager(store: widget, api: api, now: { 0 }), now: { 0 })
        let held = try #require(try app.lockSync())
        #expect(try widget.lockSync() == nil, "the lock is the store's, not the connection's")
        let report = try await engine.sync(tables: ["favorites"])
        #expect(report.otherProcessSyncing && report.pushed == 0 && transport.requests.withLock { $0 } == 0, "nothing sent while another syncs")
        #expect(report.json["other_process_syncing"] == .bool(true))
        held.release()
        let lock = try #require(try widget.lockSync(), "free once released")
        lock.release()
        await #expect(throws: ClientError.self) { try await engine.sync(tables: ["favorites"]) }
        #expect(transport.requests.withLock { $0 } > 0, "the lock free, the sync ran")
    }
}

/// A server that is never there: counts the requests and answers none.
final class CountingTransport: HTTPTransport {
    let requests = Mutex(0)

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        requests.withLock { $0 += 1 }
        throw ClientError(.refused, "no server in this test")
    }
}
