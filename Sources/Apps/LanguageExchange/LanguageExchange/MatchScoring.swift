import CaravanCore

/// The design's compatibility score, as a pure function: 50 when the caller's native language is one the candidate
/// learns, 50 when the candidate's native language is one the caller learns, +10 when the candidate was active
/// within 7 days, else +5 within 30 days. A candidate with neither language direction is no match (nil).
struct MatchScoring: Sendable {
    static let day: Int64 = 86_400_000_000

    let native: String
    let learning: Set<String>
    /// Microseconds since 1970.
    let now: Int64

    func score(native candidateNative: String, learning candidateLearning: [String], lastActive: Int64?) -> Int64? {
        let theyLearnMine = candidateLearning.contains(native)
        let iLearnTheirs = learning.contains(candidateNative)
        guard theyLearnMine || iLearnTheirs else { return nil }
        var score: Int64 = (theyLearnMine ? 50 : 0) + (iLearnTheirs ? 50 : 0)
        if let lastActive {
            if lastActive > now - 7 * Self.day { score += 10 } else if lastActive > now - 30 * Self.day { score += 5 }
        }
        return score
    }

    /// The design's order: score desc, `last_active` desc nulls last, then id asc (a total order).
    static func precedes(_ a: (score: Int64, lastActive: Int64?, id: String), _ b: (score: Int64, lastActive: Int64?, id: String)) -> Bool {
        if a.score != b.score { return a.score > b.score }
        switch (a.lastActive, b.lastActive) {
        case let (x?, y?) where x != y: return x > y
        case (.some, nil): return true
        case (nil, .some): return false
        default: return a.id < b.id
        }
    }
}
