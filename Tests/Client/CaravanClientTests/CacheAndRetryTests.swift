@testable import CaravanClient
import CaravanCore
import Foundation
import Places
import Testing

@Suite("Cache rules, retry policy and push order")
struct CacheAndRetryTests {
    /// Pulled places, as the sync engine applies them (fetched at `now`).
    static func pulled(_ store: LocalStore, _ ids: [String], createdAt: [String]? = nil, now: Int64) throws {
        let changes = ids.enumerated().map { i, id in
            PulledRow(seq: Int64(i + 1), table: "places", operation: .upsert, key: .object([("id", .string(id))]),
                      record: .object([("id", .string(id)), ("name_ar", .string(id)), ("category", .string(i % 2 == 0 ? "cafe" : "park")),
                                       ("category_ar", .string("x")), ("created_at", .string(createdAt?[i] ?? "2026-01-01T00:00:00.000000Z"))]))
        }
        _ = try store.apply(PullReply(changes: changes, cursor: "c", hasMore: false), scope: ["places"], now: now)
    }

    @Test func timeToLiveRemovesRowsFetchedTooLongAgo() throws {
        let store = try Fixture.store(caches: [.timeToLive(table: "places", seconds: 86_400)])
        try Self.pulled(store, ["a", "b"], now: 1_000_000)
        try Self.pulled(store, ["c"], now: 1_050_000)
        #expect(try store.enforceCaches(now: 1_080_000) == [0])
        #expect(try store.enforceCaches(now: 1_090_000) == [2])
        #expect(try store.rows("places").map { $0["id"] } == [.string("c")])
        #expect(try store.enforceCaches(now: 1_140_001) == [1])
    }

    @Test func keepLastKeepsTheNewestRowsPerGroup() throws {
        let store = try Fixture.store(caches: [.keepLast(table: "places", count: 2, groupedBy: "category", orderedBy: "created_at")])
        let times = (0..<7).map { "2026-01-0\($0 + 1)T00:00:00.000000Z" }
        try Self.pulled(store, (0..<7).map { "p\($0)" }, createdAt: times, now: 0)
        // cafe: p0 p2 p4 p6 → keep p4 p6; park: p1 p3 p5 → keep p3 p5
        #expect(try store.enforceCaches(now: 0) == [3])
        #expect(Set(try store.rows("places").compactMap { $0["id"] }) == [.string("p4"), .string("p6"), .string("p3"), .string("p5")])
    }

    @Test func purgeNeverRemovesAnUnsyncedRow() throws {
        let store = try Fixture.store(caches: [.purgeOlderThan(table: "favorites", column: "created_at", seconds: 90 * 86_400)])
        let old = try store.insert("favorites", Fixture.favorite("p1"), now: "2020-01-01T00:00:00.000000Z")
        let now = Int64(Date(timeIntervalSince1970: 1_790_000_000).timeIntervalSince1970)
        #expect(try store.enforceCaches(now: now) == [0], "the unsynced favorite stays")
        _ = try store.apply(PullReply(changes: [PulledRow(seq: 1, table: "favorites", operation: .upsert, key: .object([("id", old["id"]!)]),
                                                                record: old)], cursor: "c", hasMore: false), scope: ["favorites"], now: now)
        try store.record(try store.outbox().map { PushVerdict(id: $0.mutationID, status: .applied(seq: 0)) })
        #expect(try store.enforceCaches(now: now) == [1], "once synced, an old row goes")
    }

    @Test func leastRecentlyUsedEvictsBeyondItsSize() throws {
        let store = try Fixture.store(caches: [.leastRecentlyUsed(cache: "translations", maxEntries: 3)])
        for (i, word) in ["a", "b", "c"].enumerated() { try store.cache(word.uppercased(), in: "translations", key: word, now: Int64(i)) }
        #expect(try store.cachedValue("translations", key: "a", now: 10) == "A")   // a is now the most recent
        try store.cache("D", in: "translations", key: "d", now: 11)
        #expect(try store.cachedValue("translations", key: "b", now: 12) == nil, "b was least recently used")
        #expect(try store.cachedValue("translations", key: "a", now: 13) == "A")
        #expect(try store.cachedValue("translations", key: "c", now: 14) == "C")
    }

    @Test func backoffGrowsWithJitterAndHonoursRetryAfter() {
        let policy = RetryPolicy(attempts: 5, baseDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(policy.delay(attempt: 1, jitter: 0, retryAfter: nil) == .milliseconds(50))
        #expect(policy.delay(attempt: 1, jitter: 1, retryAfter: nil) == .milliseconds(100))
        #expect(policy.delay(attempt: 3, jitter: 1, retryAfter: nil) == .milliseconds(400))
        #expect(policy.delay(attempt: 9, jitter: 1, retryAfter: nil) == .seconds(1))
        #expect(policy.delay(attempt: 2, jitter: 0.5, retryAfter: 3) == .seconds(3))
    }

    @Test func higherPrioritiesGoFirstButARowsWritesStayInOrder() throws {
        let store = try Fixture.store()
        let a = try store.insert("favorites", Fixture.favorite("a"), priority: .low, now: Fixture.now)
        try store.insert("favorites", Fixture.favorite("b"), priority: .normal, now: Fixture.now)
        try store.insert("favorites", Fixture.favorite("c"), priority: .immediate, now: Fixture.now)
        try store.update("favorites", key: .object([("id", a["id"]!)]), .object([("note", .string("urgent"))]), priority: .high, now: Fixture.now)
        let order = try store.pendingBatch(limit: 10).map { ($0.record?["place_id"] ?? $0.record?["note"]) ?? .null }
        #expect(order == [.string("c"), .string("a"), .string("urgent"), .string("b")])
    }
}
