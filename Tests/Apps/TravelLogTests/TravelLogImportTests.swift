import CaravanCore
import CaravanTesting
import Foundation
import Testing
import TravelLog

/// The rows of `table` matching `filter` (every column), as dictionaries.
func travelRows(_ table: TableSchema, _ filter: BoundPredicate = .constant(true), in transaction: any StoreTransaction) async throws -> [[String: Value]] {
    let plan = try ReadPlan(table: table, query: Query(), access: filter, maxRows: nil, includeCount: false)
    let result = try await transaction.fetch(plan)
    return result.rows.map { Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), $0)) }
}

@Suite("caravan import world: the real GeoNames files", .enabled(if: hasWorld, "needs ../shared/data/world/countries.csv and world_cities15000.csv"))
struct TravelLogImportTests {
    @Test(arguments: Engine.allCases)
    func theRealFilesImportCompletely(engine: Engine) async throws {
        let (store, summary) = try await RealWorld.shared.get(engine)
        #expect(summary.rejections.isEmpty, "\(summary.rejections.prefix(5))")
        #expect(summary.countries.total == 252 && summary.countries.inserted == 252)
        let expected = WorldFiles.recordCount(try WorldFiles.cities(for: engine))
        if engine == .sqlite { #expect(expected == 34_006) }
        #expect(summary.cities.total == expected && summary.cities.inserted == expected)
        let (countries, cities) = try await inRolledBack(store) { tx in
            await (try travelRows(TravelLogSchema.countries, in: tx), try travelRows(TravelLogSchema.cities, in: tx))
        }
        #expect(countries.count == 252)
        #expect(cities.count == expected)
        let countryIDs = Set(countries.compactMap { $0["id"] })
        #expect(cities.allSatisfy { countryIDs.contains($0["country_id"] ?? .null) }, "every city's country_id resolves")
        // NA is Namibia's code, not a missing value: the country and its 19 cities (Windhoek among them) are there.
        let namibia = try #require(countries.first { $0["country_code"] == .text("NA") })
        #expect(namibia["name"] == .text("Namibia"))
        let namibian = cities.filter { $0["country_id"] == namibia["id"] }
        #expect(namibian.count == 19)
        #expect(namibian.contains { $0["display_name"] == .text("Windhoek") && $0["name_ar"] == .text("ويندهوك") })
        // The design's plain_name: the display name without Latin diacritics; the search columns are derived.
        let zurich = try #require(cities.first { $0["id"] == .integer(2_657_896) })
        #expect(zurich["display_name"] == .text("Zürich") && zurich["plain_name"] == .text("Zurich"))
        #expect(zurich["search_display"] == .text("zurich") && zurich["search_ar"] == .text("زيورخ"))
        #expect(zurich["latitude"] == .double(47.36667) && zurich["population"] == .integer(415_367))
    }

    /// Re-importing updates in place (upsert by id): the same rows, nothing duplicated, a changed name applied.
    @Test(arguments: Engine.allCases)
    func reimportIsIdempotent(engine: Engine) async throws {
        let store = try await engine.makeStore(migrations: travelCatalog.migrations)
        let importer = WorldImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: travelCatalog.access(for: .serviceRole))
        let countries = Self.subset(WorldFiles.countries) { $0.hasPrefix("CH,") || $0.hasPrefix("NA,") }
        let cities = Self.subset(WorldFiles.cities) { $0.contains(",CH,Switzerland,") || $0.contains(",NA,Namibia,") }
        let first = try await importer.run(countriesCSV: countries, citiesCSV: cities)
        #expect(first.rejections.isEmpty && first.countries.inserted == 2 && first.cities.inserted > 19)
        let renamed = cities.replacingOccurrences(of: "3352136,Windhoek,", with: "3352136,Windhoek City,")
        let second = try await importer.run(countriesCSV: countries, citiesCSV: renamed)
        #expect(second.countries.updated == 2 && second.countries.inserted == 0)
        #expect(second.cities.updated == first.cities.inserted && second.cities.inserted == 0)
        let (all, tokens) = try await inRolledBack(store) { tx in
            await (try travelRows(TravelLogSchema.cities, in: tx), try travelRows(TravelLogSchema.cityNameTokens, in: tx))
        }
        let windhoek = all.first { $0["id"] == .integer(3_352_136) }
        #expect(all.count == first.cities.inserted)
        #expect(windhoek?["display_name"] == .text("Windhoek City"))
        // The token table follows the rename, and holds exactly the distinct folded tokens of every city's names.
        var tokensByCity: [Value: Set<Value>] = [:]
        for row in tokens { tokensByCity[row["city_id"] ?? .null, default: []].insert(row["token"] ?? .null) }
        #expect(tokensByCity[.integer(3_352_136)] == [.text("windhoek"), .text("city"), .text("ويندهوك")])
        for city in all {
            let names = ["display_name", "plain_name", "name_ar"].compactMap { column -> String? in
                if case .text(let name)? = city[column] { return name } else { return nil }
            }
            let expected = Set(names.flatMap { name in
                name.lowercased().split { !$0.isLetter && !$0.isNumber }.map { Value.text(TextFolding.fold(String($0))) }
            })
            #expect(tokensByCity[city["id"] ?? .null, default: []] == expected, "\(names)")
        }
        #expect(tokens.count == tokensByCity.values.reduce(0) { $0 + $1.count })
    }

    /// Bad rows are reported with their line and field and skipped; good rows around them are imported.
    @Test func badRowsAreReportedAndSkipped() async throws {
        let store = try await Engine.sqlite.makeStore(migrations: travelCatalog.migrations)
        let importer = WorldImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: travelCatalog.access(for: .serviceRole))
        let countries = """
            iso2,iso3,iso_numeric,name,name_ar,capital,continent_code,continent,population,area_km2,currency_code,languages,neighbours,geonameid
            NA,NAM,516,Namibia,ناميبيا,Windhoek,AF,Africa,2448301,825418,NAD,"en-NA,af,de",\"AO,BW\",3355338
            XX,XXX,0,,,,,,-5,0,,,,99
            """
        let header = "geonameid,name,name_ar,country_code,country_name,admin1_code,admin1_name,admin1_iso,population,latitude,longitude,timezone"
        let cities = [
            header,
            "3352136,Windhoek,ويندهوك,NA,Namibia,21,Khomas,NA-KH,386219,-22.55941,17.08323,Africa/Windhoek",
            "1,Nowhere,,ZZ,Nowhere,,,,10,0,0,",
            "2,\"Far, North\",,NA,Namibia,,,,10,91,0,",
            "3,Minus,,NA,Namibia,,,,-1,0,0,",
            "x4,Bad id,,NA,Namibia,,,,1,0,0,",
        ].joined(separator: "\n")
        let summary = try await importer.run(countriesCSV: countries, citiesCSV: cities)
        #expect(summary.countries.inserted == 1 && summary.cities.inserted == 1)
        let reported = summary.rejections.map { "\($0.file):\($0.line):\($0.field)" }
        #expect(reported == ["countries:3:name", "cities:3:country_code", "cities:4:latitude", "cities:5:population", "cities:6:geonameid"])
    }

    /// The header and the records whose line satisfies `keep`.
    static func subset(_ csv: String, keep: (Substring) -> Bool) -> String {
        let lines = csv.split(whereSeparator: \.isNewline)
        return ([lines[0]] + lines.dropFirst().filter(keep)).joined(separator: "\n") + "\n"
    }
}

@Suite struct WorldCSVTests {
    @Test func quotedFieldsCommasQuotesAndLineBreaks() throws {
        let records = try WorldCSV.records("a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\nNA,,\"\"\n")
        #expect(records.map(\.fields) == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["NA", "", ""]])
        #expect(records.map(\.line) == [1, 2, 5])
    }

    @Test func plainNamesLoseOnlyLatinDiacritics() {
        let cases = [("Zürich", "Zurich"), ("Łódź", "Lodz"), ("São Paulo", "Sao Paulo"), ("Madīnat ‘Īsá", "Madinat ‘Isa"),
                     ("Ørsta", "Orsta"), ("Москва́", "Москва́"), ("Jidd Ḩafş", "Jidd Hafs")]
        for (name, plain) in cases { #expect(WorldRowMapping.withoutLatinDiacritics(name) == plain, "\(name)") }
    }
}
