import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

@Suite("LanguageExchange messages: length and conversation stats (items 1, 2)")
struct MessageTests {
    /// Users 1 and 2 matched (through `process_swipe`); returns the conversation id.
    static func matchedPair(_ f: F, _ a: Int = 1, _ b: Int = 2) async throws -> String {
        _ = try await f.call("process_swipe", as: F.uuid(a), ["p_swiper_id": .string(F.uuid(a)), "p_swiped_id": .string(F.uuid(b)), "p_direction": .string("right")])
        let result = try await f.call("process_swipe", as: F.uuid(b), ["p_swiper_id": .string(F.uuid(b)), "p_swiped_id": .string(F.uuid(a)), "p_direction": .string("right")])
        guard case .scalar(.json(let json)) = result, case .object(let members) = try JSONParser.parse(json),
              case .string(let conversation)? = members.first(where: { $0.key == "conversation_id" })?.value else {
            throw CaravanError(.internalFailure, "process_swipe returned no conversation")
        }
        return conversation
    }

    static func message(_ conversation: String, from a: Int = 1, to b: Int = 2, _ text: String, at seconds: Int64 = 0) -> RowValues {
        RowValues(["conversation_id": .text(conversation), "sender_id": .text(F.uuid(a)), "receiver_id": .text(F.uuid(b)),
                   "original_text": .text(text), "original_language": .text("ar"),
                   "created_at": .text(Timestamp.format(microseconds: F.now + seconds * 1_000_000))])
    }

    /// "مَرْحَبًا " is 10 scalars (letters with tashkeel, a space) but 6 characters: both engines count scalars.
    static let arabic = "مَرْحَبًا "

    @Test("1 to 1,000 Unicode scalars, Arabic with tashkeel and astral emoji counted alike", arguments: Engine.allCases)
    func length(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"])])
        let conversation = try await Self.matchedPair(f)
        #expect(Self.arabic.unicodeScalars.count == 10 && Self.arabic.count < 10)
        let longest = String(repeating: Self.arabic, count: 99) + String(repeating: "😀", count: 10)
        #expect(longest.unicodeScalars.count == 1_000 && longest.utf16.count == 1_010)
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([Self.message(conversation, longest)], into: S.messages, conflict: nil) }
        await expectFailure(.checkViolation, naming: "messages_text_length") {
            _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([Self.message(conversation, longest + "ً")], into: S.messages, conflict: nil) }
        }
        await expectFailure(.checkViolation, naming: "messages_text_length") {
            _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([Self.message(conversation, "")], into: S.messages, conflict: nil) }
        }
        let stored = try await f.rows(S.messages)
        #expect(stored.count == 1)
        #expect(stored.first?["original_text"]?.text == longest)
    }

    @Test("stats on insert, update and delete: count, last_message_at, 100-scalar preview", arguments: Engine.allCases)
    func stats(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"])])
        let conversation = try await Self.matchedPair(f)
        let long = String(repeating: Self.arabic, count: 15)
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([Self.message(conversation, "hello", at: 10)], into: S.messages, conflict: nil) }
        _ = try await f.asUser(F.uuid(2)) { tx in try await tx.insert([Self.message(conversation, from: 2, to: 1, long, at: 20)], into: S.messages, conflict: nil) }
        // An older message arriving late does not become the latest.
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([Self.message(conversation, "late", at: 5)], into: S.messages, conflict: nil) }
        var stats = try #require(try await f.rows(S.conversations).first)
        #expect(stats["message_count"] == .integer(3))
        #expect(stats["last_message_at"]?.text.flatMap(Timestamp.parseMicroseconds) == F.now + 20_000_000)
        let preview = try #require(stats["last_message_preview"]?.text)
        #expect(preview.unicodeScalars.count == 100)
        #expect(preview == String(String.UnicodeScalarView(long.unicodeScalars.prefix(100))))
        // Two messages of one moment: the greater id is the latest, whichever arrives first.
        for (id, text) in [("ffffffff-0000-4000-8000-000000000000", "tie, greater id"), ("00000000-0000-4000-8000-000000000000", "tie, smaller id")] {
            var message = Self.message(conversation, text, at: 30)
            message.set("id", .text(id))
            let row = message
            _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([row], into: S.messages, conflict: nil) }
        }
        #expect(try await f.rows(S.conversations).first?["last_message_preview"]?.text == "tie, greater id")
        _ = try await f.asService { tx in try await tx.delete(from: S.messages, where: try S.messages.equals("created_at", .text(Timestamp.format(microseconds: F.now + 30_000_000)))) }
        // Deleting the latest falls back to the one before.
        _ = try await f.asService { tx in try await tx.delete(from: S.messages, where: try S.messages.equals("original_text", .text(long))) }
        stats = try #require(try await f.rows(S.conversations).first)
        #expect(stats["message_count"] == .integer(2))
        #expect(stats["last_message_preview"]?.text == "hello")
        _ = try await f.asService { tx in try await tx.update(S.messages, set: RowValues(["original_text": .text("hello, edited")]), where: try S.messages.equals("original_text", .text("hello"))) }
        #expect(try await f.rows(S.conversations).first?["last_message_preview"]?.text == "hello, edited")
        _ = try await f.asService { tx in try await tx.delete(from: S.messages, where: .constant(true)) }
        stats = try #require(try await f.rows(S.conversations).first)
        #expect(stats["message_count"] == .integer(0))
        #expect(stats["last_message_at"] == .null && stats["last_message_preview"] == .null)
    }

    /// Writes to one conversation's messages keep its stats one after the other: 20 messages sent at the same moment
    /// by both users count 20, and the preview is the latest one's (on PostgreSQL each would otherwise add one to a
    /// count another had not yet written).
    @Test("stats: messages sent at the same moment are all counted", arguments: Engine.allCases)
    func simultaneousMessages(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"])])
        let conversation = try await Self.matchedPair(f)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                let (from, to) = i % 2 == 0 ? (1, 2) : (2, 1)
                group.addTask {
                    _ = try await f.asUser(F.uuid(from)) { tx in
                        try await tx.insert([Self.message(conversation, from: from, to: to, "message \(i)", at: Int64(i))], into: S.messages, conflict: nil)
                    }
                }
            }
            try await group.waitForAll()
        }
        let stats = try #require(try await f.rows(S.conversations).first)
        #expect(stats["message_count"] == .integer(20))
        #expect(stats["last_message_preview"]?.text == "message 19")
    }

    @Test("invariant: after 10,000 messages (with deletes) the stored count equals the real count", arguments: Engine.allCases)
    func invariant(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"]), F.profile(3, native: "ar", learning: ["en"])])
        let first = try await Self.matchedPair(f, 1, 2)
        let second = try await Self.matchedPair(f, 1, 3)
        var random = SplitMix64(state: 17)
        for batch in 0..<20 {
            let rows = (0..<500).map { i -> RowValues in
                let toSecond = random.next() % 3 == 0
                return Self.message(toSecond ? second : first, to: toSecond ? 3 : 2, "m \(batch)-\(i)", at: Int64(batch * 500 + i))
            }
            _ = try await f.asService { tx in try await tx.insert(rows, into: S.messages, conflict: nil) }
        }
        _ = try await f.asService { tx in try await tx.delete(from: S.messages, where: .like(try S.messages.requireColumn("original_text"), pattern: "m 1_-1%", caseInsensitive: false)) }
        let messages = try await f.rows(S.messages)
        for conversation in [first, second] {
            let real = messages.filter { $0["conversation_id"]?.text == conversation }
            let stats = try #require(try await f.rows(S.conversations, where: try S.conversations.equals("id", .text(conversation))).first)
            #expect(stats["message_count"] == .integer(Int64(real.count)))
            let latest = real.max { ($0["created_at"]?.text ?? "") < ($1["created_at"]?.text ?? "") }
            #expect(stats["last_message_preview"] == latest?["original_text"])
        }
        #expect(messages.count < 10_000 && messages.count > 0)
    }
}
