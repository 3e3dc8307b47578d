import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

@Suite("LanguageExchange per-user export (item 8)")
struct ExportTests {
    /// User 1 matched with 2 (two messages), swiped 3 left, saved a phrase, blocks 5, has private data and an event;
    /// 3 and 4 matched and talk between themselves.
    static func world(_ f: F) async throws -> (mine: String, theirs: String) {
        try await f.makeProfiles([
            F.profile(1, extra: ["bio": .text("One's own bio")]), F.profile(2, native: "ar", learning: ["en"], extra: ["bio": .text("Two's secret bio")]),
            F.profile(3, native: "ar", learning: ["en"], extra: ["bio": .text("Three's bio")]), F.profile(4, extra: ["bio": .text("Four's bio")]),
            F.profile(5, native: "ar", learning: ["en"]),
        ])
        let mine = try await MessageTests.matchedPair(f, 1, 2)
        let theirs = try await MessageTests.matchedPair(f, 3, 4)
        _ = try await f.call("process_swipe", as: F.uuid(1), ["p_swiper_id": .string(F.uuid(1)), "p_swiped_id": .string(F.uuid(3)), "p_direction": .string("left")])
        _ = try await f.asUser(F.uuid(1)) { tx in
            try await tx.insert([MessageTests.message(mine, from: 1, to: 2, "hello", at: 1)], into: S.messages, conflict: nil)
            try await tx.insert([RowValues(["id": .text(F.uuid(1)), "email": .text("one@example.com")])], into: S.profilePrivate, conflict: nil)
            try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "original_text": .text("مرحبا"), "translated_text": .text("hello"), "language": .text("ar")])],
                          into: S.savedPhrases, conflict: nil)
            try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "blocked_users": ColumnType.textArray([F.uuid(5)])])], into: S.userPreferences, conflict: nil)
            try await tx.insert([RowValues(["user_id": .text(F.uuid(1)), "event_type": .text("app_open")])], into: S.analyticsEvents, conflict: nil)
        }
        _ = try await f.asUser(F.uuid(2)) { tx in
            try await tx.insert([MessageTests.message(mine, from: 2, to: 1, "أهلا", at: 2)], into: S.messages, conflict: nil)
            try await tx.insert([RowValues(["user_id": .text(F.uuid(2)), "event_type": .text("app_open")])], into: S.analyticsEvents, conflict: nil)
        }
        _ = try await f.asUser(F.uuid(3)) { tx in try await tx.insert([MessageTests.message(theirs, from: 3, to: 4, "not yours", at: 3)], into: S.messages, conflict: nil) }
        return (mine, theirs)
    }

    func section(_ export: JSONValue, _ key: String) throws -> [String: [[String: JSONValue]]] {
        guard case .object(let members) = export, case .object(let tables)? = members.first(where: { $0.key == key })?.value else {
            throw CaravanError(.internalFailure, "no \(key) in the export")
        }
        var result: [String: [[String: JSONValue]]] = [:]
        for (name, rows) in tables {
            guard case .array(let items) = rows else { continue }
            result[name] = items.compactMap { if case .object(let pairs) = $0 { Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }) } else { nil } }
        }
        return result
    }

    @Test("export_my_data: the user's own rows of every table; other users as id and first name only", arguments: Engine.allCases)
    func exportMyData(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (mine, _) = try await Self.world(f)
        guard case .scalar(.json(let text)) = try await f.call("export_my_data", as: F.uuid(1), [:]) else {
            Issue.record("export_my_data returned no JSON"); return
        }
        let export = try JSONParser.parse(text)
        let tables = try section(export, "tables")
        #expect(tables["profiles"]?.map { $0["id"] } == [.string(F.uuid(1))])
        #expect(tables["profiles"]?.first?["bio"] == .string("One's own bio"))
        #expect(tables["profile_private"]?.first?["email"] == .string("one@example.com"))
        #expect(tables["matches"]?.count == 1 && tables["conversations"]?.map { $0["id"] } == [.string(mine)])
        #expect(tables["messages"]?.compactMap { if case .string(let t)? = $0["original_text"] { t } else { nil } }.sorted() == ["hello", "أهلا"])
        #expect(tables["swipes"]?.count == 2 && tables["swipes"]?.allSatisfy { $0["swiper_id"] == .string(F.uuid(1)) } == true)
        #expect(tables["saved_phrases"]?.count == 1 && tables["user_preferences"]?.count == 1)
        // Analytics events are insert-only for users (item 5), yet one's own are one's data: exactly those, not user 2's.
        #expect(tables["analytics_events"]?.map { $0["user_id"] } == [.string(F.uuid(1))])
        // Other users: the two named by the rows (2: match, messages; 3: a swipe), as id and first name only.
        let people = try section(export, "people")
        #expect(people["profiles"]?.map { $0["id"] } == [.string(F.uuid(2)), .string(F.uuid(3))])
        #expect(people["profiles"]?.allSatisfy { Set($0.keys) == ["id", "first_name"] } == true)
        #expect(people["profiles"]?.first?["first_name"] == .string("User 2"))
        #expect(!text.contains("Two's secret bio") && !text.contains("Three's bio") && !text.contains("not yours"))
        #expect(!text.contains(F.uuid(4)), "user 4 is in none of user 1's rows")
    }

    @Test("caravan export user (service role): the same rows plus the analytics events; CSV has people.profiles.csv", arguments: Engine.allCases)
    func operatorExport(engine: Engine) async throws {
        let f = try await F(engine: engine)
        _ = try await Self.world(f)
        let export = try await f.store.readOnly(f.catalog.access(for: .serviceRole)) { tx in try await UserExport.collect(F.uuid(1), in: tx) }
        let counts = Dictionary(uniqueKeysWithValues: export.tables.map { ($0.name, $0.result.rows.count) })
        #expect(counts["analytics_events"] == 1 && counts["messages"] == 2 && counts["matches"] == 1 && counts["swipes"] == 2)
        #expect(counts["translation_cache"] == nil && counts["languages"] == nil)
        let files = Dictionary(uniqueKeysWithValues: export.csvFiles.map { ($0.name, String(decoding: $0.bytes, as: UTF8.self)) })
        let people = try #require(files["people.profiles.csv"])
        let lines = people.split(whereSeparator: \.isNewline)
        #expect(lines.first == "id,first_name" && lines.count == 3, "\(people)")
        #expect(lines.dropFirst().map { String($0) } == ["\(F.uuid(2)),User 2", "\(F.uuid(3)),User 3"])
        #expect(files["messages.csv"]?.contains("not yours") == false)
    }
}
