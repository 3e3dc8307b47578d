package import CaravanCore

/// `search_cities` and `search_countries`.
///
/// The query is folded (`TextFolding.fold`, trimmed) and tokenized as every searchable text in Caravan. A row
/// matches when the folded query is a prefix of one of its folded names, or when every query token is a prefix of
/// some token of its names. Rank 1: a folded name equals the folded query; rank 2: a folded name starts with it;
/// rank 3: token prefixes only. Within a rank: population desc, then id asc.
///
/// Each rank is one indexed read ordered by (population desc, id asc): exact and whole-name prefix are lookups on
/// the folded-name columns (`.textPrefix` indexes: byte order on every engine and collation), token prefixes an
/// index range on the city token table (`id IN (SELECT city_id … WHERE token LIKE 'tok%')`; a pattern over a token
/// column for the countries). The reads are limited, and merged in rank order without duplicates.
package enum TravelLogSearch {
    /// Largest `max_results` honoured; larger values are capped to it.
    package static let maxResultsCap = 500
    /// Longest query accepted, in characters (22023 beyond).
    package static let maxQueryLength = 200

    /// Where a table keeps the folded tokens of its names.
    enum Tokens {
        /// One text column of ` tok1 tok2 …` (a row has a token starting with `q` when it contains ` q`): a scan,
        /// fine for the 252 countries.
        case column(String)
        /// A table of (row id, token) with a byte-order index on the token: a prefix is an index range.
        case table(TableSchema, rowID: String)
    }

    /// One searchable table: its name columns (folded), its tokens and the columns a hit returns.
    struct Target {
        let table: TableSchema
        let foldedColumns: [String]
        let tokens: Tokens
        let outputs: [String]
    }

    static let cityTarget = Target(
        table: TravelLogSchema.cities, foldedColumns: ["search_display", "search_plain", "search_ar"],
        tokens: .table(TravelLogSchema.cityNameTokens, rowID: "city_id"),
        outputs: ["id", "display_name", "plain_name", "name_ar", "admin", "country", "country_id", "population", "latitude", "longitude"]
    )
    static let countryTarget = Target(
        table: TravelLogSchema.countries, foldedColumns: ["search_name", "search_ar", "search_code"],
        tokens: .column("search_tokens"),
        outputs: ["id", "name", "name_ar", "country_code", "capital", "continent", "population"]
    )

    /// `search_cities(q text, max_results int default 50) → table(id, display_name, …, longitude, rank)`.
    static let searchCities = RPCFunction("search_cities", parameters: [
        RPCParameter("q", .text),
        RPCParameter("max_results", .integer, default: .integer(50)),
    ], readOnly: true) { arguments, transaction in
        try await search(cityTarget, arguments, function: "search_cities", transaction: transaction)
    }

    /// `search_countries(q text, max_results int default 50) → table(id, name, …, population, rank)`.
    static let searchCountries = RPCFunction("search_countries", parameters: [
        RPCParameter("q", .text),
        RPCParameter("max_results", .integer, default: .integer(50)),
    ], readOnly: true) { arguments, transaction in
        try await search(countryTarget, arguments, function: "search_countries", transaction: transaction)
    }

    package static let all = [searchCities, searchCountries]

    /// The folded, trimmed query, or 22023 for a blank or overlong one (or one with a NUL, which no name holds).
    package static func foldedQuery(_ raw: String?) throws(CaravanError) -> String {
        guard let raw, raw.count <= maxQueryLength else {
            throw CaravanError(.invalidParameterValue, raw == nil ? "q must not be null" : "q is longer than \(maxQueryLength) characters")
        }
        guard !raw.unicodeScalars.contains("\u{0}") else {
            throw CaravanError(.invalidParameterValue, "q must not contain a NUL character")
        }
        let folded = TextFolding.fold(raw).trimmingWhitespace
        guard !folded.isEmpty else {
            throw CaravanError(.invalidParameterValue, "q must not be blank", hint: "type at least one letter or digit")
        }
        return folded
    }

    static func search(_ target: Target, _ arguments: RPCArguments, function: String, transaction: any StoreTransaction) async throws -> RPCResult {
        guard case .integer(let requested) = arguments["max_results"], requested >= 1 else {
            throw CaravanError(.invalidParameterValue, "max_results must be a positive integer", hint: "at most \(maxResultsCap) rows are returned")
        }
        let limit = Int(min(requested, Int64(maxResultsCap)))
        let query = try foldedQuery(arguments.text("q"))
        let table = target.table
        let access = try transaction.access.readRule(table)
        var rows: [[Value]] = []
        var seen: Set<Value> = []
        for (rank, filter) in try rankFilters(target, query: query).enumerated() where rows.count < limit {
            let plan = try ReadPlan(
                table: table,
                query: Query(select: target.outputs.map { .column(name: $0, alias: nil, cast: nil) },
                             order: [OrderTerm(column: "population", direction: .descending), OrderTerm(column: "id")],
                             limit: limit + seen.count),
                access: BoundPredicate.and([access, filter]).simplified, maxRows: nil, includeCount: false
            )
            for row in try await transaction.fetch(plan).rows where rows.count < limit && seen.insert(row[0]).inserted {
                rows.append(row + [.integer(Int64(rank + 1))])
            }
        }
        let columns = try target.outputs.map { try table.requireColumn($0) } + [Column("rank", .integer)]
        return .table(columns: columns, rows: rows)
    }

    /// The filters of ranks 1, 2 and 3, in order (rank 3 is absent when the query has no token).
    static func rankFilters(_ target: Target, query: String) throws -> [BoundPredicate] {
        let folded = try target.foldedColumns.map { try target.table.requireColumn($0) }
        let exact = BoundPredicate.or(folded.map { .compare($0, .eq, .text(query)) })
        let prefix = BoundPredicate.or(folded.map { .like($0, pattern: likeEscaped(query) + "%", caseInsensitive: false) })
        let tokens = Array(Set(TextFolding.tokens(in: query))).sorted()
        guard !tokens.isEmpty else { return [exact, prefix] }
        let everyToken = BoundPredicate.and(try tokens.map { try tokenPrefix($0, of: target) })
        return [exact, prefix, everyToken]
    }

    /// The rows of `target` with a token starting with `token`.
    static func tokenPrefix(_ token: String, of target: Target) throws -> BoundPredicate {
        switch target.tokens {
        case .column(let name):
            return .like(try target.table.requireColumn(name), pattern: "% " + likeEscaped(token) + "%", caseInsensitive: false)
        case .table(let tokens, let rowID):
            let key = try target.table.requireColumn(target.table.primaryKey[0])
            return .inSubquery(key, tokens, selecting: try tokens.requireColumn(rowID),
                               where: .like(try tokens.requireColumn("token"), pattern: likeEscaped(token) + "%", caseInsensitive: false))
        }
    }

    /// `text` as a LIKE literal: `%`, `_` and `\` escaped.
    static func likeEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}

extension String {
    /// Without leading and trailing white space.
    var trimmingWhitespace: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
