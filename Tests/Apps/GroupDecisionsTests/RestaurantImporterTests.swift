import CaravanCore
import CaravanTesting
import Foundation
@testable import GroupDecisions
import Testing

/// The real places.json (`../shared/data/riyadh/places.json` from the project root), or nil.
private func placesFile() -> URL? {
    sharedDataFile("riyadh/places.json").map { URL(fileURLWithPath: $0) }
}

@Suite("caravan import restaurants")
struct RestaurantImporterTests {
    @Test("the real places.json: restaurants, fast food and cafés, counted independently, nothing invented", arguments: Engine.allCases)
    func importsRealData(engine: Engine) async throws {
        guard let url = placesFile() else {
            try Test.cancel("needs ../shared/data/riyadh/places.json (the real places data), which is absent")
        }
        let data = try Data(contentsOf: url)
        // The independent count: Foundation's JSON parser and the English category alone.
        let raw = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        var expected: [String: Int] = [:]
        var expectedNames: [String: String] = [:]
        for place in raw {
            guard let kind = place["category_en"] as? String, ["restaurant", "fast_food", "cafe"].contains(kind) else { continue }
            expected[kind, default: 0] += 1
            if let source = (place["sources"] as? [String])?.first {
                expectedNames[source] = (place["name_en"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? (place["name_ar"] as? String)
            }
        }
        #expect(expected.values.reduce(0, +) > 1_000)

        let f = try await GroupDecisionsFixture(engine: engine)
        let entries: [JSONValue]
        guard case .array(let items) = try JSONParser.parse(bytes: Array(data)) else { Issue.record("places.json is not an array"); return }
        entries = items
        let importer = RestaurantImporter(pipeline: f.pipeline, access: f.catalog.access(for: .serviceRole))
        let summary = try await importer.run(entries)
        #expect(summary.byKind == expected)
        #expect(summary.rejections.isEmpty, "\(summary.rejections.prefix(3))")
        #expect(summary.inserted == expected.values.reduce(0, +))
        #expect(summary.skipped == raw.count - summary.inserted)

        let rows = try await f.rows(GroupDecisionsSchema.restaurants)
        var stored: [String: Int] = [:]
        for row in rows { stored[row["cuisine"]?.textValue ?? "?", default: 0] += 1 }
        #expect(stored == expected)
        #expect(rows.allSatisfy { $0["rating"] == .null && $0["price_range"] == .null && $0["time_to_pick_up"] == .null && $0["photos"] == .null })
        let mismatched = rows.filter { row in expectedNames[row["google_place_id"]?.textValue ?? ""] != row["name"]?.textValue }
        #expect(mismatched.isEmpty, "\(mismatched.prefix(2))")

        // Importing again updates in place (upsert by google_place_id).
        let again = try await importer.run(entries)
        #expect(again.inserted == 0)
        #expect(again.updated == summary.inserted)
        #expect(try await f.rows(GroupDecisionsSchema.restaurants).count == rows.count)
    }

    @Test("an entry without a source or a name is rejected naming the field")
    func rejectsUnmappable() throws {
        #expect(throws: RestaurantImporter.RejectionReason.self) {
            _ = try RestaurantImporter.row(from: .object([("name_en", .string("X")), ("sources", .array([]))]), kind: "cafe")
        }
        do {
            _ = try RestaurantImporter.row(from: .object([("sources", .array([.string("OpenStreetMap node/1")])), ("name_ar", .string(" "))]), kind: "cafe")
            Issue.record("a nameless entry was accepted")
        } catch {
            #expect(error.field == "name_en")
        }
    }
}
