import CaravanCore
import CaravanTesting
import Foundation
import Testing
import TravelLog

/// An independent implementation of `search_cities`' matching and ranking rule, over rows read in full: folded names
/// compared scalar by scalar in Swift (no SQL, no token column), the rank computed per row, then sorted.
struct ReferenceSearch {
    struct Entry {
        let id: Int64
        let names: [String]
        let population: Int64
    }

    let entries: [Entry]

    init(_ rows: [[String: Value]], nameColumns: [String]) {
        entries = rows.compactMap { row in
            guard case .integer(let id)? = row["id"], case .integer(let population)? = row["population"] else { return nil }
            let names = nameColumns.compactMap { column -> String? in
                if case .text(let name)? = row[column] { return name }
                return nil
            }
            return Entry(id: id, names: names, population: population)
        }
    }

    static func isPrefix(_ prefix: String, of text: String) -> Bool {
        text.unicodeScalars.starts(with: prefix.unicodeScalars)
    }

    /// The rank of `entry` for `query` (1 exact, 2 whole-name prefix, 3 token prefixes), or nil.
    static func rank(_ entry: Entry, query: String) -> Int? {
        let q = TextFolding.fold(query).trimmingCharacters(in: .whitespacesAndNewlines)
        let folded = entry.names.map(TextFolding.fold)
        if folded.contains(q) { return 1 }
        if folded.contains(where: { isPrefix(q, of: $0) }) { return 2 }
        let queryTokens = TextFolding.tokens(in: query)
        let nameTokens = entry.names.flatMap { TextFolding.tokens(in: $0) }
        if !queryTokens.isEmpty, queryTokens.allSatisfy({ token in nameTokens.contains { isPrefix(token, of: $0) } }) { return 3 }
        return nil
    }

    func search(_ query: String, limit: Int) -> [(id: Int64, rank: Int)] {
        let ranked = entries.compactMap { entry in Self.rank(entry, query: query).map { (entry, $0) } }
        let sorted = ranked.sorted { a, b in
            if a.1 != b.1 { return a.1 < b.1 }
            if a.0.population != b.0.population { return a.0.population > b.0.population }
            return a.0.id < b.0.id
        }
        return sorted.prefix(limit).map { ($0.0.id, $0.1) }
    }
}

@Suite("search_cities and search_countries on the real GeoNames data", .enabled(if: hasWorld, "needs ../shared/data/world"))
struct TravelLogSearchTests {
    static func search(_ q: String, function: String = "search_cities", max: Int? = nil, store: any Store) async throws -> [(id: Int64, rank: Int)] {
        var given: [String: JSONValue] = ["q": .string(q)]
        if let max { given["max_results"] = .integer(Int64(max)) }
        let arguments = given
        let rows = try await inRolledBack(store, as: Identity(role: .anon)) { tx in await tableRows(try callTravel(function, arguments, in: tx)) }
        return rows.compactMap { row in
            guard case .integer(let id)? = row["id"], case .integer(let rank)? = row["rank"] else { return nil }
            return (id, Int(rank))
        }
    }

    static let zurich: Int64 = 2_657_896

    @Test(arguments: Engine.allCases)
    func latinWithAndWithoutDiacritics(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        for q in ["zurich", "zürich", "ZÜRICH", "  Zurich "] {
            let hits = try await Self.search(q, store: store)
            #expect(hits.first?.id == Self.zurich && hits.first?.rank == 1, "\(q): \(hits.prefix(3))")
        }
        // "zur" is a prefix of Zürich (rank 2, the most populous) and of the Zürich districts.
        let prefix = try await Self.search("zur", store: store)
        #expect(prefix.first?.id == Self.zurich && prefix.first?.rank == 2)
    }

    /// Hamza, taa marbuta, alef maqsura, tashkeel and direction marks in the stored Arabic names.
    @Test(arguments: Engine.allCases)
    func arabicNamesFoldLikeEverywhereElse(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        let cases: [(String, Int64, Int)] = [
            ("راس الخيمه", 291_074, 1),     // stored رأس الخيمة: hamza on alef, taa marbuta
            ("رأس الخيمة", 291_074, 1),
            ("اندورا", 3_041_563, 2),       // stored أندورا لا فيلا
            ("مدينه عيسي", 290_187, 1),     // stored مَدِينَة عِيسَى: tashkeel, ة, ى
            ("القصور", 2_229_798, 1),       // stored القصور followed by U+200E
            ("الرياض", 108_410, 1),
        ]
        for (q, id, rank) in cases {
            let hits = try await Self.search(q, store: store)
            #expect(hits.contains { $0.id == id && $0.rank == rank }, "\(q): \(hits.prefix(5))")
        }
    }

    @Test(arguments: Engine.allCases)
    func multiTokenQueries(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        let newYork: Int64 = 5_128_581
        #expect(try await Self.search("new york", store: store).first.map { [$0.id, Int64($0.rank)] } == [newYork, 2])
        #expect(try await Self.search("york new", store: store).contains { $0.id == newYork && $0.rank == 3 })
        #expect(try await Self.search("nyc zzzz", store: store).isEmpty)
    }

    /// SQL metacharacters, LIKE wildcards, very long text: never an error, and always the rule's answer.
    static let hostile = ["%", "_", "*", "\\", "a%", "%a", "s_n", "' OR 1=1 --", "\"; DROP TABLE cities; --", "[a-z]*",
                          String(repeating: "a", count: 200), "🙂", "ﻻ"]
    static let ordinary = ["a", "san", "al", "zur", "new y", "york new", "مدينه", "الر", "st", "sao", "ab", "zürich",
                           "الق", "saint p", "ciudad de", "1", "el ", "ال ق"]

    /// The function's answer equals the independent implementation's, rows and order, for every query.
    @Test(arguments: Engine.allCases)
    func rankOrderMatchesTheReference(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        let rows = try await inRolledBack(store) { tx in try await travelRows(TravelLogSchema.cities, in: tx) }
        let reference = ReferenceSearch(rows, nameColumns: ["display_name", "plain_name", "name_ar"])
        for q in Self.ordinary + Self.hostile {
            let actual = try await Self.search(q, max: 50, store: store)
            let expected = reference.search(q, limit: 50)
            #expect(actual.map(\.id) == expected.map(\.id), "\(q)")
            #expect(actual.map(\.rank) == expected.map(\.rank), "\(q)")
        }
    }

    @Test(arguments: Engine.allCases)
    func countriesByNameArabicNameAndCode(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        let namibia: Int64 = 3_355_338
        #expect(try await Self.search("NA", function: "search_countries", store: store).first.map { [$0.id, Int64($0.rank)] } == [namibia, 1])
        #expect(try await Self.search("namib", function: "search_countries", store: store).first?.id == namibia)
        #expect(try await Self.search("الامارات", function: "search_countries", store: store).first?.id == 290_557)
        let rows = try await inRolledBack(store) { tx in try await travelRows(TravelLogSchema.countries, in: tx) }
        let reference = ReferenceSearch(rows, nameColumns: ["name", "name_ar", "country_code"])
        for q in ["a", "un", "united s", "ال", "s", "na"] + Self.hostile {
            let actual = try await Self.search(q, function: "search_countries", store: store)
            #expect(actual.map(\.id) == reference.search(q, limit: 50).map(\.id), "\(q)")
        }
    }

    @Test(arguments: Engine.allCases)
    func blankOverlongAndBadLimitsAre22023(engine: Engine) async throws {
        let store = try await RealWorld.shared.get(engine).store
        for q in ["", "   ", "\u{200F}", "\u{064E}", "a\u{0}b", String(repeating: "a", count: 201)] {
            let error = await #expect(throws: CaravanError.self) { try await Self.search(q, store: store) }
            #expect(error?.code == .invalidParameterValue, "\(q.unicodeScalars.map(\.value))")
        }
        let error = await #expect(throws: CaravanError.self) { try await Self.search("zur", max: 0, store: store) }
        #expect(error?.code == .invalidParameterValue)
        #expect(try await Self.search("a", max: 3, store: store).count == 3)
    }
}
