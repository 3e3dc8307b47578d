@testable import CaravanClient
import CaravanCore
import Foundation
import LanguageExchange
import Testing

/// LangMatcher's declared client cache (`LanguageExchangeModule.clientCaches`) on a real local store, checked against
/// an independent computation of what the design keeps.
@Suite("LangMatcher client cache rules")
struct LangMatcherCacheTests {
    static let day: Int64 = 86_400
    static let now: Int64 = 1_795_600_000

    static func store() throws -> LocalStore {
        let directory = NSTemporaryDirectory() + "caravan-langmatcher-cache-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let tables = LanguageExchangeModule.module.tables.filter { ["messages", "profiles"].contains($0.name) }
        return try LocalStore(path: directory + "/client.sqlite", tables: tables, caches: LanguageExchangeModule.clientCaches)
    }

    struct Message: Hashable {
        let id: String
        let conversation: String
        let createdAt: Int64
    }

    static func record(_ m: Message) -> JSONValue {
        .object([("id", .string(m.id)), ("conversation_id", .string(m.conversation)), ("sender_id", .string(UUID().uuidString.lowercased())),
                 ("receiver_id", .string(UUID().uuidString.lowercased())), ("original_text", .string("m")), ("original_language", .string("en")),
                 ("created_at", .string(Timestamp.format(microseconds: m.createdAt * 1_000_000)))])
    }

    /// What the design keeps, computed here: per conversation the 100 newest (by time, then id), none older than 90
    /// days, but every unsent message whatever its age or rank.
    static func expectedKept(_ all: [Message], unsent: Set<String>) -> Set<String> {
        var kept: Set<String> = []
        for (_, messages) in Dictionary(grouping: all, by: \.conversation) {
            let newestFirst = messages.sorted { $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.id > $1.id }
            for (rank, message) in newestFirst.enumerated() {
                let fits = rank < 100 && message.createdAt >= now - 90 * day
                if fits || unsent.contains(message.id) { kept.insert(message.id) }
            }
        }
        return kept
    }

    @Test func messagesKeepTheNewestHundredPerConversationForNinetyDaysButNeverAnUnsentOne() throws {
        let store = try Self.store()
        var random = SplitMix64(state: 17)
        let conversations = (0..<4).map { _ in UUID().uuidString.lowercased() }
        let counts = [150, 100, 40, 3]
        var pulled: [Message] = []
        for (conversation, count) in zip(conversations, counts) {
            for _ in 0..<count {
                let age = Int64.random(in: 0..<(120 * Self.day), using: &random)
                pulled.append(Message(id: UUID().uuidString.lowercased(), conversation: conversation, createdAt: Self.now - age))
            }
        }
        let changes = pulled.enumerated().map { index, message in
            PulledRow(seq: Int64(index + 1), table: "messages", operation: .upsert, key: .object([("id", .string(message.id))]), record: Self.record(message))
        }
        _ = try store.apply(PullReply(changes: changes, cursor: "c", hasMore: false), scope: ["messages"], now: Self.now)
        // Written offline long ago (a device clock far behind): past both rules, and still not sent.
        let unsent = Message(id: UUID().uuidString.lowercased(), conversation: conversations[0], createdAt: Self.now - 200 * Self.day)
        try store.insert("messages", Self.record(unsent), now: Timestamp.format(microseconds: unsent.createdAt * 1_000_000))

        try store.enforceCaches(now: Self.now)

        let kept = Set(try store.rows("messages").compactMap { row -> String? in if case .string(let id)? = row["id"] { id } else { nil } })
        let expected = Self.expectedKept(pulled + [unsent], unsent: [unsent.id])
        #expect(kept == expected)
        #expect(kept.contains(unsent.id))
        #expect(kept.count < pulled.count, "the rules removed something")
        #expect(try store.outbox().count == 1, "the outbox is untouched")
    }

    @Test func translationsKeepTheThousandMostRecentlyUsed() throws {
        let store = try Self.store()
        let cache = LanguageExchangeModule.translationsCache
        for i in 0..<1_000 { try store.cache("t\(i)", in: cache, key: "k\(i)", now: Int64(i)) }
        #expect(try store.cachedValue(cache, key: "k0", now: 1_000) == "t0", "k0 is now the most recently used")
        try store.cache("t1000", in: cache, key: "k1000", now: 1_001)
        #expect(try store.cachedValue(cache, key: "k1", now: 1_002) == nil, "k1 was the least recently used of 1,001")
        let present = try (0...1_000).filter { try store.cachedValue(cache, key: "k\($0)", now: 2_000) != nil }
        #expect(present.count == 1_000)
        #expect(present.contains(0) && present.contains(1_000))
    }

    @Test func profilesReadFromTheServerExpireAfterADay() throws {
        let store = try Self.store()
        let profiles = try store.table("profiles")
        let id = UUID().uuidString.lowercased()
        let row = JSONValue.object([("id", .string(id)), ("first_name", .string("Omar")), ("native_language", .string("en"))])
        try store.keepFetched(profiles, rowKey: #"{"id":"\#(id)"}"#, serverRow: row, now: Self.now)
        #expect(try store.enforceCaches(now: Self.now + Self.day - 1).reduce(0, +) == 0)
        #expect(try store.rows("profiles").count == 1)
        try store.enforceCaches(now: Self.now + Self.day + 1)
        #expect(try store.rows("profiles").isEmpty)
    }
}
