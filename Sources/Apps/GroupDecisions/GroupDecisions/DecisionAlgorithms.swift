package import CaravanCore
import Synchronization

/// Where a random decision's draw comes from, injected like the clock: `.system` in the server, a seeded
/// `SplitMix64` in tests, so a draw can be replayed.
package struct RandomSource: Sendable {
    private let draw: @Sendable (Int) -> Int

    /// A source whose `draw(n)` returns an integer in `0..<n` (n ≥ 1).
    package init(_ draw: @escaping @Sendable (Int) -> Int) {
        self.draw = draw
    }

    /// An integer in `0..<upperBound`; `upperBound` must be at least 1.
    package func next(_ upperBound: Int) -> Int {
        min(max(draw(max(upperBound, 1)), 0), max(upperBound, 1) - 1)
    }

    /// The system's generator.
    package static let system = RandomSource { Int.random(in: 0..<$0) }

    /// A deterministic source: `SplitMix64(state: seed)` drawn through the standard library's `next(upperBound:)`.
    package static func seeded(_ seed: UInt64) -> RandomSource {
        let generator = Mutex(SplitMix64(state: seed))
        return RandomSource { upperBound in
            generator.withLock { Int($0.next(upperBound: UInt64(upperBound))) }
        }
    }
}

/// One round of an instant-runoff tally: the count of every continuing candidate, and who was eliminated at its end
/// (nil in the last round).
package struct TallyRound: Sendable, Equatable {
    package let counts: [String: Int]
    package let eliminated: String?

    package init(counts: [String: Int], eliminated: String?) {
        self.counts = counts
        self.eliminated = eliminated
    }
}

/// The outcome of a tally: the winner, the rounds that led to it and the winner's and runners-up's weights.
package struct Tally: Sendable, Equatable {
    package let winner: String
    package let rounds: [TallyRound]
    /// Final-round shares of the counted ballots (1/N each for a random pick). When no ballot counts in the final
    /// round (no ballots at all), every share is 0.
    package let weights: [String: Double]

    package init(winner: String, rounds: [TallyRound], weights: [String: Double]) {
        self.winner = winner
        self.rounds = rounds
        self.weights = weights
    }
}

/// The candidates of a decision, checked: at least one, none blank, no duplicate. Errors are 22023 naming the
/// field (`candidates[i]`) and the value.
func validatedCandidates(_ candidates: [String], field: String = "candidates") throws(CaravanError) -> [String] {
    guard !candidates.isEmpty else {
        throw CaravanError(.invalidParameterValue, "\(field) must not be empty", details: "field \(field)")
    }
    var seen = Set<String>()
    for (index, id) in candidates.enumerated() {
        guard !id.isEmpty else {
            throw CaravanError(.invalidParameterValue, "\(field)[\(index)] is blank", details: "field \(field)[\(index)]")
        }
        guard seen.insert(id).inserted else {
            throw CaravanError(.invalidParameterValue, "\(field)[\(index)] repeats the candidate \(id)", details: "field \(field)[\(index)], value \(id)")
        }
    }
    return candidates
}

/// A random pick: the candidates sorted by id, the k-th where k = `random.next(N)`; weights 1/N each.
package enum RandomPick {
    package static func decide(candidates: [String], random: RandomSource) throws(CaravanError) -> Tally {
        let sorted = try validatedCandidates(candidates).sorted()
        let winner = sorted[random.next(sorted.count)]
        let share = 1.0 / Double(sorted.count)
        return Tally(winner: winner, rounds: [], weights: Dictionary(uniqueKeysWithValues: sorted.map { ($0, share) }))
    }
}

/// A manual pick: the chosen candidate; no weights.
package enum ManualPick {
    package static func decide(candidates: [String], pick: String, field: String = "restaurant_id") throws(CaravanError) -> String {
        let candidates = try validatedCandidates(candidates)
        guard candidates.contains(pick) else {
            throw CaravanError(.invalidParameterValue, "\(field) \(pick) is not a candidate of this decision", details: "field \(field), value \(pick)")
        }
        return pick
    }
}
