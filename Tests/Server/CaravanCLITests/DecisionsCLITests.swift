import CaravanCore
import Foundation
import Testing

@Suite("caravan decisions tally")
struct DecisionsCLITests {
    @Test("stdin JSON in, the tally with rounds and weights out")
    func tallies() async throws {
        // Round 1: a 4, b 2, c 1, d 1 → d goes (tied with c on everything, greater id); round 2: b and c tie at 2,
        // c has fewer first preferences → c goes; round 3: a 4 of 6 wins.
        let input = #"{"candidates":["a","b","c","d"],"ballots":[["a"],["a"],["a"],["a"],["b"],["b"],["c"],["d","c"]]}"#
        let (status, stdout, stderr) = try await CaravanBinary().run(["decisions", "tally"], input: input)
        #expect(status == 0, "\(stderr)")
        let output = try JSONParser.parse(stdout)
        #expect(output["winner"] == .string("a"))
        guard case .array(let rounds)? = output["rounds"] else { Issue.record("no rounds in \(stdout)"); return }
        #expect(rounds.map { $0["eliminated"] } == [.string("d"), .string("c"), .null])
        #expect(rounds[0]["counts"] == .object([("a", .integer(4)), ("b", .integer(2)), ("c", .integer(1)), ("d", .integer(1))]))
        #expect(output["weights"]?["a"] == .double(4.0 / 6))
        #expect(output["weights"]?["b"] == .double(2.0 / 6))
    }

    @Test("a ballot naming an unknown candidate fails with the field and value on stderr")
    func rejectsUnknownCandidate() async throws {
        let (status, stdout, stderr) = try await CaravanBinary().run(["decisions", "tally"], input: #"{"candidates":["a","b"],"ballots":[["a"],["b","zz"]]}"#)
        #expect(status != 0)
        #expect(stdout.isEmpty)
        #expect(stderr.contains("ballots[1][1]") && stderr.contains("zz"), "\(stderr)")
    }

    @Test("input that is not JSON fails cleanly")
    func rejectsMalformedInput() async throws {
        let (status, _, stderr) = try await CaravanBinary().run(["decisions", "tally"], input: "{candidates")
        #expect(status != 0)
        #expect(!stderr.isEmpty)
    }
}
