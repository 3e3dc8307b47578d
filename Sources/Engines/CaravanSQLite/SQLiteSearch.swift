package import CaravanCore
import CaravanSQL
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The SQLite objects behind a table's `SearchIndexes`, by naming convention. A module's frozen migration creates
/// them (and the triggers that keep them in step with the table):
/// - `<table>_search_rowid(rowid INTEGER PRIMARY KEY, caravan_key TEXT NOT NULL UNIQUE)`: a stable integer id per
///   row (a table's own rowid can change on VACUUM when it has no INTEGER PRIMARY KEY);
/// - `<table>_fts`: FTS5, `tokenize='caravan_fold stem'`, one column per full-text column, rowid = the stable id;
/// - `<table>_fuzzy(text)`: FTS5 `trigram` over `caravan_fold()` of the fuzzy columns, and `<table>_fuzzy_vocab`,
///   its `fts5vocab` (row) table, for the trigrams' document frequencies;
/// - `<table>_geo`: R*Tree `(id, min_lat, max_lat, min_lng, max_lng, +lat, +lng)`, the exact coordinates kept as
///   auxiliary columns.
package struct SQLiteSearchNames: Sendable {
    package static let keyColumn = "\"caravan_key\""
    package let keys: String
    package let fullText: String
    package let fuzzy: String
    package let fuzzyVocabulary: String
    package let geo: String

    package init(table: String) {
        keys = table + "_search_rowid"
        fullText = table + "_fts"
        fuzzy = table + "_fuzzy"
        fuzzyVocabulary = table + "_fuzzy_vocab"
        geo = table + "_geo"
    }
}

/// SQL functions of text search and the ranked reads (`StoreTransaction.rankedFetch`).
enum SQLiteTextSearch {
    /// `caravan_fold(text)`: `TextFolding.fold` (NULL stays NULL).
    static let foldFunction = DatabaseFunction("caravan_fold", argumentCount: 1, pure: true) { values in
        String.fromDatabaseValue(values[0]).map(TextFolding.fold)
    }

    /// `caravan_text_match(text, query)`: whether `text`'s folded tokens satisfy a `TextQuery` (JSON, as `encode`
    /// writes it). The fallback for columns without a full-text index; it agrees with the in-memory evaluator.
    static let matchFunction = DatabaseFunction("caravan_text_match", argumentCount: 2, pure: true) { values in
        guard let text = String.fromDatabaseValue(values[0]), let encoded = String.fromDatabaseValue(values[1]) else { return nil }
        return try decode(encoded).matches(text: text)
    }

    static func encode(_ query: TextQuery) -> String {
        do {
            return String(decoding: try JSONEncoder().encode(query), as: UTF8.self)
        } catch {
            return "\"nothing\""  // unreachable: the enum's synthesized encoding cannot fail
        }
    }

    private static let cache = Mutex<[String: TextQuery]>([:])

    static func decode(_ encoded: String) throws -> TextQuery {
        if let hit = cache.withLock({ $0[encoded] }) { return hit }
        let query = try JSONDecoder().decode(TextQuery.self, from: Data(encoded.utf8))
        cache.withLock { cache in
            if cache.count > 1000 { cache.removeAll() }
            cache[encoded] = query
        }
        return query
    }

    // MARK: Ranked reads

    static func run(_ search: RankedSearch, in db: Database) throws -> [RankedRow] {
        let table = search.table
        guard let indexes = table.search, table.primaryKey.count == 1 else {
            throw CaravanError(.unsupportedOperator, "table \(table.name) has no search index")
        }
        guard search.limit > 0 else { return [] }
        let names = SQLiteSearchNames(table: table.name)
        do {
            switch search.ranking {
            case .fullText(let query, let boost):
                guard let expression = FTS5Query.render(query) else { return [] }
                return try fullText(search, expression: expression, boost: boost, weights: indexes.fullText.map(\.weight), names: names, in: db)
            case .similarity(let text, let minimum, let boost):
                guard !indexes.fuzzy.isEmpty else { throw CaravanError(.unsupportedOperator, "table \(table.name) has no trigram index") }
                return try similar(search, text: text, minimum: minimum, boost: boost, names: names, in: db)
            case .distance(let latitude, let longitude, let radius):
                guard indexes.geo != nil else { throw CaravanError(.unsupportedOperator, "table \(table.name) has no geo index") }
                return try nearest(search, latitude: latitude, longitude: longitude, radius: radius, names: names, in: db)
            }
        } catch let error as DatabaseError {
            throw SQLiteStore.translate(error, table: table)
        }
    }

    private static func outputList(_ search: RankedSearch) -> String {
        let table = SQLiteSQL.quote(search.table.name)
        return search.outputs.map { table + "." + SQLiteSQL.quote($0.name) }.joined(separator: ", ")
    }

    private static func boostSQL(_ boost: ScoreBoost?, table: String, into sql: inout SQLiteSQL) {
        guard let boost else { sql.append("1.0"); return }
        sql.append("(1.0 + COALESCE(\(SQLiteSQL.quote(table)).\(SQLiteSQL.quote(boost.column)), 0) * ")
        sql.value(.double(boost.weight))
        sql.append(")")
    }

    /// `) AS m` (the closing of an FTS subquery giving `caravan_rowid`), then the stable ids and the table's rows, in
    /// that order (CROSS JOIN fixes it: the FTS matches drive the loop), and the filter.
    private static func joinRowsAndFilter(_ search: RankedSearch, names: SQLiteSearchNames, into sql: inout SQLiteSQL) {
        let table = SQLiteSQL.quote(search.table.name)
        sql.append(") AS m CROSS JOIN \(SQLiteSQL.quote(names.keys)) AS k ON k.rowid = m.caravan_rowid")
        sql.append(" CROSS JOIN \(table) ON \(table).\(SQLiteSQL.quote(search.table.primaryKey[0])) = k.\(SQLiteSearchNames.keyColumn) WHERE ")
        sql.predicate(search.filter)
    }

    /// FTS5 match, bm25 with the index's weights (negated: higher is better) times the boost, filter applied in SQL.
    /// The ranking pass reads only the stable id and the score (plus what the filter and boost read), so sorting
    /// thousands of matches moves no row data; the output columns are fetched for the winners only.
    private static func fullText(_ search: RankedSearch, expression: String, boost: ScoreBoost?, weights: [Double],
                                 names: SQLiteSearchNames, in db: Database) throws -> [RankedRow] {
        var sql = SQLiteSQL()
        sql.append("SELECT k.rowid, -m.caravan_bm25 * ")
        boostSQL(boost, table: search.table.name, into: &sql)
        sql.append(" AS caravan_score FROM (SELECT rowid AS caravan_rowid, bm25(\(SQLiteSQL.quote(names.fullText))")
        for weight in weights { sql.append(", \(weight)") }
        sql.append(") AS caravan_bm25 FROM \(SQLiteSQL.quote(names.fullText)) WHERE \(SQLiteSQL.quote(names.fullText)) MATCH ")
        sql.value(.text(expression))
        joinRowsAndFilter(search, names: names, into: &sql)
        sql.append(" ORDER BY caravan_score DESC, k.rowid LIMIT ")
        sql.value(.integer(Int64(search.limit)))
        let ranked = try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments, types: [.integer, .double])
        let ids = ranked.compactMap { if case .integer(let id) = $0[0] { id } else { nil } }
        let outputs = try fetchOutputs(search, ids: ids, filtered: false, names: names, in: db)
        return ranked.compactMap { row in
            guard case .integer(let id) = row[0], let values = outputs[id] else { return nil }
            let score: Double = if case .double(let d) = row[1] { d } else { 0 }
            return RankedRow(values: values, score: score)
        }
    }

    /// The output columns of the rows with stable ids `ids` (those passing the search's filter, when `filtered`),
    /// by id. Always a multiple of 64 placeholders (unused ones never match), so few statements are prepared.
    private static func fetchOutputs(_ search: RankedSearch, ids: [Int64], filtered: Bool, names: SQLiteSearchNames,
                                     in db: Database) throws -> [Int64: [Value]] {
        guard !ids.isEmpty else { return [:] }
        let table = SQLiteSQL.quote(search.table.name)
        var sql = SQLiteSQL()
        sql.append("SELECT k.rowid, \(outputList(search)) FROM \(SQLiteSQL.quote(names.keys)) AS k CROSS JOIN \(table) ON \(table).\(SQLiteSQL.quote(search.table.primaryKey[0])) = k.\(SQLiteSearchNames.keyColumn) WHERE k.rowid IN (")
        let slots = (ids.count + 63) / 64 * 64
        for i in 0..<slots {
            if i > 0 { sql.append(", ") }
            sql.value(.integer(i < ids.count ? ids[i] : -1))
        }
        sql.append(")")
        if filtered {
            sql.append(" AND ")
            sql.predicate(search.filter)
        }
        let rows = try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments,
                                             types: [.integer] + search.outputs.map(\.type))
        var byID: [Int64: [Value]] = [:]
        for row in rows { if case .integer(let id) = row[0] { byID[id] = Array(row.dropFirst()) } }
        return byID
    }

    /// The query's trigrams worth looking up: those present in the index, the rarest half (at least three), without
    /// those in more than a fifth of the rows when rarer ones remain. A name similar to the query shares most of its
    /// trigrams, so it shares some of the rarer ones; the frequent ones (`ال…`) would only make every row a candidate.
    private static func rarerTrigrams(_ trigrams: [String], names: SQLiteSearchNames, in db: Database) throws -> [String] {
        guard trigrams.count > 3 else { return trigrams }
        var sql = SQLiteSQL()
        sql.append("SELECT term, doc FROM \(SQLiteSQL.quote(names.fuzzyVocabulary)) WHERE term IN (")
        for (i, trigram) in trigrams.enumerated() {
            if i > 0 { sql.append(", ") }
            sql.value(.text(trigram))
        }
        sql.append(")")
        var frequency: [String: Int64] = [:]
        for row in try Row.fetchAll(try db.makeStatement(sql: sql.text), arguments: StatementArguments(sql.arguments)) {
            frequency[row[0]] = row[1]
        }
        let rows = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM \(SQLiteSQL.quote(names.keys))") ?? 0
        let present = trigrams.filter { (frequency[$0] ?? 0) > 0 }.sorted { (frequency[$0] ?? 0, $0) < (frequency[$1] ?? 0, $1) }
        var kept = Array(present.prefix(max(3, (present.count + 1) / 2)))
        while kept.count > 3, let last = kept.last, (frequency[last] ?? 0) * 5 > rows { kept.removeLast() }
        return kept
    }

    /// Candidates from the trigram index (rows sharing trigrams with the query, most shared first), then exact
    /// similarity computed here, thresholded and ordered (times the boost).
    private static func similar(_ search: RankedSearch, text: String, minimum: Double, boost: ScoreBoost?,
                                names: SQLiteSearchNames, in db: Database) throws -> [RankedRow] {
        let trigrams = try rarerTrigrams(TrigramSimilarity.innerTrigrams(text), names: names, in: db)
        guard !trigrams.isEmpty else { return [] }
        let table = search.table
        var sql = SQLiteSQL()
        sql.append("SELECT \(outputList(search)), m.caravan_text, ")
        boostSQL(boost, table: table.name, into: &sql)
        sql.append(" FROM (SELECT rowid AS caravan_rowid, \"text\" AS caravan_text, rank AS caravan_rank FROM \(SQLiteSQL.quote(names.fuzzy)) WHERE \(SQLiteSQL.quote(names.fuzzy)) MATCH ")
        sql.value(.text(trigrams.map(FTS5Query.quote).joined(separator: " OR ")))
        joinRowsAndFilter(search, names: names, into: &sql)
        sql.append(" ORDER BY m.caravan_rank LIMIT ")
        sql.value(.integer(Int64(max(100, search.limit * 5))))
        let types = search.outputs.map(\.type) + [.text, .double]
        let rows = try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments, types: types)
        var scored: [RankedRow] = []
        let matcher = TrigramSimilarity.Matcher(query: text)
        for row in rows {
            guard case .text(let candidate) = row[search.outputs.count] else { continue }
            let similarity = matcher.bestWindowSimilarity(folded: candidate)
            guard similarity >= minimum else { continue }
            let factor: Double = if case .double(let d) = row[search.outputs.count + 1] { d } else { 1 }
            scored.append(RankedRow(values: Array(row.prefix(search.outputs.count)), score: similarity * factor))
        }
        scored.sort { $0.score > $1.score }
        return Array(scored.prefix(search.limit))
    }

    /// Nearest first, by a growing search: the R*Tree box of a small circle (250 m), exact haversine distances on
    /// the stored coordinates, then the rows passing the filter in distance order; when fewer than `limit` pass, the
    /// circle grows fourfold (never beyond `radius`) and the search repeats. A row inside the searched circle is
    /// never farther than one outside it, so the first `limit` found are the true nearest.
    private static func nearest(_ search: RankedSearch, latitude: Double, longitude: Double, radius: Double,
                                names: SQLiteSearchNames, in db: Database) throws -> [RankedRow] {
        let boxStatement = try db.cachedStatement(sql: """
            SELECT id, lat, lng FROM \(SQLiteSQL.quote(names.geo))
            WHERE max_lat >= ? AND min_lat <= ? AND max_lng >= ? AND min_lng <= ?
            """)
        let handle = boxStatement.sqliteStatement
        var reach = min(radius, 250)
        while true {
            let box = GeoDistance.boundingBox(latitude: latitude, longitude: longitude, radius: reach)
            var candidates: [(id: Int64, distance: Double)] = []
            let cursor = try Row.fetchCursor(boxStatement, arguments: [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude])
            while try cursor.next() != nil {
                let distance = GeoDistance.haversineMeters(latitude1: latitude, longitude1: longitude,
                                                           latitude2: sqlite3_column_double(handle, 1), longitude2: sqlite3_column_double(handle, 2))
                if distance <= reach { candidates.append((sqlite3_column_int64(handle, 0), distance)) }
            }
            candidates.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id) }
            var result: [RankedRow] = []
            var start = 0
            let chunk = max(64, search.limit * 2)
            while result.count < search.limit, start < candidates.count {
                let slice = candidates[start..<min(start + chunk, candidates.count)]
                start += slice.count
                let rows = try fetchOutputs(search, ids: slice.map(\.id), filtered: true, names: names, in: db)
                for candidate in slice {
                    guard let values = rows[candidate.id] else { continue }
                    result.append(RankedRow(values: values, score: candidate.distance))
                    if result.count == search.limit { break }
                }
            }
            if result.count == search.limit || reach >= radius { return result }
            reach = min(radius, reach * 4)
        }
    }

    private static func rankedRows(_ sql: SQLiteSQL, outputs: [CaravanCore.Column], in db: Database) throws -> [RankedRow] {
        let rows = try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments,
                                             types: outputs.map(\.type) + [.double])
        return rows.map { row in
            let score: Double = if case .double(let d) = row[outputs.count] { d } else { 0 }
            return RankedRow(values: Array(row.prefix(outputs.count)), score: score)
        }
    }
}

extension SQLiteStore {
    /// The floor of a full-text search, for benchmarks: the bare FTS5 query (`MATCH`, bm25 order, `LIMIT`) on
    /// `table`'s index, no join, filter or policy. Returns how many rowids it produced.
    package func unsafeRawFullText(table: String, query: TextQuery, limit: Int) throws -> Int {
        guard let expression = FTS5Query.render(query) else { return 0 }
        let fts = SQLiteSQL.quote(SQLiteSearchNames(table: table).fullText)
        return try unsafeReadNow { db in
            try Int64.fetchAll(try db.cachedStatement(sql: "SELECT rowid FROM \(fts) WHERE \(fts) MATCH ? ORDER BY rank LIMIT ?"),
                               arguments: [expression, limit]).count
        }
    }

    /// The floor of a nearby search, for benchmarks: the bare R*Tree box query around the circle (ids and stored
    /// coordinates), no distance, order, join or policy. Returns how many entries it produced.
    package func unsafeRawGeoBox(table: String, latitude: Double, longitude: Double, radius: Double) throws -> Int {
        let box = GeoDistance.boundingBox(latitude: latitude, longitude: longitude, radius: radius)
        let geo = SQLiteSQL.quote(SQLiteSearchNames(table: table).geo)
        return try unsafeReadNow { db in
            let cursor = try Row.fetchCursor(try db.cachedStatement(sql: "SELECT id, lat, lng FROM \(geo) WHERE max_lat >= ? AND min_lat <= ? AND max_lng >= ? AND min_lng <= ?"),
                                             arguments: [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude])
            var count = 0
            while try cursor.next() != nil { count += 1 }
            return count
        }
    }
}
