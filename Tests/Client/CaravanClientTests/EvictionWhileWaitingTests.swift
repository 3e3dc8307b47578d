@testable import CaravanClient
import CaravanCore
import Foundation
import Testing

/// A pull evicts rows that left the caller's view, but a row with a local write still waiting stays for the write's
/// verdict; once the write is settled, the row leaves unless the server sent it again after the eviction.
@Suite("Local store: rows evicted while a write waited")
struct EvictionWhileWaitingTests {
    static let evictMine = PulledRow(seq: 10, table: "favorites", operation: .evict, key: .object([("user_id", .string(Fixture.user))]), record: nil)

    /// A favorite written locally (pending), then a pull that evicts every favorite of the user.
    static func evictedWhileWaiting() throws -> (LocalStore, id: String, row: JSONValue) {
        let store = try Fixture.store()
        let row = try store.insert("favorites", Fixture.favorite("p1"), now: Fixture.now)
        guard case .string(let id)? = row["id"] else { throw Fixture.Stop() }
        _ = try store.apply(PullReply(changes: [evictMine], cursor: "c1", hasMore: false), scope: ["favorites"], now: 0)
        #expect(try store.rows("favorites").count == 1, "the waiting write keeps its row")
        return (store, id, row)
    }

    static func acknowledge(_ store: LocalStore, at seq: Int64) throws -> [String] {
        let ids = try store.outbox().map(\.mutationID)
        try store.record(ids.map { PushVerdict(id: $0, status: .applied(seq: seq)) })
        return ids
    }

    @Test func anAppliedWriteWhoseRowStaysHiddenLeavesOnceThePullCatchesUp() throws {
        let (store, _, _) = try Self.evictedWhileWaiting()
        let ids = try Self.acknowledge(store, at: 12)
        // The pull passes the write's change without sending it: the server hides the row.
        _ = try store.apply(PullReply(changes: [], cursor: "c2", hasMore: false), scope: ["favorites"], now: 0)
        #expect(try store.rows("favorites").count == 1, "acknowledged, not yet caught up")
        try store.forgetAcknowledged(ids, scope: ["favorites"], syncedAt: Fixture.now, durationMilliseconds: 1)
        #expect(try store.rows("favorites").isEmpty)
    }

    @Test func anAppliedWriteWhoseRowTheServerSendsAgainStays() throws {
        let (store, id, row) = try Self.evictedWhileWaiting()
        let ids = try Self.acknowledge(store, at: 12)
        let again = PulledRow(seq: 12, table: "favorites", operation: .upsert, key: .object([("id", .string(id))]), record: row)
        _ = try store.apply(PullReply(changes: [again], cursor: "c2", hasMore: false), scope: ["favorites"], now: 0)
        try store.forgetAcknowledged(ids, scope: ["favorites"], syncedAt: Fixture.now, durationMilliseconds: 1)
        #expect(try store.rows("favorites").map { $0["id"] } == [.string(id)])
    }

    @Test func aRowEvictedWithoutAWaitingWriteLeavesAtOnce() throws {
        let store = try Fixture.store()
        let record = JSONValue.object([("id", .string("bbbbbbbb-0000-4000-8000-00000000000b")), ("user_id", .string(Fixture.user)), ("place_id", .string("p2"))])
        let pulled = PulledRow(seq: 1, table: "favorites", operation: .upsert, key: .object([("id", .string("bbbbbbbb-0000-4000-8000-00000000000b"))]), record: record)
        _ = try store.apply(PullReply(changes: [pulled], cursor: "c1", hasMore: false), scope: ["favorites"], now: 0)
        _ = try store.apply(PullReply(changes: [Self.evictMine], cursor: "c2", hasMore: false), scope: ["favorites"], now: 0)
        #expect(try store.rows("favorites").isEmpty)
    }
}
