package import CaravanCore

/// Tiered voting: an instant-runoff tally of ranked ballots.
///
/// Each round every ballot counts for its highest-ranked continuing candidate; a ballot with none left (exhausted)
/// drops out of that round. A candidate with more than half of the round's counted ballots wins, as does the last
/// one standing. Otherwise the lowest count is eliminated; among tied lowest, first the one with the fewest first
/// preferences on the original ballots, then the lowest Borda score (position p (0-based) on a ballot ranking m
/// candidates scores m − p; unranked 0), then the greatest id. Weights are the final round's shares.
///
/// ```swift
/// let tally = try InstantRunoff.tally(candidates: ["a", "b", "c"], ballots: [["a"], ["b", "a"], ["c", "a"]])
/// tally.winner  // "a"
/// ```
package enum InstantRunoff {
    /// Tallies `ballots` (each a ranking of candidate ids, best first, possibly partial or empty).
    ///
    /// - Throws: 22023 naming the field (`candidates[i]`, `ballots[i][j]`) and value for an empty or repeated
    ///   candidate list, an id that is not a candidate, or a candidate ranked twice on one ballot.
    package static func tally(candidates: [String], ballots: [[String]]) throws(CaravanError) -> Tally {
        let ids = try validatedCandidates(candidates)
        let indexOf = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        let ranked = try indexedBallots(ballots, indexOf: indexOf)
        let tieBreak = TieBreak(ids: ids, ballots: ranked)
        var continuing = [Bool](repeating: true, count: ids.count)
        var remaining = ids.count
        var rounds: [TallyRound] = []
        while true {
            var counts = [Int](repeating: 0, count: ids.count)
            var counted = 0
            for ballot in ranked {
                guard let top = ballot.first(where: { continuing[$0] }) else { continue }
                counts[top] += 1
                counted += 1
            }
            let live = (0..<ids.count).filter { continuing[$0] }
            let named = Dictionary(uniqueKeysWithValues: live.map { (ids[$0], counts[$0]) })
            let majority = live.first { counts[$0] * 2 > counted }
            if let winner = majority ?? (remaining == 1 ? live.first : nil) {
                rounds.append(TallyRound(counts: named, eliminated: nil))
                let weights = Dictionary(uniqueKeysWithValues: live.map {
                    (ids[$0], counted == 0 ? 0 : Double(counts[$0]) / Double(counted))
                })
                return Tally(winner: ids[winner], rounds: rounds, weights: weights)
            }
            let lowest = live.map { counts[$0] }.min() ?? 0
            let loser = tieBreak.firstEliminated(among: live.filter { counts[$0] == lowest })
            rounds.append(TallyRound(counts: named, eliminated: ids[loser]))
            continuing[loser] = false
            remaining -= 1
        }
    }

    /// The ballots as candidate indices, checked: every id a candidate, none twice on a ballot.
    static func indexedBallots(_ ballots: [[String]], indexOf: [String: Int]) throws(CaravanError) -> [[Int]] {
        var result: [[Int]] = []
        result.reserveCapacity(ballots.count)
        for (b, ballot) in ballots.enumerated() {
            var seen = Set<Int>()
            var ranking: [Int] = []
            ranking.reserveCapacity(ballot.count)
            for (p, id) in ballot.enumerated() {
                guard let index = indexOf[id] else {
                    throw CaravanError(.invalidParameterValue, "ballots[\(b)][\(p)] \(id) is not a candidate",
                                       details: "field ballots[\(b)][\(p)], value \(id)")
                }
                guard seen.insert(index).inserted else {
                    throw CaravanError(.invalidParameterValue, "ballots[\(b)][\(p)] ranks \(id) twice",
                                       details: "field ballots[\(b)][\(p)], value \(id)")
                }
                ranking.append(index)
            }
            result.append(ranking)
        }
        return result
    }

    /// The tie-break among candidates tied for the lowest count, from the original ballots.
    struct TieBreak {
        let ids: [String]
        let firstPreferences: [Int]
        let borda: [Int]

        init(ids: [String], ballots: [[Int]]) {
            self.ids = ids
            var first = [Int](repeating: 0, count: ids.count)
            var borda = [Int](repeating: 0, count: ids.count)
            for ballot in ballots {
                if let top = ballot.first { first[top] += 1 }
                for (position, candidate) in ballot.enumerated() { borda[candidate] += ballot.count - position }
            }
            self.firstPreferences = first
            self.borda = borda
        }

        /// Fewest first preferences, then lowest Borda score, then greatest id.
        func firstEliminated(among tied: [Int]) -> Int {
            tied.min { a, b in
                if firstPreferences[a] != firstPreferences[b] { return firstPreferences[a] < firstPreferences[b] }
                if borda[a] != borda[b] { return borda[a] < borda[b] }
                return ids[a] > ids[b]
            } ?? tied[0]
        }
    }
}
