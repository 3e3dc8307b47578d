import CaravanCore
@testable import CaravanRealtime
import Logging
import Synchronization
import Testing

/// A change log in memory whose reads can be made to fail.
final class MemoryChangeLog: ChangeLogSource {
    let entries: Mutex<[Change]>
    let failing = Mutex(false)
    let reads = Mutex(0)

    init(_ entries: [Change]) { self.entries = Mutex(entries) }

    func changes(after seq: Int64, limit: Int) async throws -> [Change] {
        reads.withLock { $0 += 1 }
        if failing.withLock({ $0 }) { throw CaravanError(.storageUnavailable, "down") }
        return Array(entries.withLock { $0 }.filter { $0.seq > seq }.prefix(limit))
    }

    func latestChangeSeq() async throws -> Int64 { entries.withLock { $0.last?.seq ?? 0 } }
}

@Suite struct ChangeFeedTests {
    func feed(_ log: MemoryChangeLog, hub: RealtimeHub, pageSize: Int, maxRun: Int) -> ChangeFeed {
        var configuration = ChangeFeed.Configuration()
        configuration.pageSize = pageSize
        configuration.maxRun = maxRun
        return ChangeFeed(source: log, wakeups: ChangePublisher(), hub: hub, configuration: configuration, logger: Logger(label: "test"))
    }

    @Test(arguments: [(3, 100), (3, 4), (100, 100)])
    func everyChangeAfterTheCursorIsDispatchedOnceInSeqOrder(pageSize: Int, maxRun: Int) async throws {
        let hub = makeHub()
        let box = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")])
        _ = await drain(box)
        let log = MemoryChangeLog((1...10).map { change(.insert, table: "places", record: place("p\($0)", active: true), old: nil, seq: Int64($0 * 2)) })
        let cursor = await feed(log, hub: hub, pageSize: pageSize, maxRun: maxRun).deliverPending(after: 6)
        #expect(cursor == 20)
        #expect(changes(await drain(box)).map { $0["seq"] } == (4...10).map { JSONValue.integer(Int64($0 * 2)) })
    }

    @Test func aFailedReadKeepsTheCursorSoNothingIsSkipped() async throws {
        let hub = makeHub()
        let box = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")])
        _ = await drain(box)
        let log = MemoryChangeLog([change(.insert, table: "places", record: place("p1", active: true), old: nil, seq: 1)])
        let follower = feed(log, hub: hub, pageSize: 10, maxRun: 10)
        log.failing.withLock { $0 = true }
        #expect(await follower.deliverPending(after: 0) == 0)
        log.failing.withLock { $0 = false }
        #expect(await follower.deliverPending(after: 0) == 1)
        #expect(changes(await drain(box)).count == 1)
    }
}
