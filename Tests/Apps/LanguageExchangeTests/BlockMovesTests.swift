import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
@testable import LanguageExchange
import Testing

/// Visibility moves with LangMatcher's `not exists` rule: a block takes a pair's messages off both devices, an unblock brings
/// them back, and a third user's device is never told anything about the pair.
@Suite("LanguageExchange: rows move with blocks")
struct BlockMovesTests {
    static let tables = "messages"

    static func user(_ n: Int) -> Identity { Identity(role: .authenticated, userID: F.uuid(n)) }

    /// Blocks are kept beside the blocker's preferences (their foreign key).
    static func preferences(_ f: F, _ users: [Int]) async throws {
        try await f.asService { tx in
            _ = try await tx.insert(users.map { RowValues(["user_id": .text(F.uuid($0))]) }, into: S.userPreferences, conflict: nil)
        }
    }

    static func block(_ f: F, _ blocker: Int, _ blocked: Int) async throws {
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["blocker_id": .text(F.uuid(blocker)), "blocked_id": .text(F.uuid(blocked))])], into: S.blocks, conflict: nil)
        }
    }

    static func unblock(_ f: F, _ blocker: Int, _ blocked: Int) async throws {
        try await f.asService { tx in
            _ = try await tx.delete(from: S.blocks, where: try S.blocks.matching(["blocker_id": .text(F.uuid(blocker)), "blocked_id": .text(F.uuid(blocked))]))
        }
    }

    @Test("Sam blocks Amal: her 3 messages leave her device; the unblock brings the 3 back; Jo's device gets nothing", arguments: Engine.allCases)
    func blockAndUnblock(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"]), F.profile(3, native: "ar", learning: ["en"])])
        try await Self.preferences(f, [1, 2, 3])
        let conversation = try await MessageTests.matchedPair(f, 1, 2)
        let other = try await MessageTests.matchedPair(f, 1, 3)
        _ = try await f.asService { tx in
            try await tx.insert([MessageTests.message(conversation, from: 2, to: 1, "hi", at: 1), MessageTests.message(conversation, from: 1, to: 2, "hello", at: 2),
                                 MessageTests.message(conversation, from: 2, to: 1, "bye", at: 3), MessageTests.message(other, from: 1, to: 3, "yo", at: 4)],
                                into: S.messages, conflict: nil)
        }
        var amal = SyncReplica(), sam = SyncReplica(), jo = SyncReplica()
        try await amal.pull(puller, as: Self.user(2), tables: Self.tables)
        try await sam.pull(puller, as: Self.user(1), tables: Self.tables)
        try await jo.pull(puller, as: Self.user(3), tables: Self.tables)
        #expect(amal.count("messages") == 3 && sam.count("messages") == 4 && jo.count("messages") == 1)
        let joCursor = try #require(jo.cursor)

        try await Self.block(f, 1, 2)
        try await amal.pull(puller, as: Self.user(2), tables: Self.tables)
        try await sam.pull(puller, as: Self.user(1), tables: Self.tables)
        #expect(amal.count("messages") == 0 && sam.count("messages") == 1)
        #expect(amal == (try await SyncReplica.snapshot(puller, as: Self.user(2), tables: Self.tables)))
        #expect(sam == (try await SyncReplica.snapshot(puller, as: Self.user(1), tables: Self.tables)))

        try await Self.unblock(f, 1, 2)
        try await amal.pull(puller, as: Self.user(2), tables: Self.tables)
        try await sam.pull(puller, as: Self.user(1), tables: Self.tables)
        #expect(amal.count("messages") == 3 && sam.count("messages") == 4)
        #expect(amal == (try await SyncReplica.snapshot(puller, as: Self.user(2), tables: Self.tables)))

        // Jo is neither of the pair: the block and the unblock tell Jo's device nothing, not even a key.
        let page = try await puller.pull(as: Self.user(3), tables: Self.tables, cursor: joCursor, limit: 1_000)
        #expect(page.changes.isEmpty)
    }

    /// Model-based: blocks and unblocks in both directions, matches made (two right swipes) and unmade (the app's
    /// `unmatch`, or the match deleted with its conversation and messages), messages sent and deleted, among four users; after every step
    /// each user's replica of messages, matches and conversations, built only from delta pulls, equals a fresh snapshot.
    @Test("random blocks, matches, unmatches and messages: every replica equals a fresh snapshot after every step", arguments: Engine.allCases)
    func randomBlocks(engine: Engine) async throws {
        let runs = RandomRuns.fromEnvironment()
        for seed in runs.seeds {
            try await Self.churn(engine: engine, seed: seed, steps: runs.steps)
        }
    }

    static let churnTables = "messages,matches,conversations"

    static func churn(engine: Engine, seed: UInt64, steps: Int) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let users = [1, 2, 3, 4]
        try await f.makeProfiles(users.map { $0 == 1 ? F.profile($0) : F.profile($0, native: "ar", learning: ["en"]) })
        try await Self.preferences(f, users)
        var conversations: [[Int]: String] = [:]
        for other in [2, 3] { conversations[[1, other]] = try await MessageTests.matchedPair(f, 1, other) }
        let pairs = [[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]]
        var random = SplitMix64(state: seed &+ 43)
        var devices = Dictionary(uniqueKeysWithValues: users.map { ($0, SyncReplica()) })
        var blocks: Set<[Int]> = []
        for step in 0..<steps {
            let pair = pairs[Int(random.next() % UInt64(pairs.count))]
            let (a, b) = random.next() % 2 == 0 ? (pair[0], pair[1]) : (pair[1], pair[0])
            switch random.next() % 6 {
            case 0:
                if blocks.contains([a, b]) { try await Self.unblock(f, a, b); blocks.remove([a, b]) } else { try await Self.block(f, a, b); blocks.insert([a, b]) }
            case 1:
                if let conversation = conversations[pair], random.next() % 2 == 0, blocks.isDisjoint(with: [[a, b], [b, a]]) {
                    // The app's unmatch (a blocked pair cannot see its match): the match and its conversation become
                    // inactive, the rows stay.
                    let match = try #require(try await f.rows(S.matches, where: try S.matches.equals("conversation_id", .text(conversation))).first?["id"])
                    _ = try await f.call("unmatch", as: F.uuid(a), ["match_id": JSONValue(match)])
                } else if let conversation = conversations[pair] {
                    try await Self.unmatch(f, pair, conversation: conversation)
                    conversations[pair] = nil
                } else if blocks.isDisjoint(with: [[a, b], [b, a]]) {
                    conversations[pair] = try await MessageTests.matchedPair(f, a, b)
                }
            case 2, 3:
                if let conversation = conversations[pair] {
                    let row = MessageTests.message(conversation, from: a, to: b, "m\(step)", at: Int64(step))
                    _ = try await f.asService { tx in try await tx.insert([row], into: S.messages, conflict: nil) }
                }
            default:
                if let conversation = conversations[pair] {
                    let sent = try await f.rows(S.messages, where: try S.messages.equals("conversation_id", .text(conversation)))
                    if let id = sent.first?["id"] {
                        _ = try await f.asService { tx in try await tx.delete(from: S.messages, where: try S.messages.equals("id", id)) }
                    }
                }
            }
            for device in users where random.next() % 3 != 0 {
                try await devices[device]!.pull(puller, as: Self.user(device), tables: Self.churnTables, limit: 1 + Int(random.next() % 5))
                let oracle = try await SyncReplica.snapshot(puller, as: Self.user(device), tables: Self.churnTables)
                #expect(devices[device]! == oracle, "seed \(seed), step \(step), user \(device) (\(engine))")
                if devices[device]! != oracle { return }
            }
        }
    }

    /// Unmatching for good: the match goes, its conversation and messages with it (cascades), and the pair's swipes, so
    /// the two can match again.
    static func unmatch(_ f: F, _ pair: [Int], conversation: String) async throws {
        let (low, high) = F.uuid(pair[0]) < F.uuid(pair[1]) ? (F.uuid(pair[0]), F.uuid(pair[1])) : (F.uuid(pair[1]), F.uuid(pair[0]))
        try await f.asService { tx in
            _ = try await tx.delete(from: S.matches, where: try S.matches.matching(["user1_id": .text(low), "user2_id": .text(high)]))
            _ = try await tx.delete(from: S.swipes, where: try S.swipes.matching(["swiper_id": .text(low), "swiped_id": .text(high)]))
            _ = try await tx.delete(from: S.swipes, where: try S.swipes.matching(["swiper_id": .text(high), "swiped_id": .text(low)]))
        }
        #expect(try await f.rows(S.messages, where: try S.messages.equals("conversation_id", .text(conversation))).isEmpty)
    }
}
