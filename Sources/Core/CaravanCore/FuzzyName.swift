/// The "Perhaps you meant …" of PostgREST's PGRST200 and PGRST205 hints: the candidate closest to a misspelt name,
/// scored as PostgREST's fuzzy set scores it — `1 - levenshtein(a, b) / max(|a|, |b|)` on lowercased names — and
/// offered only above its minimum score of 0.33.
package enum FuzzyName {
    package static let minimumScore = 0.33

    /// The best-scoring candidate other than `name` itself, or nil when none scores above `minimumScore`.
    package static func closest(to name: String, among candidates: [String]) -> String? {
        let target = Array(name.lowercased())
        var best: (name: String, score: Double)?
        for candidate in candidates where candidate != name {
            let other = Array(candidate.lowercased())
            let longest = max(target.count, other.count)
            guard longest > 0 else { continue }
            let score = 1 - Double(levenshtein(target, other)) / Double(longest)
            if score > minimumScore, score > (best?.score ?? 0) { best = (candidate, score) }
        }
        return best?.name
    }

    /// The edit distance (insertions, deletions, substitutions) between `a` and `b`, two rows at a time.
    package static func levenshtein(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
