import CaravanCore
import CaravanTesting
import CaravanSQLite
import Foundation
import Places
import Testing

private let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])

private let fivePlaces = """
[
  {"id": "cafe-nour", "name_ar": "مقهى نور", "name_en": "Café Nour", "category_en": "cafe", "category": "كافيه", "lat": 24.7, "lng": 46.7, "neighborhood": "حي الأندلس"},
  {"id": "bloom", "name_ar": "بلوم", "name_en": "Bloom Cafe", "category_en": "cafe", "category": "كافيه"},
  {"id": "orchard", "name_ar": "اورشارد", "category_en": "cafe", "category": "كافيه", "neighborhood_en": "Al Andalus"},
  {"id": "kudu", "name_ar": "كودو", "category_en": "fast_food", "category": "وجبات سريعة"},
  {"id": "mosque", "name_ar": "مسجد", "category_en": "place_of_worship", "category": "أخرى"}
]
"""

private func count(_ store: SQLiteStore, _ table: TableSchema, _ query: String) async throws -> [[Value]] {
    try await store.fetch(try ReadPlan(table: table, query: try QueryParser.parseRead(QueryString(query)), access: .constant(true), maxRows: nil, includeCount: false)).rows
}

@Suite("Areas and categories follow the data")
struct PlacesReferenceDataTests {
    @Test(.enabled(if: sharedDataFile("riyadh/districts.csv") != nil, "needs ../shared/data/riyadh/districts.csv"))
    func districtsAndCategories() async throws {
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let access = catalog.access(for: .serviceRole)
        _ = try await PlacesImporter(pipeline: pipeline, access: access).run(try PlacesImporter.entries(of: try JSONParser.parse(fivePlaces)), dryRun: false)
        let csv = try String(contentsOfFile: try #require(sharedDataFile("riyadh/districts.csv")), encoding: .utf8)
        let sync = PlacesReferenceData(pipeline: pipeline, access: access)
        let summary = try await sync.sync(districtsCSV: csv)
        #expect(summary.areas == 189)
        #expect(summary.rejectedAreas.isEmpty)
        #expect(summary.newCategories == 3)

        // حي الاندلس (bare alef in districts.csv) counts the place in الأندلس, and the one in "Al Andalus".
        let andalus = try await count(store, PlacesSchema.areas, "select=name_ar,name_en,places_count&name_ar=eq.حي الاندلس")
        #expect(andalus.first?[2] == .integer(2), "\(andalus)")
        let categories = try await count(store, PlacesSchema.categories, "select=id,name_ar,name_en,places_count&order=id")
        #expect(categories.map { $0[0] } == [.text("cafe"), .text("fast_food"), .text("place_of_worship")])
        #expect(categories[2][2] == .text("Place of worship"))
        #expect(categories.map { $0[3] } == [.integer(3), .integer(1), .integer(1)])

        // An admin renames a category and deactivates a place; the next sync keeps the name and recounts.
        _ = try await pipeline.run(access) { transaction in
            _ = try await transaction.update(PlacesSchema.categories, set: RowValues(["name_en": .text("Cafés")]),
                                       where: .compare(try PlacesSchema.categories.requireColumn("id"), .eq, .text("cafe")))
            _ = try await transaction.update(PlacesSchema.places, set: RowValues(["is_active": .bool(false)]),
                                       where: .compare(try PlacesSchema.places.requireColumn("id"), .eq, .text("bloom")))
        }
        let again = try await sync.sync(districtsCSV: csv)
        #expect(again.newCategories == 0)
        let cafe = try await count(store, PlacesSchema.categories, "select=name_en,places_count&id=eq.cafe")
        #expect(cafe.first == [.text("Cafés"), .integer(2)])
    }

    @Test func badDistrictLinesAreReportedNotFatal() {
        let (rows, rejected) = PlacesReferenceData.districts("district_id,name_ar,name_en\n1,حي أ,A\n2\n,x,y\n3,\"حي, ب\",B\n4,حي ج,\n")
        #expect(rows.count == 2)
        #expect(rejected.count == 3)
        #expect(PlacesReferenceData.districts("id,name\n1,a").1.count == 1)
    }
}

@Suite("Generated places", .enabled(if: sharedDataFile("riyadh/places.json") != nil, "needs ../shared/data/riyadh/places.json"))
struct PlacesGeneratorTests {
    static func realEntries() throws -> [JSONValue] {
        let path = try #require(sharedDataFile("riyadh/places.json"))
        return try PlacesImporter.entries(of: try JSONParser.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
    }

    @Test func deterministicRealisticAndImportable() async throws {
        let entries = try Self.realEntries()
        let a = try PlacesGenerator(realEntries: entries, seed: 42)
        let b = try PlacesGenerator(realEntries: entries, seed: 42)
        let c = try PlacesGenerator(realEntries: entries, seed: 43)
        #expect((0..<200).map(a.place) == (0..<200).map(b.place))
        #expect(a.place(5) != c.place(5))
        let realCategories = Set(entries.compactMap { if case .string(let s)? = $0["category_en"] { s } else { nil } })
        let realWords = Set(entries.flatMap { entry -> [String] in
            guard case .string(let name)? = entry["name_ar"] else { return [] }
            return name.split(separator: " ").map(String.init)
        })
        for index in 0..<500 {
            let place = a.place(index)
            guard case .string(let category)? = place["category_en"], case .double(let lat)? = place["lat"], case .double(let lng)? = place["lng"],
                  case .string(let name)? = place["name_ar"] else { Issue.record("incomplete \(place)"); continue }
            #expect(realCategories.contains(category))
            #expect((24.4...25.1).contains(lat) && (46.4...47.1).contains(lng))
            #expect(name.split(separator: " ").allSatisfy { realWords.contains(String($0)) }, "\(name)")
        }
        let (store, _) = try await makeTemporaryStore(migrations: catalog.migrations)
        let summary = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: catalog.access(for: .serviceRole))
            .run((0..<1000).map(a.place), dryRun: false)
        #expect(summary.inserted == 1000)
        #expect(summary.rejections.isEmpty)
    }
}
