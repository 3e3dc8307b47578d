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
        let both = temporaryDirectory()
        let (bothStatus, _, bothError) = try caravan.run(["migrate", "--data-dir", both, "--apps", "group_decisions,language_exchange"])
        #expect(bothStatus != 0)
        #expect(bothError.contains("group_decisions") && bothError.contains("language_exchange") && bothError.contains("profiles"))
    }
}
