import CaravanCore
import CaravanTesting
import CaravanSQLite
import Foundation
import Places
import Testing

private let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])

private func placesPlan(_ queryString: String, count: Bool = false) throws -> ReadPlan {
    try ReadPlan(table: PlacesSchema.places, query: try QueryParser.parseRead(QueryString(queryString)),
                 access: .constant(true), maxRows: nil, includeCount: count)
}

private func row(_ result: ReadResult, _ index: Int = 0) -> [String: Value] {
    Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), result.rows[index]))
}

@Suite("places.json import")
struct PlacesImportTests {
    @Test(.enabled(if: sharedDataFile("riyadh/places.json") != nil, "needs ../shared/data/riyadh/places.json"))
    func theRealFileLoadsCompletelyAndReimportUpdates() async throws {
        let path = try #require(sharedDataFile("riyadh/places.json"))
        let entries = try PlacesImporter.entries(of: try JSONParser.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        let importer = PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: catalog.access(for: .serviceRole))

        let first = try await importer.run(entries, dryRun: false)
        #expect(first.total == 5487)
        #expect(first.inserted == 5487)
        #expect(first.rejections.isEmpty)
        #expect(try await store.fetch(try placesPlan("limit=0", count: true)).totalCount == 5487)

        let second = try await importer.run(entries, dryRun: false)
        #expect(second.inserted == 0)
        #expect(second.updated == 5487)

        // Field mapping (§2.3): category_en → category, category → category_ar, lat/lng, sources → data_sources,
        // street → address_ar, hours kept as JSON, trending fallback false, completeness derived.
        let plaza = row(try await store.fetch(try placesPlan("id=eq.crowne-plaza-riyadh-palace")))
        #expect(plaza["category"] == .text("hotel"))
        #expect(plaza["category_ar"] == .text("فنادق"))
        #expect(plaza["latitude"] == .double(24.6646109))
        #expect(plaza["longitude"] == .double(46.7117319))
        #expect(plaza["phone"] == .text("+966 114-054-444"))
        #expect(plaza["address_ar"] == .text("Prince Abdul Rahman Bin Abdul Aziz St."))
        #expect(plaza["tags"] == .json(#"["hotel","IHG"]"#))
        #expect(plaza["data_sources"] == .json(#"["OpenStreetMap node/336216070"]"#))
        #expect(plaza["is_trending"] == .bool(false))
        #expect(plaza["is_active"] == .bool(true))
        // name_ar, name_en, latitude, google_maps_url, tags present → 5 of 10.
        #expect(plaza["completeness_score"] == .double(0.5))
        let withHours = try await store.fetch(try placesPlan("hours=not.is.null&limit=1", count: true))
        #expect(withHours.totalCount == entries.filter { $0["hours"] != nil }.count)
        if case .json(let hours) = row(withHours)["hours"] ?? .null {
            #expect(hours.hasPrefix("\""))
        } else {
            Issue.record("hours not stored as JSON")
        }
        // Counts by category agree with the file.
        let cafesInFile = entries.filter { $0["category_en"] == .string("cafe") }.count
        #expect(try await store.fetch(try placesPlan("category=eq.cafe&limit=0", count: true)).totalCount == cafesInFile)
    }

    @Test func badRowsAreReportedAndSkippedAndGoodRowsKept() async throws {
        let document = """
        [
          {"id": "good-1", "name_ar": "مقهى", "category_en": "cafe", "category": "كافيه", "lat": 24.7, "lng": 46.7, "tags": ["a"]},
          {"id": "bad-lat", "name_ar": "x", "lat": "north", "lng": 46.7},
          {"id": "outside-riyadh", "name_ar": "x", "lat": 30.0, "lng": 46.7},
          {"id": "half-coordinates", "name_ar": "x", "lat": 24.7},
          {"name_ar": "no id"},
          {"id": "no-name"},
          "not an object",
          {"id": "bad-rating", "name_ar": "x", "google_rating": 7},
          {"id": "bad-price", "name_ar": "x", "price_level": "$$$$$"},
          {"id": "bad-tags", "name_ar": "x", "tags": [1, 2]},
          {"id": "good-2", "name_ar": "x", "name_en": "Second", "price_range": "$$", "trending": true, "google_rating": 4.25},
          {"id": "english-only", "name_en": "Only English"}
        ]
        """
        let entries = try PlacesImporter.entries(of: try JSONParser.parse(document))
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        let summary = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: catalog.access(for: .serviceRole), batchSize: 4).run(entries, dryRun: false)

        let rejected = summary.rejections.map { "\($0.index):\($0.field)" }
        #expect(rejected == ["1:lat", "2:lat,lng", "3:lat,lng", "4:id", "5:name_ar", "6:(row)", "7:google_rating", "8:price_level", "9:tags"])
        #expect(summary.rejections.first?.reason == "invalid input syntax for type numeric: \"north\"")
        #expect(summary.rejections[1].reason == "new row for relation \"places\" violates check constraint \"valid_coordinates\"")
        #expect(summary.inserted == 3)
        let stored = try await store.fetch(try placesPlan("select=id,price_range,is_trending,google_rating,name_ar"))
        #expect(stored.rows.map { $0[0] } == [.text("english-only"), .text("good-1"), .text("good-2")])
        let second = row(stored, 2)
        #expect(second["price_range"] == .text("$$"))
        #expect(second["is_trending"] == .bool(true))
        #expect(second["google_rating"] == .double(4.3))
        #expect(row(stored, 0)["name_ar"] == .text("Only English"))
    }

    @Test func dryRunValidatesAndWritesNothing() async throws {
        let entries = try PlacesImporter.entries(of: try JSONParser.parse(#"{"places": [{"id": "a", "name_ar": "x"}, {"id": "b", "lat": 1}]}"#))
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        let summary = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: catalog.access(for: .serviceRole)).run(entries, dryRun: true)
        #expect(summary.valid == 1)
        #expect(summary.rejections.count == 1)
        #expect(try await store.fetch(try placesPlan("", count: true)).totalCount == 0)
    }

    @Test func aDocumentThatIsNotAListIsRefused() {
        #expect { _ = try PlacesImporter.entries(of: try JSONParser.parse(#"{"id": "a"}"#)) } throws: { ($0 as? CaravanError)?.code == .malformedBody }
    }
}
