import CaravanCore
import Foundation
import Testing

extension CaravanBinary {
    /// Runs to completion with `input` on stdin; returns (exit status, stdout, stderr).
    func run(_ arguments: [String], input: String) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let stdin = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = err
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}

@Suite("caravan decisions tally")
struct DecisionsCLITests {
    @Test("stdin JSON in, the tally with rounds and weights out")
    func tallies() throws {
        // Round 1: a 4, b 2, c 1, d 1 → d goes (tied with c on everything, greater id); round 2: b and c tie at 2,
        // c has fewer first preferences → c goes; round 3: a 4 of 6 wins.
        let input = #"{"candidates":["a","b","c","d"],"ballots":[["a"],["a"],["a"],["a"],["b"],["b"],["c"],["d","c"]]}"#
        let (status, stdout, stderr) = try CaravanBinary().run(["decisions", "tally"], input: input)
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
    func rejectsUnknownCandidate() throws {
        let (status, stdout, stderr) = try CaravanBinary().run(["decisions", "tally"], input: #"{"candidates":["a","b"],"ballots":[["a"],["b","zz"]]}"#)
        #expect(status != 0)
        #expect(stdout.isEmpty)
        #expect(stderr.contains("ballots[1][1]") && stderr.contains("zz"), "\(stderr)")
    }

    @Test("input that is not JSON fails cleanly")
    func rejectsMalformedInput() throws {
        let (status, _, stderr) = try CaravanBinary().run(["decisions", "tally"], input: "{candidates")
        #expect(status != 0)
        #expect(!stderr.isEmpty)
    }
}
