import Foundation

/// The search indexes a table declares. Each adapter builds them its own way (SQLite: FTS5 with the folding
/// tokenizer and English stemming, an FTS5 trigram table, an R*Tree; Postgres: tsvector, pg_trgm, PostGIS) in the
/// module's frozen migrations, under names the adapter derives from the table's.
public struct SearchIndexes: Sendable, Hashable {
    /// Columns indexed for full text (folded as `TextFolding` does, English words stemmed), with their weight in the
    /// relevance (bm25). Text and text-array columns.
    public let fullText: [(column: String, weight: Double)]
    /// Columns indexed by trigrams of their folded text, for similarity (the typo fallback).
    public let fuzzy: [String]
    /// The latitude and longitude columns (degrees, WGS 84) indexed for nearest-row search.
    public let geo: GeoColumns?

    public struct GeoColumns: Sendable, Hashable {
        public let latitude: String
        public let longitude: String
        public init(latitude: String, longitude: String) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    public init(fullText: [(column: String, weight: Double)], fuzzy: [String] = [], geo: GeoColumns? = nil) {
        self.fullText = fullText
        self.fuzzy = fuzzy
        self.geo = geo
    }

    public var fullTextColumns: [String] { fullText.map(\.column) }

    /// The columns whose change moves a row in its search objects: the key, the full-text, trigram and geo columns,
    /// each once, in that order.
    public static func watchedColumns(of table: TableSchema, _ indexes: SearchIndexes) -> [String] {
        var watched = Array(table.primaryKey.prefix(1)) + indexes.fullTextColumns
        for column in indexes.fuzzy + [indexes.geo?.latitude, indexes.geo?.longitude].compactMap({ $0 }) where !watched.contains(column) {
            watched.append(column)
        }
        return watched
    }

    public static func == (a: SearchIndexes, b: SearchIndexes) -> Bool {
        a.fullText.map(\.column) == b.fullText.map(\.column) && a.fullText.map(\.weight) == b.fullText.map(\.weight)
            && a.fuzzy == b.fuzzy && a.geo == b.geo
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fullText.map(\.column))
        hasher.combine(fuzzy)
        hasher.combine(geo)
    }
}

/// A score multiplier taken from a numeric column: `score × (1 + value × weight)` (NULL counts as 0). The places
/// design blends relevance with the rating this way (`× (1 + google_rating / 10)`).
public struct ScoreBoost: Sendable, Hashable {
    public let column: String
    public let weight: Double
    public init(column: String, weight: Double) {
        self.column = column
        self.weight = weight
    }

    public func factor(_ value: Value) -> Double {
        switch value {
        case .integer(let i): 1 + Double(i) * weight
        case .double(let d): 1 + d * weight
        default: 1
        }
    }
}

/// A read ranked by the table's search indexes: the best `limit` rows that match `filter` (which must already
/// include the caller's read policy), best first.
public struct RankedSearch: Sendable {
    public enum Ranking: Sendable {
        /// Full-text relevance (bm25 with the index's column weights, higher is better), times the boost.
        /// Rows must match the query.
        case fullText(TextQuery, boost: ScoreBoost?)
        /// Trigram similarity of the folded query with the fuzzy columns' folded text (see `TrigramSimilarity`),
        /// times the boost; rows below `minimum` similarity are left out.
        case similarity(String, minimum: Double, boost: ScoreBoost?)
        /// Great-circle distance in meters (haversine, ascending) from a point; rows farther than `radiusMeters` are
        /// left out, and so are rows without coordinates.
        case distance(latitude: Double, longitude: Double, radiusMeters: Double)
    }

    public let table: TableSchema
    public let ranking: Ranking
    public let filter: BoundPredicate
    public let outputs: [Column]
    public let limit: Int

    public init(table: TableSchema, ranking: Ranking, filter: BoundPredicate, outputs: [Column], limit: Int) {
        self.table = table
        self.ranking = ranking
        self.filter = filter
        self.outputs = outputs
        self.limit = limit
    }
}

/// One row of a ranked search: the output values and its score (relevance, similarity, or distance in meters).
public struct RankedRow: Sendable, Hashable {
    public let values: [Value]
    public let score: Double
    public init(values: [Value], score: Double) {
        self.values = values
        self.score = score
    }
}

/// Great-circle distances on the mean Earth sphere.
package enum GeoDistance {
    /// Mean Earth radius (IUGG), meters.
    package static let earthRadius = 6_371_008.8

    /// The haversine distance in meters between two points given in degrees.
    package static func haversineMeters(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let phi1 = latitude1 * .pi / 180, phi2 = latitude2 * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (longitude2 - longitude1) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// A latitude/longitude box that contains every point within `radius` meters of the center.
    package static func boundingBox(latitude: Double, longitude: Double, radius: Double)
        -> (minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        let dLat = radius / earthRadius * 180 / .pi
        let minLat = max(-90, latitude - dLat), maxLat = min(90, latitude + dLat)
        let widest = max(abs(minLat), abs(maxLat))
        guard widest < 89.9 else { return (minLat, maxLat, -180, 180) }
        let dLng = min(180, dLat / cos(widest * .pi / 180))
        return (minLat, maxLat, longitude - dLng, longitude + dLng)
    }
}

/// Trigram similarity in the manner of Postgres' pg_trgm, on folded text: each token padded with two spaces in front
/// and one behind, its 3-character windows form a set, and similarity is |A ∩ B| / |A ∪ B|.
package enum TrigramSimilarity {
    /// The trigram set of `text`'s folded tokens.
    package static func trigrams(_ text: String) -> Set<String> {
        trigrams(ofTokens: TextFolding.tokens(in: text)[...])
    }

    /// pg_trgm `similarity(a, b)`.
    package static func similarity(_ a: String, _ b: String) -> Double {
        jaccard(trigrams(a), trigrams(b))
    }

    /// The best similarity between `query` and any run of consecutive tokens of `text` as long as the query (in
    /// tokens), or the whole text: a misspelt name still scores high against a long title that contains it.
    package static func bestWindowSimilarity(query: String, text: String) -> Double {
        let matcher = Matcher(query: query)
        return matcher.bestWindowSimilarity(folded: TextFolding.fold(text))
    }

    /// A query's trigrams, computed once, to score many candidates.
    package struct Matcher: Sendable {
        let trigrams: Set<String>
        let tokenCount: Int

        package init(query: String) {
            trigrams = TrigramSimilarity.trigrams(query)
            tokenCount = TextFolding.tokens(in: query).count
        }

        /// `bestWindowSimilarity` against text that is already folded (as the trigram index stores it): its tokens
        /// are split without folding again.
        package func bestWindowSimilarity(folded text: String) -> Double {
            guard !trigrams.isEmpty else { return 0 }
            var tokens: [String] = []
            var current = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if TextFolding.isTokenScalar(scalar) {
                    current.append(scalar)
                } else if !current.isEmpty {
                    tokens.append(String(current))
                    current = String.UnicodeScalarView()
                }
            }
            if !current.isEmpty { tokens.append(String(current)) }
            var best = jaccard(trigrams, TrigramSimilarity.trigrams(ofTokens: tokens[...]))
            if tokens.count > tokenCount {
                for start in 0...(tokens.count - tokenCount) {
                    best = max(best, jaccard(trigrams, TrigramSimilarity.trigrams(ofTokens: tokens[start..<start + tokenCount])))
                }
            }
            return best
        }
    }

    /// The padded trigram set of already-folded tokens.
    static func trigrams(ofTokens tokens: ArraySlice<String>) -> Set<String> {
        var result: Set<String> = []
        for token in tokens {
            let characters = Array("  " + token + " ")
            for start in 0...(characters.count - 3) { result.insert(String(characters[start..<start + 3])) }
        }
        return result
    }

    /// The inner trigrams of each token (no padding): the substrings an FTS5 trigram index can look up.
    package static func innerTrigrams(_ text: String) -> [String] {
        var seen: Set<String> = []
        var result: [String] = []
        for token in TextFolding.tokens(in: text) {
            let characters = Array(token)
            guard characters.count >= 3 else { continue }
            for start in 0...(characters.count - 3) {
                let trigram = String(characters[start..<start + 3])
                if seen.insert(trigram).inserted { result.append(trigram) }
            }
        }
        return result
    }

    static func jaccard(_ a: Set<String>, _ b: Set<String>) -> Double {
        guard !a.isEmpty || !b.isEmpty else { return 0 }
        let shared = a.intersection(b).count
        return Double(shared) / Double(a.count + b.count - shared)
    }
}
