import CaravanCore
import CaravanSQL
import Foundation

/// The PostgreSQL objects behind a table's `SearchIndexes`, by naming convention. A module's frozen migration creates
/// them (places: `places-0003-search-postgres`), with the SQL functions `caravan_fold`, `caravan_tokens`,
/// `caravan_stem`, `caravan_tsvector` and `caravan_query_term`:
/// - `<table>_search("caravan_key" text PRIMARY KEY, "caravan_document" tsvector, "caravan_fuzzy" text,
///   "caravan_latitude" float8, "caravan_longitude" float8)`, one row per table row, kept by a trigger:
///   the full-text columns' `caravan_tsvector`s joined with `||` (weights from `weightLetters`), the fuzzy columns
///   folded and joined by a space, and the coordinates;
/// - a GIN index on the document, a GIN `gin_trgm_ops` index on the fuzzy text, a btree on the coordinates.
package struct PostgresSearchNames: Sendable {
    package static let key = "caravan_key"
    package static let document = "caravan_document"
    package static let fuzzy = "caravan_fuzzy"
    package static let latitude = "caravan_latitude"
    package static let longitude = "caravan_longitude"
    package let table: String

    package init(table: String) {
        self.table = table + "_search"
    }
}

/// Ranked reads (`StoreTransaction.rankedFetch`) on PostgreSQL, answering as `SQLiteTextSearch` does.
enum PostgresTextSearch {
    /// The tsvector weight of each full-text column: the distinct weights, highest first, are A, B, C and D (any
    /// further ones share D). `places-0003-search-postgres` froze the letters this gives for `places`.
    static func weightLetters(_ indexes: SearchIndexes) -> [Character] {
        let distinct = Array(Set(indexes.fullText.map(\.weight))).sorted(by: >)
        return indexes.fullText.map { entry in
            let rank = distinct.firstIndex(of: entry.weight) ?? 3
            return Array("ABCD")[min(rank, 3)]
        }
    }

    /// `ts_rank`'s weights array `{D, C, B, A}`, relative to the highest column weight (ts_rank wants 0…1).
    static func rankWeights(_ indexes: SearchIndexes) -> [Double] {
        let letters = weightLetters(indexes)
        let top = indexes.fullText.map(\.weight).max() ?? 1
        return Array("DCBA").map { letter in
            let weights = zip(letters, indexes.fullText).filter { $0.0 == letter }.map(\.1.weight)
            return top > 0 ? (weights.max() ?? 0) / top : 0
        }
    }

    static func run(_ search: RankedSearch, session: PostgresSession) async throws -> [RankedRow] {
        let table = search.table
        guard let indexes = table.search, table.primaryKey.count == 1 else {
            throw CaravanError(.unsupportedOperator, "table \(table.name) has no search index")
        }
        guard search.limit > 0 else { return [] }
        switch search.ranking {
        case .fullText(let query, let boost):
            guard let query = PostgresTextQuery.simplified(query) else { return [] }
            return try await fullText(search, query: query, boost: boost, weights: rankWeights(indexes), session: session)
        case .similarity(let text, let minimum, let boost):
            guard !indexes.fuzzy.isEmpty else { throw CaravanError(.unsupportedOperator, "table \(table.name) has no trigram index") }
            return try await similar(search, text: text, minimum: minimum, boost: boost, session: session)
        case .distance(let latitude, let longitude, let radius):
            guard indexes.geo != nil else { throw CaravanError(.unsupportedOperator, "table \(table.name) has no geo index") }
            return try await nearest(search, latitude: latitude, longitude: longitude, radius: radius, session: session)
        }
    }

    /// `FROM "<table>_search" AS s JOIN "<table>" ON <key> = s.caravan_key`: the table's columns stay unqualified
    /// (the search table's are all `caravan_…`), so the filter compiles as for a plain read.
    private static func from(_ search: RankedSearch, into sql: inout PostgresSQL) {
        let table = PostgresSQL.quote(search.table.name)
        let names = PostgresSearchNames(table: search.table.name)
        sql.append(" FROM \(PostgresSQL.quote(names.table)) AS s JOIN \(table) ON \(table).\(PostgresSQL.quote(search.table.primaryKey[0])) = s.\(PostgresSQL.quote(PostgresSearchNames.key))")
    }

    private static func outputList(_ search: RankedSearch) -> String {
        search.outputs.map(PostgresSyntax.output).joined(separator: ", ")
    }

    private static func boostSQL(_ boost: ScoreBoost?, into sql: inout PostgresSQL) {
        guard let boost else { sql.append("1.0::float8"); return }
        sql.append("(1.0::float8 + COALESCE(\(PostgresSQL.quote(boost.column))::float8, 0) * ")
        sql.value(.double(boost.weight), as: .double)
        sql.append(")")
    }

    private static func scored(_ rows: [[Value]], outputs: Int) -> [RankedRow] {
        rows.map { row in
            let score: Double = if case .double(let d) = row[outputs] { d } else { 0 }
            return RankedRow(values: Array(row.prefix(outputs)), score: score)
        }
    }

    /// The document matches the query; `ts_rank` with the column weights (normalized by the document's length, as
    /// bm25 is) times the boost, best first, ties by key.
    private static func fullText(_ search: RankedSearch, query: TextQuery, boost: ScoreBoost?, weights: [Double],
                                 session: PostgresSession) async throws -> [RankedRow] {
        let document = "s." + PostgresSQL.quote(PostgresSearchNames.document)
        let weightArray = "'{" + weights.map { String($0) }.joined(separator: ",") + "}'::float4[]"
        var sql = PostgresSQL()
        sql.append("SELECT \(outputList(search)), ts_rank(\(weightArray), \(document), ")
        let tsquery = sql.tsquery(query, stemmed: true)
        sql.append(", 1)::float8 * ")
        boostSQL(boost, into: &sql)
        sql.append(" AS caravan_score")
        from(search, into: &sql)
        sql.append(" WHERE \(document) @@ \(tsquery) AND ")
        sql.predicate(search.filter)
        sql.append(" ORDER BY caravan_score DESC, \(PostgresSQL.quote(search.table.name)).\(PostgresSQL.quote(search.table.primaryKey[0])) LIMIT ")
        sql.value(.integer(Int64(search.limit)), as: .integer)
        let rows = try await session.rows(sql, types: search.outputs.map(\.type) + [.double], table: search.table)
        return scored(rows, outputs: search.outputs.count)
    }

    /// Candidates from the trigram index: rows whose folded names hold an extent at least `minimum` word-similar to
    /// the query's tokens (pg_trgm `%>`; a superset of the rows whose best window reaches `minimum`, since word
    /// similarity divides by the query's trigrams only), most similar first; then the exact
    /// `TrigramSimilarity.bestWindowSimilarity` here, as on SQLite, thresholded and ordered (times the boost).
    private static func similar(_ search: RankedSearch, text: String, minimum: Double, boost: ScoreBoost?,
                                session: PostgresSession) async throws -> [RankedRow] {
        let tokens = TextFolding.tokens(in: text)
        guard !tokens.isEmpty else { return [] }
        let folded = tokens.joined(separator: " ")
        var threshold = PostgresSQL()
        threshold.append("SELECT set_config('pg_trgm.word_similarity_threshold', ")
        threshold.value(.text(String(max(0, min(1, minimum)))), as: .text)
        threshold.append(", true)")
        try await session.execute(threshold, table: search.table)

        let fuzzy = "s." + PostgresSQL.quote(PostgresSearchNames.fuzzy)
        var sql = PostgresSQL()
        sql.append("SELECT \(outputList(search)), \(fuzzy), ")
        boostSQL(boost, into: &sql)
        from(search, into: &sql)
        sql.append(" WHERE \(fuzzy) %> ")
        sql.value(.text(folded), as: .text)
        sql.append(" AND ")
        sql.predicate(search.filter)
        sql.append(" ORDER BY word_similarity(")
        sql.value(.text(folded), as: .text)
        sql.append(", \(fuzzy)) DESC, \(PostgresSQL.quote(search.table.name)).\(PostgresSQL.quote(search.table.primaryKey[0])) LIMIT ")
        sql.value(.integer(Int64(max(100, search.limit * 5))), as: .integer)
        let count = search.outputs.count
        let rows = try await session.rows(sql, types: search.outputs.map(\.type) + [.text, .double], table: search.table)
        let matcher = TrigramSimilarity.Matcher(query: text)
        var result: [RankedRow] = []
        for row in rows {
            guard case .text(let candidate) = row[count] else { continue }
            let similarity = matcher.bestWindowSimilarity(folded: candidate)
            guard similarity >= minimum else { continue }
            let factor: Double = if case .double(let d) = row[count + 1] { d } else { 1 }
            result.append(RankedRow(values: Array(row.prefix(count)), score: similarity * factor))
        }
        result.sort { $0.score > $1.score }
        return Array(result.prefix(search.limit))
    }

    /// The rows in the bounding box of the circle (btree on the coordinates), their haversine distance computed in
    /// SQL with exactly `GeoDistance.haversineMeters`' operations, those within the radius nearest first.
    private static func nearest(_ search: RankedSearch, latitude: Double, longitude: Double, radius: Double,
                                session: PostgresSession) async throws -> [RankedRow] {
        let lat = "s." + PostgresSQL.quote(PostgresSearchNames.latitude)
        let lng = "s." + PostgresSQL.quote(PostgresSearchNames.longitude)
        let box = GeoDistance.boundingBox(latitude: latitude, longitude: longitude, radius: radius)
        var sql = PostgresSQL()
        sql.append("SELECT \(outputList(search)), caravan_distance FROM (SELECT \(PostgresSQL.quote(search.table.name)).*, ")
        // phi1 = lat1 · π / 180, phi2 = lat2 · π / 180, a = sin²(Δphi / 2) + cos phi1 · cos phi2 · sin²(Δλ / 2).
        let latitudeParameter = sql.placeholder(.double(latitude), as: .double)
        let longitudeParameter = sql.placeholder(.double(longitude), as: .double)
        let p1 = "(\(latitudeParameter) * pi() / 180)", p2 = "(\(lat) * pi() / 180)"
        let halfPhi = "sin((\(p2) - \(p1)) / 2)", halfLambda = "sin(((\(lng) - \(longitudeParameter)) * pi() / 180) / 2)"
        sql.append("2 * 6371008.8::float8 * asin(least(1::float8, sqrt(\(halfPhi) * \(halfPhi) + cos(\(p1)) * cos(\(p2)) * \(halfLambda) * \(halfLambda)))) AS caravan_distance")
        from(search, into: &sql)
        sql.append(" WHERE \(lat) BETWEEN ")
        sql.value(.double(box.minLatitude), as: .double)
        sql.append(" AND ")
        sql.value(.double(box.maxLatitude), as: .double)
        sql.append(" AND \(lng) BETWEEN ")
        sql.value(.double(box.minLongitude), as: .double)
        sql.append(" AND ")
        sql.value(.double(box.maxLongitude), as: .double)
        sql.append(" AND ")
        sql.predicate(search.filter)
        sql.append(") AS caravan_near WHERE caravan_distance <= ")
        sql.value(.double(radius), as: .double)
        sql.append(" ORDER BY caravan_distance, \(PostgresSQL.quote(search.table.primaryKey[0])) LIMIT ")
        sql.value(.integer(Int64(search.limit)), as: .integer)
        let rows = try await session.rows(sql, types: search.outputs.map(\.type) + [.double], table: search.table)
        return scored(rows, outputs: search.outputs.count)
    }
}
