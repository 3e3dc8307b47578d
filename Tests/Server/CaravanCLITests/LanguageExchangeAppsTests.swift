import Foundation
import Testing

/// LanguageExchange ships in the `caravan` binary and is served by default beside GroupDecisions (whose card table
/// is `member_profiles`, so `profiles` is LangMatcher's alone); `caravan import languages` loads its reference table
/// and is refused on a deployment that does not serve it.
@Suite struct LanguageExchangeAppsTests {
    @Test func languageExchangeIsServedBesideTheOtherAppsAndImportsItsLanguages() async throws {
        let caravan = try CaravanBinary()
        let byDefault = temporaryDirectory()
        let (status, out, _) = try await caravan.run(["migrate", "--data-dir", byDefault])
        #expect(status == 0)
        #expect(out.contains("group-decisions-0002-member-profiles\n") && out.hasSuffix("language-exchange-0001-create\nlanguage-exchange-0002-match-order\n"), "\(out)")
        // The languages reference table, from the real CSV when it is there (else a two-language sample).
        let real = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/data/languages/iso639_3_languages.csv").path
        let sample = byDefault + "-languages.csv"
        try Data("iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type\nara,ar,,Arabic,Arabic,العربية,العربية,M,L\nxx,,,Bad,,,,I,L\n".utf8)
            .write(to: URL(fileURLWithPath: sample))
        let (importStatus, importOut, _) = try await caravan.run(["import", "languages", sample, "--data-dir", byDefault])
        #expect(importStatus == 0)
        #expect(importOut == "rejected line 3: iso639_3: not a three-letter code\nlanguages: 1 imported, 1 rejected\n")
        if FileManager.default.fileExists(atPath: real) {
            let (_, realOut, _) = try await caravan.run(["import", "languages", real, "--data-dir", byDefault])
            #expect(realOut == "languages: 7910 imported, 0 rejected\n")
        }
        let without = temporaryDirectory()
        #expect(try await caravan.run(["migrate", "--data-dir", without, "--apps", "places"]).0 == 0)
        let (refused, _, refusedError) = try await caravan.run(["import", "languages", sample, "--data-dir", without, "--apps", "places"])
        #expect(refused != 0 && refusedError.contains("--apps"))
    }
}
