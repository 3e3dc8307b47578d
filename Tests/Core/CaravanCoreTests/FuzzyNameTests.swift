@testable import CaravanCore
import Testing

/// The fuzzy match of PostgREST's "Perhaps you meant" hints.
@Suite struct FuzzyNameTests {
    /// Levenshtein's definition, recursively (exponential, fine for short words): an independent oracle.
    static func distance(_ a: Substring, _ b: Substring) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        if a.first == b.first { return distance(a.dropFirst(), b.dropFirst()) }
        return 1 + min(distance(a.dropFirst(), b), distance(a, b.dropFirst()), distance(a.dropFirst(), b.dropFirst()))
    }

    @Test func theDistanceIsLevenshteinsOnRandomWords() {
        var random = SplitMix64(state: 38)
        let alphabet = Array("abcé")
        for _ in 0..<400 {
            let a = String((0..<Int(random.next() % 7)).map { _ in alphabet[Int(random.next() % 4)] })
            let b = String((0..<Int(random.next() % 7)).map { _ in alphabet[Int(random.next() % 4)] })
            #expect(FuzzyName.levenshtein(Array(a), Array(b)) == Self.distance(a[...], b[...]), "\(a) / \(b)")
        }
    }

    @Test func theClosestNameAboveTheMinimumScoreIsOffered() {
        #expect(FuzzyName.closest(to: "review", among: ["favorites", "reviews", "categories"]) == "reviews")
        #expect(FuzzyName.closest(to: "Place", among: ["places", "user_place"]) == "places")
        #expect(FuzzyName.closest(to: "zzzzzz", among: ["places", "reviews"]) == nil)
        #expect(FuzzyName.closest(to: "places", among: ["places"]) == nil)
    }
}
