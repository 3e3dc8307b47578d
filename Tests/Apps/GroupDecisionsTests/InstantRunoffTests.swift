import CaravanCore
@testable import GroupDecisions
import Testing

/// An independent instant-runoff tally written for the test: strings and sorting, no indices, no shared helpers.
/// It follows the written rule literally (fewest first preferences, then lowest Borda score, then greatest id); the module's tally must agree with it on every election.
private func referenceTally(candidates: [String], ballots: [[String]]) -> Tally {
    var firsts: [String: Int] = [:]
    var borda: [String: Int] = [:]
    for ballot in ballots {
        if !ballot.isEmpty { firsts[ballot[0], default: 0] += 1 }
        for position in ballot.indices { borda[ballot[position], default: 0] += ballot.count - position }
    }
    var standing = Set(candidates)
    var rounds: [TallyRound] = []
    while true {
        var counts: [String: Int] = [:]
        for candidate in standing { counts[candidate] = 0 }
        for ballot in ballots {
            for choice in ballot where standing.contains(choice) {
                counts[choice, default: 0] += 1
                break
            }
        }
        let total = counts.values.reduce(0, +)
        let leaders = counts.filter { $0.value * 2 > total }.map(\.key)
        if leaders.count == 1 || standing.count == 1 {
            let winner = leaders.first ?? standing.first ?? ""
            rounds.append(TallyRound(counts: counts, eliminated: nil))
            var weights: [String: Double] = [:]
            for (candidate, count) in counts { weights[candidate] = total > 0 ? Double(count) / Double(total) : 0 }
            return Tally(winner: winner, rounds: rounds, weights: weights)
        }
        let fewest = counts.values.min() ?? 0
        let order = counts.filter { $0.value == fewest }.map(\.key).sorted { a, b in
            (firsts[a] ?? 0, borda[a] ?? 0, b) < (firsts[b] ?? 0, borda[b] ?? 0, a)
        }
        let out = order[0]
        rounds.append(TallyRound(counts: counts, eliminated: out))
        standing.remove(out)
    }
}

/// A seeded election: 1–8 candidates with uuid-like ids, 0–60 ballots of random partial rankings. Small ranges on
/// purpose, so ties (and every tie-break rule) occur often.
private func randomElection(_ generator: inout SplitMix64) -> (candidates: [String], ballots: [[String]]) {
    let count = Int(generator.next(upperBound: UInt64(8))) + 1
    let candidates = (0..<count).map { _ in String(generator.next() % 100_000, radix: 16) + "-c" }
    let unique = Array(Set(candidates)).sorted().shuffled(using: &generator)
    let ballotCount = Int(generator.next(upperBound: UInt64(61)))
    let ballots = (0..<ballotCount).map { _ -> [String] in
        let length = Int(generator.next(upperBound: UInt64(unique.count + 1)))
        return Array(unique.shuffled(using: &generator).prefix(length))
    }
    return (unique, ballots)
}

@Suite("Instant-runoff tally")
struct InstantRunoffTests {
    @Test("1,000 seeded elections agree with the independent tally, winners, rounds and weights")
    func agreesWithReference() throws {
        var generator = SplitMix64(state: 19)
        var eliminationsByTieBreak = 0
        for _ in 0..<1_000 {
            let election = randomElection(&generator)
            let expected = referenceTally(candidates: election.candidates, ballots: election.ballots)
            let actual = try InstantRunoff.tally(candidates: election.candidates, ballots: election.ballots)
            #expect(actual == expected, "candidates \(election.candidates) ballots \(election.ballots)")
            eliminationsByTieBreak += actual.rounds.filter { round in
                guard let out = round.eliminated, let lowest = round.counts[out] else { return false }
                return round.counts.values.filter { $0 == lowest }.count > 1
            }.count
        }
        // The elections exercise the tie-break, not only clear eliminations.
        #expect(eliminationsByTieBreak > 200)
    }

    @Test("a majority in the first round wins; final-round shares are the weights")
    func firstRoundMajority() throws {
        let tally = try InstantRunoff.tally(candidates: ["a", "b", "c"], ballots: [["a"], ["a", "b"], ["b"]])
        #expect(tally.winner == "a")
        #expect(tally.rounds == [TallyRound(counts: ["a": 2, "b": 1, "c": 0], eliminated: nil)])
        #expect(tally.weights == ["a": 2.0 / 3, "b": 1.0 / 3, "c": 0])
    }

    @Test("tied lowest with equal first preferences: the lower Borda score goes; exhausted ballots drop out")
    func bordaTieBreakAndExhaustion() throws {
        // Round 1: a 1, b 1, c 2 of 4. a and b have one first preference each; Borda a = 1 + 1 = 2,
        // b = 2 + 1 + 1 = 4, so a goes. Round 2: [a] is exhausted; b 1, c 2 of 3 → c wins.
        let tally = try InstantRunoff.tally(candidates: ["a", "b", "c"], ballots: [["a"], ["b", "a"], ["c", "b"], ["c", "b"]])
        #expect(tally.rounds == [
            TallyRound(counts: ["a": 1, "b": 1, "c": 2], eliminated: "a"),
            TallyRound(counts: ["b": 1, "c": 2], eliminated: nil),
        ])
        #expect(tally.winner == "c")
        #expect(tally.weights == ["b": 1.0 / 3, "c": 2.0 / 3])
    }

    @Test("tied lowest in a later round: the one with fewer original first preferences goes first")
    func firstPreferenceTieBreak() throws {
        // Round 1: a 4, b 2, c 1, d 1 of 8: c and d tie on everything (1 first preference, Borda 2) → the greater
        // id, d, goes. Round 2: a 4, b 2, c 2 of 8: b and c tie, but c had 1 first preference and b 2 → c goes.
        // Round 3: a 4, b 2 of 6 → a wins.
        let ballots = [["a"], ["a"], ["a"], ["a"], ["b"], ["b"], ["c"], ["d", "c"]]
        let tally = try InstantRunoff.tally(candidates: ["a", "b", "c", "d"], ballots: ballots)
        #expect(tally.rounds.map(\.eliminated) == ["d", "c", nil])
        #expect(tally.rounds[1].counts == ["a": 4, "b": 2, "c": 2])
        #expect(tally.winner == "a")
        #expect(tally.weights == ["a": 4.0 / 6, "b": 2.0 / 6])
    }

    @Test("everything tied: the greatest id goes; exactly half is not a majority")
    func greatestIDTieBreak() throws {
        let tally = try InstantRunoff.tally(candidates: ["x", "y"], ballots: [["y"], ["x"]])
        #expect(tally.rounds == [
            TallyRound(counts: ["x": 1, "y": 1], eliminated: "y"),
            TallyRound(counts: ["x": 1], eliminated: nil),
        ])
        #expect(tally.winner == "x")
        #expect(tally.weights == ["x": 1])
    }

    @Test("a zero-count candidate goes alone before any tie-break; the last one standing wins")
    func zeroCountAndLastStanding() throws {
        let tally = try InstantRunoff.tally(candidates: ["a", "b", "c"], ballots: [["a"], ["a", "b"], ["b", "a"], ["b"]])
        #expect(tally.rounds.map(\.eliminated) == ["c", "b", nil])  // a and b tie on first preferences (2) and Borda (4)
        #expect(tally.winner == "a")
        let empty = try InstantRunoff.tally(candidates: ["b", "a"], ballots: [])
        #expect(empty.winner == "a")
        #expect(empty.rounds.map(\.eliminated) == ["b", nil])
        #expect(empty.weights == ["a": 0])
    }

    @Test("bad input is 22023 naming the field and value", arguments: [
        ([String](), [[String]](), "candidates"),
        (["a", "a"], [], "candidates[1]"),
        (["a", "b"], [["a", "z"]], "ballots[0][1], value z"),
        (["a", "b"], [["b"], ["a", "b", "a"]], "ballots[1][2], value a"),
    ])
    func rejectsBadInput(candidates: [String], ballots: [[String]], field: String) {
        #expect {
            _ = try InstantRunoff.tally(candidates: candidates, ballots: ballots)
        } throws: { error in
            guard let error = error as? CaravanError else { return false }
            return error.code == .invalidParameterValue && (error.details ?? error.message).contains(field)
        }
    }

    @Test("the tally document round-trips the command's JSON")
    func tallyDocument() throws {
        let output = try TallyDocument.run(input: Array(#"{"candidates":["y","x"],"ballots":[["y"],["x"]]}"#.utf8))
        #expect(output == #"{"winner":"x","rounds":[{"counts":{"x":1,"y":1},"eliminated":"y"},{"counts":{"x":1},"eliminated":null}],"weights":{"x":1}}"#)
        #expect(throws: CaravanError.self) { try TallyDocument.run(input: Array(#"{"candidates":["a"],"ballots":[[1]]}"#.utf8)) }
    }
}
