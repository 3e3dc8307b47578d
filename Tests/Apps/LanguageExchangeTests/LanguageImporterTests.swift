import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

@Suite("LanguageExchange languages importer")
struct LanguageImporterTests {
    @Test("the whole real CSV loads, keyed by canonical code; a re-import updates in place", arguments: Engine.allCases)
    func wholeFile(engine: Engine) async throws {
        let f = try await F(engine: engine, languages: nil)
        let csv = try F.languagesCSV(keeping: nil)
        let summary = try await f.asService { tx in try await LanguageImporter.load(csv: csv, in: tx) }
        #expect(summary.rejections.isEmpty, "\(summary.rejections.prefix(3))")
        #expect(summary.imported == 7_910)
        let again = try await f.asService { tx in try await LanguageImporter.load(csv: csv, in: tx) }
        #expect(again.imported == 7_910)
        let rows = try await f.rows(S.languages)
        #expect(rows.count == 7_910)
        #expect(rows.filter { $0["iso639_1"] != .null }.allSatisfy { $0["code"] == $0["iso639_1"] })
        #expect(rows.first { $0["code"]?.text == "fr" }?["iso639_2b"]?.text == "fre")
        // Canonicalization works off the loaded table: a 639-2/B code is accepted too.
        try await f.makeProfiles([F.profile(1, native: "chi", learning: ["ara", "cmn"])])
        let profile = try #require(try await f.rows(S.profiles).first)
        #expect(profile["native_language"]?.text == "zh" && profile["learning_languages"]?.strings == ["ar", "cmn"])
    }

    @Test func malformedRecordsAreRejectedWithTheirLine() throws {
        let csv = "iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type\r\n"
            + "ara,ar,,Arabic,Arabic,العربية,العربية,M,L\r\n"
            + "XY,,,Bad,,,,I,L\r\n"
            + "eng,en,,English\r\n"
            + "\"zzz\",,,\"Name, with comma\",,,,I,L\r\n"
        let (rows, rejections) = try LanguageImporter.rows(fromCSV: csv)
        #expect(rows.count == 2)
        #expect(rows.last?["name_en"] == .text("Name, with comma"))
        #expect(rejections.map(\.line) == [3, 4])
        #expect(rejections.map(\.field) == ["iso639_3", "record"])
        #expect(throws: CaravanError.self) { _ = try LanguageImporter.rows(fromCSV: "code,name\nar,Arabic\n") }
    }
}
