import CaravanCore
import CaravanTesting
@testable import CaravanPostgres
import Foundation
import Places
import Testing

/// `caravan_fold` and `caravan_tokens` (places-0003-search-postgres) against `TextFolding.fold` and
/// `TextFolding.tokens`: for every sample, the folded text must be identical (byte for byte) and so must the token
/// list (the tokens each search document and query is made of). Samples: the inputs of `TextFoldingTests`, more
/// edge cases, and every name, description, category, neighborhood and tag of ../shared/data/riyadh/places.json and
/// every line of districts.csv when present.
@Suite("Postgres folding agrees with TextFolding")
struct PostgresFoldingTests {
    static let vectors = [
        // TextFoldingTests' inputs.
        "ﬁle", "ＡＢＣ１２", "x²", "\u{FEFB}", "مُحَمَّد", "رحمٰن", "مـــدرسة", "\u{200F}الرياض\u{200E}", "a\u{061C}b",
        "أحمد", "إسلام", "آمنة", "ٱلله", "مستشفى", "مؤسسة", "مسائل", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "شارع ١٥",
        "CAFÉ Crème", "São Paulo", "Circulação", "Straße", "ŁÓDŹ", "Øresund", "Æsir", "İstanbul", "e\u{0301}", "й", "हिन्दी",
        "King's Sq.", "", "حي الأندلس", "حي الاندلس", "على", "Café  Ça-Va, ١٢ الأندلس", "مـدرسة", "ab\u{200F}cd",
        "\"*-NEAR( OR", "🚌 bus", "x\u{0301}\u{0627}\u{0654}",
        // More: ligatures and strokes, sigma, zero-width and bidi controls, Arabic punctuation, emoji, symbols.
        "ΣΊΣΥΦΟΣ", "ẞ œuvre þorn ðe ħ ı ƀ ɨ ŧ", "a\u{200C}b\u{200D}c\u{202B}d\u{2067}e\u{FEFF}f", "قهوة، شاي؛ ماء؟",
        "☕ coffee 🍩 — 50٪", "℃ № ½ ⅷ ①", "ﷺ ﷲ", "e\u{0301}\u{0302}\u{0323}", "Ǆ ǅ ǆ", "ﬀ ﬂ ﬃ", "x\u{06D6}y\u{06DD}z",
        "١٫٥ ٢٬٠٠٠", "Ⅻ ⅻ", "𝐀𝐁𝐂 𝟏𝟐", "i̇", "ﺍﻟﺮﻳﺎﺽ",
    ]

    static func samples() throws -> [String] {
        var samples = vectors
        if let path = sharedDataFile("riyadh/places.json") {
            let entries = try PlacesImporter.entries(of: try JSONParser.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
            for entry in entries {
                for key in ["name_ar", "name_en", "description_ar", "category", "category_ar", "neighborhood", "neighborhood_en"] {
                    if case .string(let text)? = entry[key] { samples.append(text) }
                }
                if case .array(let tags)? = entry["tags"] {
                    for case .string(let tag) in tags { samples.append(tag) }
                }
            }
        }
        if let districts = sharedDataFile("riyadh/districts.csv") {
            samples += try String(contentsOfFile: districts, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        return samples.filter { !$0.unicodeScalars.contains("\0") }  // text cannot hold NUL in Postgres
    }

    @Test func foldAndTokensAreIdentical() async throws {
        let store = try await Engine.makePostgresStore()
        _ = try await store.migrate(SystemModule.migrations + PlacesModule.module.migrations)
        let samples = try Self.samples()
        #expect(samples.count > Self.vectors.count || sharedDataFile("riyadh/places.json") == nil)
        var mismatches: [String] = []
        for chunk in stride(from: 0, to: samples.count, by: 2000).map({ Array(samples[$0..<min($0 + 2000, samples.count)]) }) {
            // The samples travel as one JSON document inside a dollar-quoted literal (test data, not user input; the
            // tag is chosen so that no sample contains it).
            let json = JSONValue.array(chunk.map(JSONValue.string)).jsonText
            var tag = "caravan"
            while json.contains("$\(tag)$") { tag += "x" }
            let rows = try await store.unsafeRows("""
                SELECT caravan_fold(s.value), array_to_json(caravan_tokens(s.value))::text
                FROM jsonb_array_elements_text($\(tag)$\(json)$\(tag)$::jsonb) WITH ORDINALITY AS s(value, n) ORDER BY s.n
                """)
            #expect(rows.count == chunk.count)
            for (sample, row) in zip(chunk, rows) {
                let swiftTokens = TextFolding.tokens(in: sample)
                let sqlTokens: [String] = if case .array(let items)? = try? JSONParser.parse(row[1] ?? "[]") {
                    items.compactMap { if case .string(let s) = $0 { s } else { nil } }
                } else { [] }
                if row[0] != TextFolding.fold(sample) || sqlTokens != swiftTokens {
                    mismatches.append("\(sample.debugDescription): fold \(TextFolding.fold(sample).debugDescription) vs \((row[0] ?? "NULL").debugDescription), tokens \(swiftTokens) vs \(sqlTokens)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(samples.count) differ:\n\(mismatches.prefix(20).joined(separator: "\n"))")
    }

    /// The frozen migration gives each full-text column the tsvector weight `PostgresTextSearch` ranks it with.
    @Test func frozenWeightsMatchTheSchema() throws {
        let indexes = try #require(PlacesSchema.places.search)
        let sql = try #require(PlacesMigrations.all.first { $0.id == "places-0003-search-postgres" }?.sql[.postgres])
        for (entry, letter) in zip(indexes.fullText, PostgresTextSearch.weightLetters(indexes)) {
            let column = "p.\"\(entry.column)\""
            let argument = PlacesSchema.places.columns.first { $0.name == entry.column }?.type == .textArray ? "array_to_string(\(column), ' ')" : column
            #expect(sql.contains("caravan_tsvector(\(argument), '\(letter)')"), "\(entry.column) → \(letter)")
        }
        #expect(PostgresTextSearch.rankWeights(indexes) == [0.1, 0.2, 0.3, 1.0])
    }
}
