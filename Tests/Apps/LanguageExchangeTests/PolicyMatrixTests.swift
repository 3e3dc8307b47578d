import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

/// Who acts: user 1 (matched with 2, and with 3 who then blocked 1), user 2, user 3 (the blocker), user 4 (an
/// outsider who swiped 1 left), anonymous callers and the service role.
enum Actor: String, CaseIterable, Sendable {
    case anon, u1, u2, u3, u4, service

    var identity: Identity {
        switch self {
        case .anon: Identity(role: .anon)
        case .u1: Identity(role: .authenticated, userID: F.uuid(1))
        case .u2: Identity(role: .authenticated, userID: F.uuid(2))
        case .u3: Identity(role: .authenticated, userID: F.uuid(3))
        case .u4: Identity(role: .authenticated, userID: F.uuid(4))
        case .service: .serviceRole
        }
    }
}

struct PolicyWorld {
    let c12: String
    let c13: String
    let m12: String
}

@Suite("LanguageExchange policies (item 5)")
struct PolicyMatrixTests {
    static func seed(_ f: F) async throws -> PolicyWorld {
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"]), F.profile(3, native: "ar", learning: ["en"]), F.profile(4, native: "ar", learning: ["en"])])
        let c12 = try await MessageTests.matchedPair(f, 1, 2)
        let c13 = try await MessageTests.matchedPair(f, 1, 3)
        _ = try await ProcessSwipeTests.swipe(f, 4, 1, "left")
        _ = try await f.asUser(F.uuid(1)) { tx in
            _ = try await tx.insert([MessageTests.message(c12, from: 1, to: 2, "hi", at: 1)], into: S.messages, conflict: nil)
            _ = try await tx.insert([MessageTests.message(c13, from: 1, to: 3, "yo", at: 2)], into: S.messages, conflict: nil)
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(1)), "email": .text("one@example.com")])], into: S.profilePrivate, conflict: nil)
            _ = try await tx.insert([RowValues(["user_id": .text(F.uuid(1))])], into: S.userPreferences, conflict: nil)
            _ = try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "original_text": .text("hi"), "translated_text": .text("مرحبا"), "language": .text("ar")])],
                              into: S.savedPhrases, conflict: nil)
            return try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "event_type": .text("app_open")])], into: S.analyticsEvents, conflict: nil)
        }
        _ = try await f.asUser(F.uuid(2)) { tx in
            _ = try await tx.insert([MessageTests.message(c12, from: 2, to: 1, "hello", at: 3)], into: S.messages, conflict: nil)
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(2)), "email": .text("two@example.com")])], into: S.profilePrivate, conflict: nil)
            return try await tx.insert([RowValues(["user_id": .text(F.uuid(2)), "original_text": .text("hello"), "translated_text": .text("أهلا"), "language": .text("ar")])],
                                 into: S.savedPhrases, conflict: nil)
        }
        // User 3 blocks user 1 after their match: the match, its conversation and messages vanish for both.
        _ = try await f.asUser(F.uuid(3)) { tx in
            try await tx.insert([RowValues(["user_id": .text(F.uuid(3)), "blocked_users": ColumnType.textArray([F.uuid(1)])])], into: S.userPreferences, conflict: nil)
        }
        _ = try await f.asService { tx in
            try await tx.insert([RowValues(["text_hash": .text(String(repeating: "ab", count: 32)), "from_language": .text("en"), "to_language": .text("ar"),
                                      "translated_text": .text("مرحبا")])], into: S.translationCache, conflict: nil)
        }
        let m12 = try #require(try await f.rows(S.conversations, where: try S.conversations.equals("id", .text(c12))).first?["match_id"]?.text)
        return PolicyWorld(c12: c12, c13: c13, m12: m12)
    }

    /// Rows of each table each actor can read.
    static let visible: [String: [Actor: Int]] = [
        "languages": [.anon: 15, .u1: 15, .u2: 15, .u3: 15, .u4: 15, .service: 15],
        "profiles": [.anon: 0, .u1: 4, .u2: 4, .u3: 4, .u4: 4, .service: 4],
        "profile_private": [.anon: 0, .u1: 1, .u2: 1, .u3: 0, .u4: 0, .service: 2],
        "user_preferences": [.anon: 0, .u1: 1, .u2: 0, .u3: 1, .u4: 0, .service: 2],
        "blocks": [.anon: 0, .u1: 0, .u2: 0, .u3: 0, .u4: 0, .service: 1],
        "swipes": [.anon: 0, .u1: 2, .u2: 1, .u3: 1, .u4: 1, .service: 5],
        "matches": [.anon: 0, .u1: 1, .u2: 1, .u3: 0, .u4: 0, .service: 2],
        "conversations": [.anon: 0, .u1: 1, .u2: 1, .u3: 0, .u4: 0, .service: 2],
        "messages": [.anon: 0, .u1: 2, .u2: 2, .u3: 0, .u4: 0, .service: 3],
        "saved_phrases": [.anon: 0, .u1: 1, .u2: 1, .u3: 0, .u4: 0, .service: 2],
        "analytics_events": [.anon: 0, .u1: 0, .u2: 0, .u3: 0, .u4: 0, .service: 1],
        "translation_cache": [.anon: 0, .u1: 0, .u2: 0, .u3: 0, .u4: 0, .service: 1],
    ]

    @Test("select: every table × every actor", arguments: Engine.allCases)
    func reads(engine: Engine) async throws {
        let f = try await F(engine: engine)
        _ = try await Self.seed(f)
        #expect(Set(Self.visible.keys) == Set(S.tables.map(\.name)), "every table is in the matrix")
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        #expect(try await matrix.readMismatches(S.tables, expected: Self.visible) == [])
    }

    @Test("insert, update, delete: every table's rules for every actor (rolled back after each)", arguments: Engine.allCases)
    func writes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let world = try await Self.seed(f)
        let no = Outcome.refused(.permissionDenied)
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        func expect(_ name: String, _ expected: [Actor: Outcome], _ body: @escaping @Sendable (any StoreTransaction) async throws -> WriteOutcome) async {
            let mismatches = await matrix.writeMismatches(name, expected: expected, body)
            #expect(mismatches == [])
        }
        let onlyService: [Actor: Outcome] = [.anon: no, .u1: no, .u2: no, .u3: no, .u4: no, .service: .rows(1)]
        let noneButService: (Int) -> [Actor: Outcome] = { n in [.anon: .rows(0), .u1: .rows(0), .u2: .rows(0), .u3: .rows(0), .u4: .rows(0), .service: .rows(n)] }
        await expect("a message 1 → 2 in their conversation", [.anon: no, .u1: .rows(1), .u2: no, .u3: no, .u4: no, .service: .rows(1)]) { tx in
            try await tx.insert([MessageTests.message(world.c12, from: 1, to: 2, "again")], into: S.messages, conflict: nil)
        }
        await expect("a message 2 → 1", [.anon: no, .u1: no, .u2: .rows(1), .u3: no, .u4: no, .service: .rows(1)]) { tx in
            try await tx.insert([MessageTests.message(world.c12, from: 2, to: 1, "again")], into: S.messages, conflict: nil)
        }
        await expect("a message 1 → 3 after 3 blocked 1", onlyService) { tx in
            try await tx.insert([MessageTests.message(world.c13, from: 1, to: 3, "still there?")], into: S.messages, conflict: nil)
        }
        await expect("a message 4 → 1 into the conversation of 1 and 2", onlyService) { tx in
            try await tx.insert([MessageTests.message(world.c12, from: 4, to: 1, "hi")], into: S.messages, conflict: nil)
        }
        await expect("mark messages read directly", noneButService(3)) { tx in
            try await tx.update(S.messages, set: RowValues(["is_read": .bool(true)]), where: .constant(true))
        }
        await expect("delete messages", noneButService(3)) { tx in try await tx.delete(from: S.messages, where: .constant(true)) }
        await expect("a swipe written directly", onlyService) { tx in
            try await tx.insert([RowValues(["swiper_id": .text(F.uuid(2)), "swiped_id": .text(F.uuid(4)), "direction": .text("right")])], into: S.swipes, conflict: nil)
        }
        await expect("a match written directly", onlyService) { tx in
            try await tx.insert([RowValues(["user1_id": .text(F.uuid(2)), "user2_id": .text(F.uuid(4))])], into: S.matches, conflict: nil)
        }
        await expect("reactivate matches directly", noneButService(2)) { tx in
            try await tx.update(S.matches, set: RowValues(["is_active": .bool(true)]), where: .constant(true))
        }
        await expect("edit profiles", [.anon: .rows(0), .u1: .rows(1), .u2: .rows(1), .u3: .rows(1), .u4: .rows(1), .service: .rows(4)]) { tx in
            try await tx.update(S.profiles, set: RowValues(["bio": .text("¡Hola!")]), where: .constant(true))
        }
        await expect("edit private rows", [.anon: .rows(0), .u1: .rows(1), .u2: .rows(1), .u3: .rows(0), .u4: .rows(0), .service: .rows(2)]) { tx in
            try await tx.update(S.profilePrivate, set: RowValues(["cloudkit_record_id": .text("ck")]), where: .constant(true))
        }
        await expect("an analytics event of user 1", [.anon: no, .u1: .rows(1), .u2: no, .u3: no, .u4: no, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "event_type": .text("swipe")])], into: S.analyticsEvents, conflict: nil)
        }
        await expect("a saved phrase of user 2", [.anon: no, .u1: no, .u2: .rows(1), .u3: no, .u4: no, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["user_id": .text(F.uuid(2)), "original_text": .text("a"), "translated_text": .text("b"), "language": .text("ar")])],
                          into: S.savedPhrases, conflict: nil)
        }
        await expect("a translation cache row", onlyService) { tx in
            try await tx.insert([RowValues(["text_hash": .text(String(repeating: "cd", count: 32)), "from_language": .text("ar"), "to_language": .text("en"),
                                      "translated_text": .text("hello")])], into: S.translationCache, conflict: nil)
        }
        await expect("a block row", onlyService) { tx in
            try await tx.insert([RowValues(["blocker_id": .text(F.uuid(1)), "blocked_id": .text(F.uuid(4))])], into: S.blocks, conflict: nil)
        }
        await expect("a language", onlyService) { tx in
            try await tx.insert([RowValues(["code": .text("tlh"), "iso639_3": .text("tlh"), "name_en": .text("Klingon")])], into: S.languages, conflict: nil)
        }
    }

    @Test("mark_read marks only the caller's received messages, up to a time; strangers and blocked users get 42501", arguments: Engine.allCases)
    func markRead(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let world = try await Self.seed(f)
        let before = Timestamp.format(microseconds: F.now)
        #expect(try await f.call("mark_read", as: F.uuid(2), ["conversation_id": .string(world.c12), "up_to": .string(before)]) == .scalar(.integer(0)))
        #expect(try await f.call("mark_read", as: F.uuid(2), ["conversation_id": .string(world.c12)]) == .scalar(.integer(1)))
        #expect(try await f.call("mark_read", as: F.uuid(2), ["conversation_id": .string(world.c12)]) == .scalar(.integer(0)))
        let read = try await f.rows(S.messages).filter { $0["is_read"] == .bool(true) }
        #expect(read.map { $0["original_text"]?.text } == ["hi"])
        await expectFailure(.permissionDenied, naming: "conversation_id") {
            _ = try await f.call("mark_read", as: F.uuid(4), ["conversation_id": .string(world.c12)])
        }
        await expectFailure(.permissionDenied, naming: "conversation_id") {
            _ = try await f.call("mark_read", as: F.uuid(3), ["conversation_id": .string(world.c13)])
        }
    }

    @Test("unmatch ends the match and its conversation for both; only participants may", arguments: Engine.allCases)
    func unmatch(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let world = try await Self.seed(f)
        await expectFailure(.permissionDenied, naming: "match_id") { _ = try await f.call("unmatch", as: F.uuid(4), ["match_id": .string(world.m12)]) }
        #expect(try await f.call("unmatch", as: F.uuid(2), ["match_id": .string(world.m12)]) == .void)
        #expect(try await f.call("unmatch", as: F.uuid(2), ["match_id": .string(world.m12)]) == .void)
        #expect(try await f.rows(S.matches, where: try S.matches.equals("id", .text(world.m12))).first?["is_active"] == .bool(false))
        #expect(try await f.rows(S.conversations, where: try S.conversations.equals("id", .text(world.c12))).first?["is_active"] == .bool(false))
        await expectFailure(.permissionDenied, naming: "messages") {
            _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([MessageTests.message(world.c12, from: 1, to: 2, "wait")], into: S.messages, conflict: nil) }
        }
        // The conversation follows its match whoever writes it: reactivated by the service role, it takes messages again.
        _ = try await f.asService { tx in try await tx.update(S.matches, set: RowValues(["is_active": .bool(true)]), where: try S.matches.equals("id", .text(world.m12))) }
        #expect(try await f.rows(S.conversations, where: try S.conversations.equals("id", .text(world.c12))).first?["is_active"] == .bool(true))
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([MessageTests.message(world.c12, from: 1, to: 2, "back")], into: S.messages, conflict: nil) }
        _ = try await f.call("unmatch", as: F.uuid(1), ["match_id": .string(world.m12)])
        #expect(try await f.rows(S.conversations, where: try S.conversations.equals("id", .text(world.c12))).first?["is_active"] == .bool(false))
        // The swipe repeated after an unmatch reports no match, and no new one is made.
        #expect(try await ProcessSwipeTests.swipe(f, 1, 2, "right").isMatch == false)
        #expect(try await f.rows(S.matches).count == 2)
    }
}

extension RPCResult: Equatable {
    static func == (a: RPCResult, b: RPCResult) -> Bool {
        switch (a, b) {
        case (.scalar(let x), .scalar(let y)): x == y
        case (.void, .void): true
        default: false
        }
    }
}
