import CaravanCore
import CaravanTesting
import CaravanSQLite
import Foundation
import Places
import Testing

private let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
private let hasPlaces = sharedDataFile("riyadh/places.json") != nil

/// The real 5,487 places, imported once per test process and engine into a temporary store (tests only read it, or
/// write inside rolled-back transactions).
private actor RealPlaces {
    static let shared = RealPlaces()
    // Tasks, not values: concurrent callers must share the one import (an actor is reentrant across awaits).
    private var loading: [Engine: Task<any Store, any Error>] = [:]

    func get(_ engine: Engine) async throws -> any Store {
        if let task = loading[engine] { return try await task.value }
        let task = Task { () throws -> any Store in
            let path = try #require(sharedDataFile("riyadh/places.json"))
            let entries = try PlacesImporter.entries(of: try JSONParser.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
            let store = try await engine.makeStore(migrations: catalog.migrations)
            let summary = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()),
                                                   access: catalog.access(for: .serviceRole), batchSize: 2000).run(entries, dryRun: false)
            #expect(summary.inserted == 5487)
            return store
        }
        loading[engine] = task
        return try await task.value
    }
}

/// Calls an RPC function as `identity` in a rolled-back transaction; rows as dictionaries.
private func call(_ function: String, _ arguments: [String: JSONValue], as identity: Identity = Identity(role: .anon),
                  store: any Store, before: (@Sendable (any StoreTransaction) async throws -> Void)? = nil) async throws -> [[String: Value]] {
    let rpc = try catalog.requireFunction(function)
    let bound = try rpc.bind(arguments)
    return try await store.transaction(catalog.access(for: identity), rollback: true, grant: TransactionGrant()) { transaction -> [[String: Value]] in
        try await before?(transaction)
        guard case .table(let columns, let rows) = try await rpc.body(bound, transaction) else { return [] }
        return rows.map { Dictionary(uniqueKeysWithValues: zip(columns.map(\.name), $0)) }
    }.0
}

private func search(_ query: String, _ extra: [String: JSONValue] = [:], store: any Store) async throws -> [[String: Value]] {
    try await call("search_places", extra.merging(["query": .string(query)]) { a, _ in a }, store: store)
}

private func ids(_ rows: [[String: Value]]) -> [String] {
    rows.compactMap { if case .text(let id)? = $0["id"] { id } else { nil } }
}

private func number(_ value: Value?) -> Double? {
    switch value {
    case .double(let d)?: d
    case .integer(let i)?: Double(i)
    default: nil
    }
}

/// The same transaction seen as another caller (its policies apply to what the function reads).
private struct AsIdentity: StoreTransaction {
    let base: any StoreTransaction
    let access: AccessContext
    func fetch(_ plan: ReadPlan) async throws -> ReadResult { try await base.fetch(plan) }
    func insert(_ rows: [RowValues], into table: TableSchema, conflict: ConflictTarget?) async throws -> WriteOutcome { try await base.insert(rows, into: table, conflict: conflict) }
    func update(_ table: TableSchema, set values: RowValues, where filter: BoundPredicate) async throws -> WriteOutcome { try await base.update(table, set: values, where: filter) }
    func delete(from table: TableSchema, where filter: BoundPredicate) async throws -> WriteOutcome { try await base.delete(from: table, where: filter) }
    func upsertEach(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String]) async throws -> [RowOutcome] { try await base.upsertEach(rows, into: table, conflictColumns: conflictColumns) }
    func rankedFetch(_ search: RankedSearch) async throws -> [RankedRow] { try await base.rankedFetch(search) }
    func serialize(on key: String) async throws { try await base.serialize(on: key) }
}

@Suite("search_places on the real Riyadh places", .enabled(if: hasPlaces, "needs ../shared/data/riyadh/places.json"))
struct PlacesSearchTests {
    @Test(arguments: Engine.allCases, [
        // Typed without hamza, ة as ه: صيدلية أطلس.
        ("صيدليه اطلس", "node-1819663039"),
        // Stored with tashkeel (بِك كافيه), typed without.
        ("بك كافيه", "node-12042517337"),
        // ة typed as ه, whole phrase.
        ("جامعه الملك سعود", "jami-at-al-malik-sa-ud"),
        // Arabic-Indic digits in the data (برو٩٢, سكة ٨), ASCII digits typed; and the other way round.
        ("برو92", "brew-92"), ("سكه 8", "sekkah-8"), ("Brew ٩٢", "brew-92"),
        // إ typed as ا; ى typed as ي (العزيزية جاليرى); ؤ typed as و.
        ("ايرث كافيه", "urth-caffe"), ("العزيزيه جاليري", "node-4476353441"), ("موسسه كشف تسربات المياه", "node-3830240295"),
        // A direction mark stored at the start of the name (U+200F أمانة…), typed without it and without hamza.
        ("امانه منطقه الرياض", "riyadh-municipality-main-building"),
        // Type-ahead: the last word is a prefix.
        ("starb", "starbucks"), ("ستارب", "starbucks-5"), ("Aster San", "aster-sanad-hospital"),
        // Latin case and English stemming (hospitals → hospital).
        ("KUDU", "kudu"), ("sanad hospitals", "aster-sanad-hospital"),
        // A Latin typo: no full-text hit, trigram similarity finds it.
        ("Starbuks", "starbucks"), ("Dalah Hospitl", "dallah-hospital"),
    ] as [(String, String)])
    func findsTheExpectedPlace(engine: Engine, _ example: (String, String)) async throws {
        let (query, expected) = example
        let store = try await RealPlaces.shared.get(engine)
        let found = ids(try await search(query, ["max_results": .integer(20)], store: store))
        #expect(found.contains(expected), "\(query) → \(found.prefix(5))")
    }

    @Test(arguments: Engine.allCases)
    func relevanceIsDescendingAndBlendsTheRating(engine: Engine) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let rows = try await search("coffee", ["max_results": .integer(50)], store: store)
        #expect(rows.count > 10)
        let relevances = rows.compactMap { number($0["relevance"]) }
        #expect(relevances == relevances.sorted(by: >))
        #expect(relevances.allSatisfy { $0 > 1 }, "full-text hits rank above 1")
        // The typo fallback's rows rank below 1.
        let fuzzy = try await search("Starbuks", store: store)
        #expect(!fuzzy.isEmpty && fuzzy.allSatisfy { (number($0["relevance"]) ?? 2) < 1 })
    }

    @Test(arguments: Engine.allCases)
    func filtersApplyInTheQuery(engine: Engine) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let cafes = try await search("coffee", ["cat": .string("cafe"), "max_results": .integer(100)], store: store)
        #expect(!cafes.isEmpty && cafes.allSatisfy { $0["category"] == .text("cafe") })
        let capped = try await search("مسجد", ["max_results": .integer(5000)], store: store)
        #expect(capped.count == PlacesSearch.maxResultsCap)
        #expect(try await search("coffee", ["min_rating": .double(4.5)], store: store).isEmpty, "no rating in the OSM data")
        await #expect(throws: CaravanError.self) { try await search("coffee", ["max_results": .integer(0)], store: store) }
    }

    @Test(arguments: Engine.allCases)
    func anonymousCallersSeeOnlyActivePlaces(engine: Engine) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let deactivate: @Sendable (any StoreTransaction) async throws -> Void = { transaction in
            let places = PlacesSchema.places
            let outcome = try await transaction.update(places, set: RowValues(["is_active": .bool(false)]),
                                                 where: .compare(try places.requireColumn("id"), .eq, .text("brew-92")))
            #expect(outcome.updated == 1)
        }
        // The update and the search run in one transaction (as the service role, which bypasses policies, then
        // as anon through the same transaction's rules): the search index follows the row through the triggers.
        let asService = try await call("search_places", ["query": .string("brew 92")], as: .serviceRole, store: store, before: deactivate)
        #expect(ids(asService).contains("brew-92"))
        let rpc = try catalog.requireFunction("search_places")
        let arguments = try rpc.bind(["query": .string("brew 92")])
        let anonRows = try await store.transaction(catalog.access(for: .serviceRole), rollback: true, grant: TransactionGrant()) { transaction -> [String] in
            try await deactivate(transaction)
            let anon = AsIdentity(base: transaction, access: catalog.access(for: Identity(role: .anon)))
            guard case .table(_, let rows) = try await rpc.body(arguments, anon) else { return [] }
            return rows.compactMap { if case .text(let id) = $0[0] { id } else { nil } }
        }.0
        #expect(!anonRows.contains("brew-92"))
        #expect(ids(try await search("brew 92", store: store)).contains("brew-92"), "rolled back: active again")
    }

    @Test(arguments: Engine.allCases)
    func theIndexFollowsUpdatesAndDeletes(engine: Engine) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let rename: @Sendable (any StoreTransaction) async throws -> Void = { transaction in
            let places = PlacesSchema.places
            _ = try await transaction.update(places, set: RowValues(["name_en": .text("Zanzibar Lantern"), "name_ar": .text("فانوس زنجبار")]),
                                       where: .compare(try places.requireColumn("id"), .eq, .text("kudu")))
            _ = try await transaction.delete(from: places, where: .compare(try places.requireColumn("id"), .eq, .text("brew-92")))
        }
        let renamed = try await call("search_places", ["query": .string("zanzibar")], as: .serviceRole, store: store, before: rename)
        #expect(ids(renamed) == ["kudu"])
        let arabic = try await call("search_places", ["query": .string("فانوس")], as: .serviceRole, store: store, before: rename)
        #expect(ids(arabic).first == "kudu", "the full-text hit first; similar names (الفانوس) may follow")
        let deleted = try await call("search_places", ["query": .string("brew 92")], as: .serviceRole, store: store, before: rename)
        #expect(!ids(deleted).contains("brew-92"))
        let near = try await call("nearby_places", ["lat": .double(24.7), "lng": .double(46.7), "radius_m": .integer(100_000), "max_results": .integer(100)],
                                  as: .serviceRole, store: store, before: rename)
        #expect(!ids(near).contains("brew-92"))
    }

    /// Hostile input never errors, and never means more than its tokens: the result equals the search for the
    /// folded tokens joined by spaces.
    @Test(arguments: Engine.allCases, [
        "\"coffee", "coffee\"", "\"\"\"", "coffee OR x", "coffee AND", "NOT coffee", "coffee NOT hill", "NEAR(coffee hill)",
        "coffee*", "*", "-coffee", "coffee -hill", "c*o*f", "{name_en}: coffee", "name_en:coffee", "^coffee", "coffee + hill",
        "(coffee", "coffee)", "'; DROP TABLE places; --", "ORCHARD", "🤖☕️", "☕ coffee 🍩", "", "   ", "\u{200F}\u{200E}",
        "%", "_", "\\", "coffee\0hill", String(repeating: "قهوة coffee ", count: 900),
    ])
    func hostileQueriesAreSafe(engine: Engine, query: String) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let rows = try await search(query, ["max_results": .integer(100)], store: store)
        let tokens = TextFolding.tokens(in: query)
        if tokens.isEmpty {
            #expect(rows.isEmpty)
            return
        }
        let plain = try await search(tokens.joined(separator: " "), ["max_results": .integer(100)], store: store)
        #expect(ids(rows) == ids(plain), "\(query.prefix(40))")
    }

    @Test(arguments: Engine.allCases)
    func orDoesNotBroadenTheQuery(engine: Engine) async throws {
        let store = try await RealPlaces.shared.get(engine)
        let coffee = Set(ids(try await search("coffee", ["max_results": .integer(100)], store: store)))
        let withOr = ids(try await search("coffee OR hill", ["max_results": .integer(100)], store: store))
        #expect(!withOr.isEmpty)
        #expect(Set(withOr).isSubset(of: coffee))
        #expect(withOr.contains("coffee-hill-cafe"))
    }
}

/// The engines rank differently (bm25 vs ts_rank, porter vs snowball stems) but must agree on what matches: the same
/// places for each query when fewer than the cap match, the same count otherwise. The typo fallback scores alike
/// (`TrigramSimilarity` on both) but gathers candidates differently: SQLite looks up the query's rarer trigrams,
/// Postgres takes every row word-similar enough (a superset), so Postgres finds at least what SQLite finds.
@Suite("search_places: SQLite and PostgreSQL find the same places", .enabled(if: hasPlaces && Engine.postgresURL != nil, "needs places.json and CARAVAN_TEST_DATABASE_URL"))
struct PlacesSearchEngineAgreementTests {
    @Test(arguments: [
        "coffee", "مسجد", "صيدليه", "hospital", "hospitals", "starb", "جامعه الملك سعود", "برو92", "Aster San", "pharmacy",
        "مطعم", "restaurant", "parks", "حديقه", "كافيه", "burger", "Starbuks", "Dalah Hospitl", "العليا", "school",
    ])
    func sameMatches(query: String) async throws {
        let sqlite = try await search(query, ["max_results": .integer(100)], store: try await RealPlaces.shared.get(.sqlite))
        let postgres = try await search(query, ["max_results": .integer(100)], store: try await RealPlaces.shared.get(.postgres))
        let a = Set(ids(sqlite)), b = Set(ids(postgres))
        let detail = "\(query): only SQLite \(a.subtracting(b).sorted().prefix(5)), only Postgres \(b.subtracting(a).sorted().prefix(5))"
        let fuzzy = (sqlite + postgres).allSatisfy { (number($0["relevance"]) ?? 2) < 1 }
        if fuzzy {
            #expect(!a.isEmpty && a.isSubset(of: b), "\(detail)")
        } else if a.count < 100 && b.count < 100 {
            #expect(a == b, "\(detail)")
        } else {
            #expect(a.count == b.count, "\(detail)")
        }
    }
}

@Suite("nearby_places against brute force", .enabled(if: hasPlaces, "needs ../shared/data/riyadh/places.json"))
struct NearbyPlacesTests {
    /// An independent great-circle distance: the spherical law of cosines in the vector form (atan2 of the cross and
    /// dot products), on the same mean radius.
    static func distance(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        func vector(_ lat: Double, _ lng: Double) -> (Double, Double, Double) {
            let phi = lat * .pi / 180, lambda = lng * .pi / 180
            return (cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
        }
        let a = vector(lat1, lng1), b = vector(lat2, lng2)
        let cross = (a.1 * b.2 - a.2 * b.1, a.2 * b.0 - a.0 * b.2, a.0 * b.1 - a.1 * b.0)
        let crossNorm = (cross.0 * cross.0 + cross.1 * cross.1 + cross.2 * cross.2).squareRoot()
        let dot = a.0 * b.0 + a.1 * b.1 + a.2 * b.2
        return 6_371_008.8 * atan2(crossNorm, dot)
    }

    @Test(arguments: Engine.allCases, [
        (24.7136, 46.6753, 5000, 20, nil as String?), (24.6877, 46.6857, 1000, 50, nil), (24.7743, 46.7386, 3000, 20, "cafe"),
        (24.63, 46.72, 20000, 100, "hotel"), (24.9, 46.5, 500, 20, nil),
    ] as [(Double, Double, Int, Int, String?)])
    func matchesBruteForce(engine: Engine, _ example: (Double, Double, Int, Int, String?)) async throws {
        let (lat, lng, radius, limit, category) = example
        let store = try await RealPlaces.shared.get(engine)
        var arguments: [String: JSONValue] = ["lat": .double(lat), "lng": .double(lng), "radius_m": .integer(Int64(radius)), "max_results": .integer(Int64(limit))]
        if let category { arguments["cat"] = .string(category) }
        let rows = try await call("nearby_places", arguments, store: store)

        let all = try await store.fetch(try ReadPlan(
            table: PlacesSchema.places,
            query: try QueryParser.parseRead(QueryString("select=id,latitude,longitude,category&is_active=is.true&latitude=not.is.null")),
            access: .constant(true), maxRows: nil, includeCount: false))
        var expected: [(id: String, distance: Double)] = []
        for row in all.rows {
            guard case .text(let id) = row[0], let plat = number(row[1]), let plng = number(row[2]) else { continue }
            if let category, row[3] != .text(category) { continue }
            let d = Self.distance(lat, lng, plat, plng)
            if d <= Double(radius) { expected.append((id, d)) }
        }
        expected.sort { $0.distance < $1.distance }
        let byID = Dictionary(expected.map { ($0.id, $0.distance) }, uniquingKeysWith: { a, _ in a })

        #expect(rows.count == min(limit, expected.count))
        let distances = rows.compactMap { number($0["distance_meters"]) }
        #expect(distances == distances.sorted())
        for (row, want) in zip(rows, expected) {
            guard case .text(let id)? = row["id"], let got = number(row["distance_meters"]) else { Issue.record("bad row"); continue }
            #expect(abs(got - want.distance) < 0.02, "rank distance \(got) vs \(want.distance)")
            #expect(abs(got - (byID[id] ?? -1)) < 0.02, "\(id) distance")
            if let category { #expect(row["category"] == .text(category)) }
        }
    }

    @Test(arguments: Engine.allCases, [
        ["lat": JSONValue.double(91), "lng": .double(46.7)], ["lat": .double(24.7), "lng": .double(-181)],
        ["lat": .double(24.7), "lng": .double(46.7), "radius_m": .integer(0)],
        ["lat": .double(24.7), "lng": .double(46.7), "radius_m": .integer(-5)],
        ["lat": .double(24.7), "lng": .double(46.7), "radius_m": .integer(100_001)],
        ["lat": .double(24.7), "lng": .double(46.7), "max_results": .integer(0)],
        ["lat": .null, "lng": .double(46.7)],
    ])
    func refusesOutOfRangeArguments(engine: Engine, arguments: [String: JSONValue]) async throws {
        let store = try await RealPlaces.shared.get(engine)
        do {
            _ = try await call("nearby_places", arguments, store: store)
            Issue.record("accepted \(arguments)")
        } catch let error as CaravanError {
            #expect(error.code == .invalidParameterValue)
        }
    }

    @Test func missingArgumentIsUnknownFunction() throws {
        let rpc = try catalog.requireFunction("nearby_places")
        #expect(throws: CaravanError.self) { try rpc.bind(["lat": .double(24.7)]) }
    }
}
