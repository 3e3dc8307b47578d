import CaravanCore

/// `search_places` and `nearby_places` (design §3.3), engine-neutral: they ask the store for ranked rows through
/// `StoreTransaction.rankedFetch`, with the caller's read policy ANDed into the filter, so anonymous callers only
/// ever see active places.
package enum PlacesSearch {
    /// Largest `max_results` honoured; larger values are capped to it.
    package static let maxResultsCap = 100
    /// Largest `radius_m` of `nearby_places`, in meters.
    package static let maxRadius = 100_000
    /// Below this many full-text hits, trigram similarity adds typo-tolerant matches: 1, so the fallback runs when
    /// the full-text search finds nothing (a typo). With 3, a query whose words match one or two places also paid
    /// for the similarity search: p50 at 100k places went from 0.5 ms to 4 ms (BENCHMARKS.md, "Search").
    package static let fuzzyFallbackBelow = 1
    /// pg_trgm's default similarity threshold (`%`).
    package static let similarityThreshold = 0.3
    /// The fallback is skipped for queries longer than this (in characters): a typo fallback over a paragraph is noise.
    package static let fuzzyMaxQueryLength = 200
    /// The design's blend: relevance × (1 + google_rating / 10).
    static let ratingBoost = ScoreBoost(column: "google_rating", weight: 0.1)

    static let summaryColumns = ["id", "name_ar", "name_en", "category", "category_ar", "neighborhood", "google_rating",
                                 "price_range", "latitude", "longitude", "cover_image_url"]

    /// `search_places(query text, cat text default null, area text default null, min_rating numeric default 0,
    /// max_results int default 20) → table(id, name_ar, name_en, category, category_ar, neighborhood, google_rating,
    /// price_range, latitude, longitude, cover_image_url, relevance)`.
    ///
    /// Every word of `query` must match (folded, English stemmed), the last one also as a prefix (type-ahead); rows
    /// are ordered by relevance: `1 + bm25 relevance × (1 + google_rating / 10)`. When no row matches
    /// (`fuzzyFallbackBelow`), rows whose names are trigram-similar (≥ 0.3) are returned instead, with relevance
    /// `similarity × (1 + google_rating / 10) / 1.5` (always below the full-text hits). `area` keeps places whose
    /// neighborhood (Arabic or English) contains the area's name, or the name of the `areas` row with that id, folded
    /// (`حي الاندلس` finds `الأندلس`). Any query text is safe: it is tokenized and every token quoted.
    static let searchPlaces = RPCFunction("search_places", parameters: [
        RPCParameter("query", .text),
        RPCParameter("cat", .text, default: .null),
        RPCParameter("area", .text, default: .null),
        RPCParameter("min_rating", .double, default: .double(0)),
        RPCParameter("max_results", .integer, default: .integer(20)),
    ], readOnly: true) { arguments, transaction in
        let limit = try maxResults(arguments, function: "search_places")
        let table = PlacesSchema.places
        let text = arguments.text("query") ?? ""
        let outputs = try summaryColumns.map { try table.requireColumn($0) }
        var columns = outputs
        columns.append(Column("relevance", .double))
        let query = TextQuery.typeAhead(text)
        guard query != .nothing else { return .table(columns: columns, rows: []) }
        var filters = [try transaction.access.readRule(table)]
        if let category = arguments.text("cat") { filters.append(.compare(try table.requireColumn("category"), .eq, .text(category))) }
        if case .double(let minimum) = arguments["min_rating"], minimum > 0 {
            filters.append(.compare(try table.requireColumn("google_rating"), .gte, .double(minimum)))
        }
        if let area = arguments.text("area") { filters.append(try await areaFilter(area, transaction: transaction)) }
        let filter = BoundPredicate.and(filters).simplified
        var rows: [[Value]] = []
        var seen: Set<Value> = []
        for hit in try await transaction.rankedFetch(RankedSearch(table: table, ranking: .fullText(query, boost: ratingBoost),
                                                            filter: filter, outputs: outputs, limit: limit)) {
            seen.insert(hit.values[0])
            rows.append(hit.values + [.double(1 + hit.score)])
        }
        if rows.count < min(limit, fuzzyFallbackBelow), text.count <= fuzzyMaxQueryLength {
            let similar = try await transaction.rankedFetch(RankedSearch(
                table: table, ranking: .similarity(text, minimum: similarityThreshold, boost: ratingBoost),
                filter: filter, outputs: outputs, limit: limit
            ))
            for hit in similar where rows.count < limit && !seen.contains(hit.values[0]) {
                seen.insert(hit.values[0])
                rows.append(hit.values + [.double(hit.score / 1.5)])
            }
        }
        return .table(columns: columns, rows: rows)
    }

    /// `nearby_places(lat numeric, lng numeric, radius_m int default 5000, max_results int default 20,
    /// cat text default null) → table(…, distance_meters)`: active places within `radius_m` meters (haversine on the
    /// mean Earth sphere), nearest first. Out-of-range arguments are refused with 22023.
    static let nearbyPlaces = RPCFunction("nearby_places", parameters: [
        RPCParameter("lat", .double),
        RPCParameter("lng", .double),
        RPCParameter("radius_m", .integer, default: .integer(5000)),
        RPCParameter("max_results", .integer, default: .integer(20)),
        RPCParameter("cat", .text, default: .null),
    ], readOnly: true) { arguments, transaction in
        guard case .double(let latitude) = arguments["lat"], (-90.0...90.0).contains(latitude) else {
            throw CaravanError(.invalidParameterValue, "lat must be a number between -90 and 90", hint: "lat and lng are degrees (WGS 84)")
        }
        guard case .double(let longitude) = arguments["lng"], (-180.0...180.0).contains(longitude) else {
            throw CaravanError(.invalidParameterValue, "lng must be a number between -180 and 180", hint: "lat and lng are degrees (WGS 84)")
        }
        guard case .integer(let radius) = arguments["radius_m"], radius > 0, radius <= maxRadius else {
            throw CaravanError(.invalidParameterValue, "radius_m must be between 1 and \(maxRadius) meters")
        }
        let limit = try maxResults(arguments, function: "nearby_places")
        let table = PlacesSchema.places
        let outputs = try summaryColumns.map { try table.requireColumn($0) }
        var filters = [try transaction.access.readRule(table)]
        if let category = arguments.text("cat") { filters.append(.compare(try table.requireColumn("category"), .eq, .text(category))) }
        let hits = try await transaction.rankedFetch(RankedSearch(
            table: table, ranking: .distance(latitude: latitude, longitude: longitude, radiusMeters: Double(radius)),
            filter: BoundPredicate.and(filters).simplified, outputs: outputs, limit: limit
        ))
        return .table(columns: outputs + [Column("distance_meters", .double)],
                      rows: hits.map { $0.values + [.double(($0.score * 100).rounded() / 100)] })
    }

    /// `max_results`: at least 1 (22023 otherwise), capped at `maxResultsCap`.
    static func maxResults(_ arguments: RPCArguments, function: String) throws(CaravanError) -> Int {
        guard case .integer(let value) = arguments["max_results"], value >= 1 else {
            throw CaravanError(.invalidParameterValue, "max_results must be a positive integer", hint: "at most \(maxResultsCap) rows are returned")
        }
        return Int(min(value, Int64(maxResultsCap)))
    }

    /// Places whose neighborhood (Arabic or English) contains the area's name as a phrase, folded, without the
    /// `حي` / `Dist.` that district names carry; the area may also be given by its `areas.id`.
    static func areaFilter(_ area: String, transaction: any StoreTransaction, names known: [String]? = nil) async throws -> BoundPredicate {
        let table = PlacesSchema.places
        var names = known ?? [area]
        let areas = PlacesSchema.areas
        let lookup = try ReadPlan(
            table: areas,
            query: Query(select: [.column(name: "name_ar", alias: nil, cast: nil), .column(name: "name_en", alias: nil, cast: nil)],
                         filters: [.column("id", .eq, area)], limit: 1),
            access: try transaction.access.readRule(areas), maxRows: nil, includeCount: false
        )
        for row in await known == nil ? try await transaction.fetch(lookup).rows : [] {
            for value in row { if case .text(let name) = value { names.append(name) } }
        }
        let index = FullTextIndexReference(table: table.name, primaryKey: "id")
        var options: [BoundPredicate] = []
        for name in names {
            let tokens = areaTokens(name)
            guard !tokens.isEmpty else { continue }
            let phrase = tokens.count == 1 ? TextQuery.term(tokens[0], prefix: false) : .phrase(tokens)
            for column in ["neighborhood", "neighborhood_en"] {
                options.append(.textSearch(try table.requireColumn(column), phrase, index: index))
            }
        }
        return options.isEmpty ? .constant(false) : .or(options)
    }

    /// The folded tokens of an area name without the district markers `حي` (leading) and `dist`/`district` (trailing).
    static func areaTokens(_ name: String) -> [String] {
        var tokens = TextFolding.tokens(in: name)
        if tokens.count > 1, tokens.first == "حي" { tokens.removeFirst() }
        if tokens.count > 1, let last = tokens.last, last == "dist" || last == "district" { tokens.removeLast() }
        return tokens
    }
}
