import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

@Suite("LanguageExchange schema rules (item 1)")
struct SchemaRulesTests {
    @Test("languages: canonical codes and the three names from the real CSV", arguments: Engine.allCases)
    func languages(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let rows = try await f.rows(S.languages)
        #expect(rows.count == F.fixtureLanguages.count)
        let arabic = try #require(rows.first { $0["iso639_3"]?.text == "ara" })
        #expect(arabic["code"]?.text == "ar")
        #expect(arabic["name_en"]?.text == "Arabic")
        #expect(arabic["name_ar"]?.text == "العربية")
        #expect(arabic["native_name"]?.text == "العربية")
        // No ISO 639-1 code: the 639-3 code is canonical.
        #expect(rows.first { $0["iso639_3"]?.text == "cmn" }?["code"]?.text == "cmn")
    }

    @Test("profile codes are stored canonically: ara → ar, spa → es, fre → fr, keys of proficiency too", arguments: Engine.allCases)
    func canonicalCodes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1, native: "ara", learning: ["spa", "FRE", "es"], extra: ["proficiency_levels": .json(#"{"spa":2}"#)])])
        let row = try #require(try await f.rows(S.profiles).first)
        #expect(row["native_language"]?.text == "ar")
        #expect(row["learning_languages"]?.strings == ["es", "fr"])
        #expect(row["proficiency_levels"] == .json(#"{"es":2}"#))
        // An update through the owner's REST path is canonicalized as well, and the write answers the stored row
        // (what `Prefer: return=representation` sends back), not the codes it was given.
        let updated = try await f.asUser(F.uuid(1)) { tx in
            try await tx.update(S.profiles, set: RowValues(["learning_languages": ColumnType.textArray(["jpn", "spa"]), "native_language": .text("fra")]),
                                where: .constant(true))
        }
        #expect(try await f.rows(S.profiles).first?["learning_languages"]?.strings == ["ja", "es"])
        let position = try #require(S.profiles.position(of: "native_language"))
        #expect(updated.rows.map { $0[position] } == [.text("fr")])
        let inserted = try await f.asService { tx in
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(2))])], into: SystemModule.users, conflict: nil)
            return try await tx.insert([F.profile(2, native: "spa", learning: ["ara"])], into: S.profiles, conflict: nil)
        }
        #expect(inserted.rows.map { $0[position] } == [.text("es")])
    }

    @Test("unknown codes, no learning language and stray proficiency keys are 23514 naming the field", arguments: Engine.allCases)
    func languageViolations(engine: Engine) async throws {
        let f = try await F(engine: engine)
        await expectFailure(.checkViolation, naming: "profiles.native_language") {
            try await f.makeProfiles([F.profile(1, native: "xx")])
        }
        await expectFailure(.checkViolation, naming: "profiles.learning_languages[1]") {
            try await f.makeProfiles([F.profile(2, learning: ["ar", "qqq"])])
        }
        // The design's array_length check lets '{}' through; "at least one" does not.
        await expectFailure(.checkViolation, naming: "valid_languages") {
            try await f.makeProfiles([F.profile(3, learning: [])])
        }
        await expectFailure(.checkViolation, naming: "profiles.proficiency_levels.fr") {
            try await f.makeProfiles([F.profile(4, learning: ["ar"], extra: ["proficiency_levels": .json(#"{"fr":1}"#)])])
        }
        await expectFailure(.checkViolation, naming: "valid_age") { try await f.makeProfiles([F.profile(5, age: 17)]) }
        await expectFailure(.checkViolation, naming: "granularity_level") {
            try await f.makeProfiles([F.profile(6, extra: ["granularity_level": .integer(4)])])
        }
        #expect(try await f.rows(S.profiles).isEmpty)
    }

    @Test("email is unique case-insensitively", arguments: Engine.allCases)
    func emailUnique(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2)])
        _ = try await f.asUser(F.uuid(1)) { tx in
            try await tx.insert([RowValues(["id": .text(F.uuid(1)), "email": .text("Layla@Example.com")])], into: S.profilePrivate, conflict: nil)
        }
        #expect(try await f.rows(S.profilePrivate).first?["email_key"]?.text == "layla@example.com")
        await expectFailure(.uniqueViolation, naming: "profile_private") {
            _ = try await f.asUser(F.uuid(2)) { tx in
                try await tx.insert([RowValues(["id": .text(F.uuid(2)), "email": .text("layla@EXAMPLE.com")])], into: S.profilePrivate, conflict: nil)
            }
        }
    }

    @Test("matches: ordered pair, no self-match, is_mutual derived; one conversation per match", arguments: Engine.allCases)
    func matchesAndConversations(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2), F.profile(3)])
        await expectFailure(.checkViolation, naming: "matches_ordered_pair") {
            _ = try await f.asService { tx in
                try await tx.insert([RowValues(["user1_id": .text(F.uuid(2)), "user2_id": .text(F.uuid(1))])], into: S.matches, conflict: nil)
            }
        }
        await expectFailure(.checkViolation, naming: "matches_ordered_pair") {
            _ = try await f.asService { tx in
                try await tx.insert([RowValues(["user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(1))])], into: S.matches, conflict: nil)
            }
        }
        let match = try await f.asService { tx in
            // A sent is_mutual is replaced by the derived value.
            try await tx.insert([RowValues(["user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(2)), "user1_liked": .bool(true), "is_mutual": .bool(true)])],
                          into: S.matches, conflict: nil).rows[0][0]
        }
        #expect(try await f.rows(S.matches).first?["is_mutual"] == .bool(false))
        _ = try await f.asService { tx in try await tx.update(S.matches, set: RowValues(["user2_liked": .bool(true)]), where: .constant(true)) }
        #expect(try await f.rows(S.matches).first?["is_mutual"] == .bool(true))
        let conversation = RowValues(["match_id": match, "user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(2))])
        _ = try await f.asService { tx in try await tx.insert([conversation], into: S.conversations, conflict: nil) }
        await expectFailure(.uniqueViolation, naming: "conversations") {
            _ = try await f.asService { tx in try await tx.insert([conversation], into: S.conversations, conflict: nil) }
        }
        // The pair repeated in conversations must be the match's.
        let other = try await f.asService { tx in
            try await tx.insert([RowValues(["user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(3))])], into: S.matches, conflict: nil).rows[0][0]
        }
        await expectFailure(.foreignKeyViolation, naming: "conversations") {
            _ = try await f.asService { tx in
                try await tx.insert([RowValues(["match_id": other, "user1_id": .text(F.uuid(1)), "user2_id": .text(F.uuid(2))])], into: S.conversations, conflict: nil)
            }
        }
    }

    @Test("swipes: direction and self-swipe are declared checks", arguments: Engine.allCases)
    func swipeChecks(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2)])
        await expectFailure(.checkViolation, naming: "swipes_direction") {
            _ = try await f.asService { tx in
                try await tx.insert([RowValues(["swiper_id": .text(F.uuid(1)), "swiped_id": .text(F.uuid(2)), "direction": .text("up")])], into: S.swipes, conflict: nil)
            }
        }
        await expectFailure(.checkViolation, naming: "no_self_swipe") {
            _ = try await f.asService { tx in
                try await tx.insert([RowValues(["swiper_id": .text(F.uuid(1)), "swiped_id": .text(F.uuid(1)), "direction": .text("left")])], into: S.swipes, conflict: nil)
            }
        }
    }
}
