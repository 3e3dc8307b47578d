import Foundation
import Testing

/// LanguageExchange ships in the `caravan` binary but is served only when asked for: its `profiles` table and
/// GroupDecisions' share a name, so the default deployment (places, travel_log, group_decisions) leaves it out.
@Suite struct LanguageExchangeAppsTests {
    @Test func languageExchangeIsServedOnRequestAndRefusedBesideGroupDecisions() throws {
        let caravan = try CaravanBinary()
        let byDefault = temporaryDirectory()
        let (status, out, _) = try caravan.run(["migrate", "--data-dir", byDefault])
        #expect(status == 0)
        #expect(out.hasSuffix("group-decisions-0001-create\n") && !out.contains("language-exchange"))
        let chosen = temporaryDirectory()
        let (chosenStatus, chosenOut, _) = try caravan.run(["migrate", "--data-dir", chosen, "--apps", "places,language_exchange"])
        #expect(chosenStatus == 0)
        #expect(chosenOut.hasSuffix("language-exchange-0001-create\n") && !chosenOut.contains("group-decisions"))
        // The languages reference table, from the real CSV when it is there (else a two-language sample).
        let real = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/data/languages/iso639_3_languages.csv").path
        let sample = chosen + "-languages.csv"
        try Data("iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type\nara,ar,,Arabic,Arabic,العربية,العربية,M,L\nxx,,,Bad,,,,I,L\n".utf8)
            .write(to: URL(fileURLWithPath: sample))
        let (importStatus, importOut, _) = try caravan.run(["import", "languages", sample, "--data-dir", chosen, "--apps", "places,language_exchange"])
        #expect(importStatus == 0)
        #expect(importOut == "rejected line 3: iso639_3: not a three-letter code\nlanguages: 1 imported, 1 rejected\n")
        if FileManager.default.fileExists(atPath: real) {
            let (_, realOut, _) = try caravan.run(["import", "languages", real, "--data-dir", chosen, "--apps", "places,language_exchange"])
            #expect(realOut == "languages: 7910 imported, 0 rejected\n")
        }
        let (refused, _, refusedError) = try caravan.run(["import", "languages", sample, "--data-dir", byDefault])
        #expect(refused != 0 && refusedError.contains("--apps"))
        let both = temporaryDirectory()
        let (bothStatus, _, bothError) = try caravan.run(["migrate", "--data-dir", both, "--apps", "group_decisions,language_exchange"])
        #expect(bothStatus != 0)
        #expect(bothError.contains("group_decisions") && bothError.contains("language_exchange") && bothError.contains("profiles"))
    }
}
