import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

/// A translator that must not be asked: every answer has to come from the cache.
struct UnreachableTranslator: Translator {
    let provider = "openai"
    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        throw CaravanError(.upstreamFailure, "the fake provider is unreachable")
    }
}

@Suite("LanguageExchange data tools (generate-profiles, import tatoeba)")
struct DataToolsTests {
    static let anchor = F.now

    /// The profiles of `f` as (id → the generated columns compared).
    func storedProfiles(_ f: F) async throws -> [String: [String: Value]] {
        var byID: [String: [String: Value]] = [:]
        for row in try await f.rows(S.profiles) { byID[row["id"]?.text ?? ""] = row }
        return byID
    }

    @Test("the same seed writes the same rows; another seed others", arguments: Engine.allCases)
    func sameSeedSameRows(engine: Engine) async throws {
        let first = try await F(engine: engine)
        let second = try await F(engine: engine)
        for (f, ranges) in [(first, [0..<120, 120..<300]), (second, [0..<300])] {
            let generator = try await f.asService { tx in try await ProfileGenerator.load(seed: 42, anchor: Self.anchor, in: tx) }
            for range in ranges { _ = try await f.asService { tx in try await generator.write(range, in: tx) } }
        }
        let a = try await storedProfiles(first), b = try await storedProfiles(second)
        #expect(a.count == 300)
        #expect(a == b, "batch boundaries or the engine changed rows of seed 42")
        #expect(try await first.rows(S.userPreferences).count == 300)
        // A re-run of the seed rewrites the same rows; another seed writes other ids.
        let generator = try await first.asService { tx in try await ProfileGenerator.load(seed: 42, anchor: Self.anchor, in: tx) }
        _ = try await first.asService { tx in try await generator.write(0..<300, in: tx) }
        #expect(try await storedProfiles(first) == a)
        let other = try ProfileGenerator(seed: 43, anchor: Self.anchor, languages: generator.languages)
        let otherIDs = Set((0..<300).compactMap { other.rows($0).profile["id"]?.text })
        #expect(otherIDs.count == 300 && otherIDs.isDisjoint(with: Set(a.keys)))
    }

    @Test("codes are canonical codes of the languages table; activity, ages and preferences are plausible", arguments: Engine.allCases)
    func realisticAndCanonical(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let count = 600
        let generator = try await f.asService { tx in try await ProfileGenerator.load(seed: 7, anchor: Self.anchor, in: tx) }
        // Only languages the table holds (the fixture loads no Dutch, Swedish or Polish).
        #expect(!generator.languages.contains { ["nl", "sv", "pl"].contains($0.code) })
        _ = try await f.asService { tx in try await generator.write(0..<count, in: tx) }
        let codes = Set(try await f.rows(S.languages).compactMap { $0["code"]?.text })
        let profiles = try await f.rows(S.profiles)
        #expect(profiles.count == count)
        var recent = 0, old = 0
        var natives = Set<String>()
        for (index, row) in profiles.enumerated() {
            let native = try #require(row["native_language"]?.text)
            let learning = try #require(row["learning_languages"]?.strings)
            natives.insert(native)
            #expect(codes.contains(native) && learning.allSatisfy(codes.contains), "row \(index): \(native) \(learning)")
            #expect(!learning.isEmpty && learning.count <= 3 && !learning.contains(native) && Set(learning).count == learning.count)
            let age = try #require(row["age"]?.integerValue)
            #expect((18...70).contains(age))
            let lastActive = try #require(row["last_active"]?.text.flatMap(Timestamp.parseMicroseconds))
            let daysAgo = Double(Self.anchor - lastActive) / 86_400e6
            #expect(daysAgo >= 0 && daysAgo <= 60, "last_active \(daysAgo) days before the anchor")
            if daysAgo < 30 { recent += 1 }
            if daysAgo > 45 { old += 1 }
        }
        // Most recent, but spread over the whole 60 days (expected ≈70 % within 30 days, ≈13 % beyond 45).
        #expect(recent > count * 6 / 10 && recent < count * 8 / 10, "\(recent) of \(count) active within 30 days")
        #expect(old > count / 20, "\(old) of \(count) last active over 45 days ago")
        #expect(natives.count >= 8 && natives.contains("en") && natives.contains("ar"))
        // The generator's rows are stored as generated: nothing needed canonicalizing.
        let expected = generator.rows(0).profile
        let stored = try #require(profiles.first { $0["id"] == expected["id"] })
        #expect(stored["native_language"] == expected["native_language"] && stored["learning_languages"]?.strings == expected["learning_languages"]?.strings)
        let preferences = try await f.rows(S.userPreferences)
        for row in preferences {
            let profile = try #require(profiles.first { $0["id"] == row["user_id"] })
            let age = try #require(profile["age"]?.integerValue)
            let minAge = try #require(row["min_age"]?.integerValue), maxAge = try #require(row["max_age"]?.integerValue)
            #expect(minAge <= age && age <= maxAge)
        }
        // Generated users find partners.
        let caller = try #require(expected["id"]?.text)
        guard case .table(_, let matches) = try await f.call("find_language_matches", as: caller, ["p_user_id": .string(caller)]) else {
            Issue.record("find_language_matches returned no table"); return
        }
        #expect(matches.count == 20)
    }

    @Test func fewerThanTwoLanguagesIsRefused() {
        #expect(throws: CaravanError.self) { _ = try ProfileGenerator(seed: 1, anchor: 0, languages: [("en", 1)]) }
    }

    static let sample = """
    Hi.\tمرحبًا.\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM) & #629296 (Samer)
    Duck!\tاخفض رأسك!\tCC-BY 2.0 (France) Attribution: tatoeba.org #280158 (CM) & #9036391 (KeEichi)
    Duck!\tاخفضي رأسك!\tCC-BY 2.0 (France) Attribution: tatoeba.org #280158 (CM) & #9036392 (KeEichi)
    a line without a tab

    I love reading.\tأُحِبُّ القِرَاءَةَ.\tCC-BY 2.0 (France)
    \t\tCC-BY 2.0
    Thank you very much.\tشكراً جزيلاً.\tCC-BY 2.0 (France)\r

    """

    @Test("a sample file: a demo conversation with its stats, a warm cache in both directions, idempotent", arguments: Engine.allCases)
    func sampleFile(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (pairs, rejections) = TatoebaImporter.pairs(fromTSV: Self.sample)
        #expect(pairs.map(\.english) == ["Hi.", "Duck!", "Duck!", "I love reading.", "Thank you very much."])
        #expect(pairs.last?.arabic == "شكراً جزيلاً.")
        #expect(rejections.map(\.line) == [4, 7])
        let summary = try await f.asService { tx in try await TatoebaImporter.load(pairs, provider: "openai", now: F.now, in: tx) }
        #expect(summary.messagesInserted == 5)
        #expect(summary.cacheInsertedEnglishToArabic == 4, "Duck! is cached once, with its first translation")
        #expect(summary.cacheInsertedArabicToEnglish == 5)
        let messages = try await f.rows(S.messages)
        #expect(messages.count == 5)
        #expect(messages.filter { $0["sender_id"]?.text == TatoebaImporter.sam }.allSatisfy { $0["original_language"]?.text == "en" && $0["receiver_id"]?.text == TatoebaImporter.amal })
        #expect(messages.filter { $0["sender_id"]?.text == TatoebaImporter.amal }.count == 2)
        let conversation = try #require(try await f.rows(S.conversations).first)
        #expect(conversation["id"]?.text == summary.conversationID)
        #expect(conversation["message_count"] == .integer(5) && conversation["is_active"] == .bool(true))
        #expect(conversation["last_message_preview"]?.text == "Thank you very much.")
        #expect(conversation["last_message_at"]?.text.flatMap(Timestamp.parseMicroseconds) == F.now)
        // Both participants read the whole conversation through their policies; nobody else does.
        try await f.makeProfiles([F.profile(900)])
        #expect(try await f.asUser(TatoebaImporter.amal) { tx in try await tx.count(S.messages, where: .constant(true)) } == 5)
        #expect(try await f.asUser(F.uuid(900)) { tx in try await tx.count(S.messages, where: .constant(true)) } == 0)
        // translate answers from the cache in both directions (the provider is unreachable), counting the use.
        let service = TranslationService(pipeline: f.pipeline, catalog: f.catalog, translator: UnreachableTranslator())
        let sam = Identity(role: .authenticated, userID: TatoebaImporter.sam)
        #expect(try await service.translate("Duck!", source: "en", target: "ar", as: sam) == "اخفض رأسك!")
        #expect(try await service.translate("أُحِبُّ القِرَاءَةَ.", source: "ara", target: "eng", as: sam) == "I love reading.")
        await expectFailure(.upstreamFailure, naming: "provider") { _ = try await service.translate("أحب القراءة.", source: "ar", target: "en", as: sam) }
        let used = try await f.rows(S.translationCache).filter { $0["usage_count"] == .integer(2) }
        #expect(used.count == 2)
        // A re-import adds nothing.
        let again = try await f.asService { tx in try await TatoebaImporter.load(pairs, provider: "openai", now: F.now, in: tx) }
        #expect(again.messagesInserted == 0 && again.cacheInsertedEnglishToArabic == 0 && again.cacheInsertedArabicToEnglish == 0)
        #expect(try await f.rows(S.messages).count == 5)
        #expect(try await f.rows(S.conversations).first?["message_count"] == .integer(5))
        #expect(try await f.rows(S.translationCache).count == 9)
    }

    static var realFile: String {
        URL(fileURLWithPath: F.languagesPath).deletingLastPathComponent().appendingPathComponent("tatoeba_ara_eng.tsv").path
    }

    @Test("the real tatoeba_ara_eng.tsv imports whole; the stored count equals the real count", arguments: Engine.allCases)
    func realFile(engine: Engine) async throws {
        guard let contents = FileManager.default.contents(atPath: Self.realFile) else { return }
        let f = try await F(engine: engine)
        let (pairs, rejections) = TatoebaImporter.pairs(fromTSV: String(decoding: contents, as: UTF8.self))
        #expect(rejections.isEmpty, "\(rejections.prefix(3))")
        #expect(pairs.count == 12_176)
        let summary = try await f.asService { tx in try await TatoebaImporter.load(pairs, provider: "openai", now: F.now, in: tx) }
        #expect(summary.messagesInserted == pairs.count)
        #expect(summary.cacheInsertedEnglishToArabic == Set(pairs.map { Array($0.english.utf8) }).count)
        #expect(summary.cacheInsertedArabicToEnglish == Set(pairs.map { Array($0.arabic.utf8) }).count)
        let conversation = try #require(try await f.rows(S.conversations).first)
        #expect(conversation["message_count"] == .integer(Int64(pairs.count)))
        #expect(try await f.asService { tx in try await tx.count(S.messages, where: .constant(true)) } == pairs.count)
    }
}
