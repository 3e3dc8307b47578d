import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

/// What `process_swipe` returned.
struct SwipeState: Equatable {
    let isMatch: Bool
    let match: String?
    let conversation: String?

    init(_ result: RPCResult) throws {
        guard case .scalar(.json(let json)) = result, case .object(let members) = try JSONParser.parse(json) else {
            throw CaravanError(.internalFailure, "process_swipe returned no object")
        }
        let byKey = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        isMatch = byKey["is_match"] == .bool(true)
        if case .string(let id)? = byKey["match_id"] { match = id } else { match = nil }
        if case .string(let id)? = byKey["conversation_id"] { conversation = id } else { conversation = nil }
    }
}

@Suite("LanguageExchange process_swipe (item 4)")
struct ProcessSwipeTests {
    static func swipe(_ f: F, _ a: Int, _ b: Int, _ direction: String) async throws -> SwipeState {
        try SwipeState(try await f.call("process_swipe", as: F.uuid(a), [
            "p_swiper_id": .string(F.uuid(a)), "p_swiped_id": .string(F.uuid(b)), "p_direction": .string(direction),
        ]))
    }

    static func world(_ engine: Engine, users: Int = 4) async throws -> F {
        let f = try await F(engine: engine)
        try await f.makeProfiles((1...users).map { F.profile($0, native: $0 % 2 == 0 ? "ar" : "en", learning: [$0 % 2 == 0 ? "en" : "ar"]) })
        return f
    }

    @Test("a mutual like makes one match (ordered pair) and its conversation; a repeat returns the same state", arguments: Engine.allCases)
    func mutual(engine: Engine) async throws {
        let f = try await Self.world(engine)
        #expect(try await Self.swipe(f, 2, 1, "right") == SwipeState.none)
        let matched = try await Self.swipe(f, 1, 2, "right")
        #expect(matched.isMatch)
        let match = try #require(try await f.rows(S.matches).first)
        #expect(match["id"]?.text == matched.match)
        #expect(match["user1_id"]?.text == F.uuid(1) && match["user2_id"]?.text == F.uuid(2))
        #expect(match["is_mutual"] == .bool(true) && match["match_type"]?.text == "normal")
        #expect(match["conversation_id"]?.text == matched.conversation)
        let conversation = try #require(try await f.rows(S.conversations).first)
        #expect(conversation["id"]?.text == matched.conversation && conversation["match_id"]?.text == matched.match)
        // Repeats, by either side and with another direction, change nothing and return the current state.
        #expect(try await Self.swipe(f, 1, 2, "left") == matched)
        #expect(try await Self.swipe(f, 2, 1, "right") == matched)
        let (matchCount, conversationCount, swipeCount) = (try await f.rows(S.matches).count, try await f.rows(S.conversations).count, try await f.rows(S.swipes).count)
        #expect(matchCount == 1 && conversationCount == 1 && swipeCount == 2)
        #expect(try await f.rows(S.swipes).first { $0["swiper_id"]?.text == F.uuid(1) }?["direction"]?.text == "right")
    }

    @Test("the stored swipe decides: left then right is no match (the design tested the parameter)", arguments: Engine.allCases)
    func storedSwipeDecides(engine: Engine) async throws {
        let f = try await Self.world(engine)
        _ = try await Self.swipe(f, 2, 1, "right")
        #expect(try await Self.swipe(f, 1, 2, "left") == SwipeState.none)
        #expect(try await Self.swipe(f, 1, 2, "right") == SwipeState.none)
        #expect(try await f.rows(S.matches).isEmpty)
    }

    @Test("a one-sided match row is no match (no conversation) until both stored swipes like", arguments: Engine.allCases)
    func oneSidedRow(engine: Engine) async throws {
        let f = try await Self.world(engine)
        _ = try await f.asService { tx in
            try await tx.insert([RowValues(["user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(2)), "user1_liked": .bool(true)])], into: S.matches, conflict: nil)
        }
        #expect(try await Self.swipe(f, 1, 2, "super") == SwipeState.none)
        #expect(try await f.rows(S.conversations).isEmpty)
        let matched = try await Self.swipe(f, 2, 1, "right")
        #expect(matched.isMatch && matched.conversation != nil)
        let match = try #require(try await f.rows(S.matches).first)
        #expect(match["is_mutual"] == .bool(true) && match["match_type"]?.text == "super_like" && match["conversation_id"]?.text == matched.conversation)
        #expect(try await f.rows(S.matches).count == 1)
    }

    @Test("super on either side makes a super_like match", arguments: Engine.allCases)
    func superLike(engine: Engine) async throws {
        let f = try await Self.world(engine)
        _ = try await Self.swipe(f, 3, 2, "super")
        #expect(try await Self.swipe(f, 2, 3, "right").isMatch)
        #expect(try await f.rows(S.matches).first?["match_type"]?.text == "super_like")
    }

    @Test("blocked pairs never match, whichever side blocks", arguments: Engine.allCases)
    func blocked(engine: Engine) async throws {
        let f = try await Self.world(engine)
        _ = try await f.asUser(F.uuid(2)) { tx in
            try await tx.insert([RowValues(["user_id": .text(F.uuid(2)), "blocked_users": ColumnType.textArray([F.uuid(1).uppercased()])])], into: S.userPreferences, conflict: nil)
        }
        #expect(try await f.rows(S.userPreferences).first?["blocked_users"]?.strings == [F.uuid(1)], "stored canonically")
        #expect(try await f.rows(S.blocks).count == 1)
        await expectFailure(.checkViolation, naming: "user_preferences.blocked_users[0]") {
            _ = try await f.asUser(F.uuid(3)) { tx in
                try await tx.insert([RowValues(["user_id": .text(F.uuid(3)), "blocked_users": ColumnType.textArray(["not-a-user"])])], into: S.userPreferences, conflict: nil)
            }
        }
        _ = try await Self.swipe(f, 1, 2, "right")
        #expect(try await Self.swipe(f, 2, 1, "super") == SwipeState.none)
        #expect(try await f.rows(S.matches).isEmpty)
        #expect(try await f.rows(S.conversations).isEmpty)
    }

    @Test("errors: another swiper 42501, bad direction and self-swipe 23514, each naming the parameter", arguments: Engine.allCases)
    func errors(engine: Engine) async throws {
        let f = try await Self.world(engine)
        await expectFailure(.permissionDenied, naming: "p_swiper_id") {
            _ = try await f.call("process_swipe", as: F.uuid(1), ["p_swiper_id": .string(F.uuid(2)), "p_swiped_id": .string(F.uuid(3)), "p_direction": .string("right")])
        }
        await expectFailure(.permissionDenied, naming: "process_swipe") {
            _ = try await f.call("process_swipe", as: nil, ["p_swiper_id": .string(F.uuid(2)), "p_swiped_id": .string(F.uuid(3)), "p_direction": .string("right")])
        }
        await expectFailure(.checkViolation, naming: "p_direction") { _ = try await Self.swipe(f, 1, 2, "up") }
        await expectFailure(.checkViolation, naming: "p_swiped_id") { _ = try await Self.swipe(f, 1, 1, "right") }
        #expect(try await f.rows(S.swipes).isEmpty)
        // Swipes are written only through process_swipe.
        await expectFailure(.permissionDenied, naming: "swipes") {
            _ = try await f.asUser(F.uuid(1)) { tx in
                try await tx.insert([RowValues(["swiper_id": .text(F.uuid(1)), "swiped_id": .text(F.uuid(2)), "direction": .text("right")])], into: S.swipes, conflict: nil)
            }
        }
    }

    @Test("both sides swiping at the same instant: exactly one match and one conversation per pair", arguments: Engine.allCases)
    func concurrent(engine: Engine) async throws {
        let pairs = 8
        let f = try await Self.world(engine, users: pairs * 2)
        let results = try await withThrowingTaskGroup(of: SwipeState.self) { group in
            for pair in 0..<pairs {
                let (a, b) = (pair * 2 + 1, pair * 2 + 2)
                group.addTask { try await Self.swipe(f, a, b, "right") }
                group.addTask { try await Self.swipe(f, b, a, pair % 2 == 0 ? "super" : "right") }
            }
            var all: [SwipeState] = []
            for try await state in group { all.append(state) }
            return all
        }
        let matches = try await f.rows(S.matches)
        let conversations = try await f.rows(S.conversations)
        #expect(matches.count == pairs && conversations.count == pairs)
        #expect(results.filter(\.isMatch).count == pairs, "one call per pair sees the other's swipe")
        #expect(Set(results.compactMap(\.match)) == Set(matches.compactMap { $0["id"]?.text }))
        #expect(Set(conversations.compactMap { $0["match_id"]?.text }) == Set(matches.compactMap { $0["id"]?.text }))
    }
}

extension SwipeState {
    static let none = SwipeState(isMatch: false, match: nil, conversation: nil)

    init(isMatch: Bool, match: String?, conversation: String?) {
        self.isMatch = isMatch
        self.match = match
        self.conversation = conversation
    }
}
