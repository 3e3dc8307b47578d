import CaravanCore
@testable import GroupDecisions
import Testing

/// Pearson's chi-square statistic of `observed` against a uniform expectation.
private func chiSquare(_ observed: [Int]) -> Double {
    let expected = Double(observed.reduce(0, +)) / Double(observed.count)
    return observed.reduce(0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
}

/// χ² critical value for 5 degrees of freedom at p = 0.001.
private let criticalFiveDegrees = 20.515

@Suite("Random and manual picks")
struct RandomPickTests {
    @Test("the k-th candidate by id, k drawn from the injected source; weights 1/N")
    func kthByID() throws {
        let candidates = ["d", "b", "a", "c"]
        for k in 0..<4 {
            let tally = try RandomPick.decide(candidates: candidates, random: RandomSource { _ in k })
            #expect(tally.winner == ["a", "b", "c", "d"][k])
            #expect(tally.weights == ["a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25])
        }
    }

    @Test("a seeded source replays SplitMix64's next(upperBound:) draw for draw")
    func seededDraws() throws {
        let source = RandomSource.seeded(42)
        var reference = SplitMix64(state: 42)
        let sorted = ["a", "b", "c", "d", "e"]
        for _ in 0..<500 {
            let expected = sorted[Int(reference.next(upperBound: UInt64(5)))]
            #expect(try RandomPick.decide(candidates: ["e", "d", "c", "b", "a"], random: source).winner == expected)
        }
    }

    @Test("60,000 draws over 6 candidates are uniform (χ² below the p = 0.001 bound)")
    func chiSquareUniform() throws {
        let candidates = ["f", "e", "d", "c", "b", "a"]
        let source = RandomSource.seeded(2026)
        var observed = [String: Int]()
        for _ in 0..<60_000 { observed[try RandomPick.decide(candidates: candidates, random: source).winner, default: 0] += 1 }
        let counts = candidates.sorted().map { observed[$0] ?? 0 }
        #expect(counts.reduce(0, +) == 60_000)
        #expect(chiSquare(counts) < criticalFiveDegrees, "counts \(counts)")
    }

    @Test("the same χ² check rejects a source biased 2% towards the first candidate")
    func chiSquareDetectsBias() throws {
        let fair = RandomSource.seeded(7)
        let biased = RandomSource { n in fair.next(50) == 0 ? 0 : fair.next(n) }
        var counts = [Int](repeating: 0, count: 6)
        let sorted = ["a", "b", "c", "d", "e", "f"]
        for _ in 0..<60_000 {
            let winner = try RandomPick.decide(candidates: sorted, random: biased).winner
            counts[sorted.firstIndex(of: winner) ?? 0] += 1
        }
        #expect(chiSquare(counts) > criticalFiveDegrees, "counts \(counts)")
    }

    @Test("a manual pick must be a candidate; the error names the field and value")
    func manual() throws {
        #expect(try ManualPick.decide(candidates: ["a", "b"], pick: "b") == "b")
        #expect {
            _ = try ManualPick.decide(candidates: ["a", "b"], pick: "z")
        } throws: { error in
            (error as? CaravanError)?.details == "field restaurant_id, value z"
        }
    }
}
