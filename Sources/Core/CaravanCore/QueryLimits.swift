/// How large and how deeply nested one request's query may be: every grammar that reads outside input (logic trees,
/// `select` embeds and spreads, JSON paths, `fts` queries, lists, `order`) is bounded, so no request makes a parser, the
/// binding, the in-memory evaluator or the SQL serializer recurse without bound, and no statement nests deeper than
/// the engines' SQL parsers take (SQLite's is a fixed stack of 100 entries). A request past a limit is answered
/// `400 PGRST100` (`CaravanError.Code.limitExceeded`) naming it; a query string past `maxQueryLength` is `414`.
///
/// The nesting bounds are fixed (they follow from what the engines parse); the per-request counts are settings
/// (`query_max_length`, `query_max_filters`, `query_max_embeds` of `ServerConfiguration`).
public struct QueryLimits: Sendable, Hashable {
    /// Bytes of a request's raw query string (`query_max_length`); past it the request is answered 414.
    public var maxQueryLength = 32 * 1024
    /// Conditions in one request (`query_max_filters`): every `column=op.value`, every condition of a logic tree, of
    /// an embedded resource's filters, of a realtime binding's filter; an `(any)`/`(all)` condition counts one per
    /// element of its list.
    public var maxFilters = 256
    /// Embedded resources (spreads included) in one request's `select` (`query_max_embeds`).
    public var maxEmbeds = 32

    public init(maxQueryLength: Int = 32 * 1024, maxFilters: Int = 256, maxEmbeds: Int = 32) {
        self.maxQueryLength = maxQueryLength
        self.maxFilters = maxFilters
        self.maxEmbeds = maxEmbeds
    }

    /// The largest values the settings may take: past them a statement could reach SQLite's limits (1,000 levels of
    /// expression tree, since a list of ANDed conditions is a chain of that depth).
    public static let settingRanges = (queryLength: 1024...(1 << 20), filters: 1...512, embeds: 1...256)

    // MARK: Fixed nesting bounds

    /// `and(…)`, `or(…)` and `not.and/or(…)` groups nested in one logic tree, the outermost (`or=(…)`) included.
    /// Measured on SQLite 3.40.1 with the statement a read renders: the costliest shape (`and(c,not.or(c,not.and(…)))`)
    /// parses up to 23 deep at the top level, 20 inside one embed, 17 inside two; and/or alone 31; a chain of
    /// one-item groups without bound.
    public static let logicTreeDepth = 16
    /// The nesting of and/or/not a filter may have when it is bound (`Predicate.bound(to:)`): what the deepest logic
    /// tree parses into (a `not.` before a group or a condition is a level of its own, and a request's filters are
    /// ANDed); a predicate built another way is refused past it too.
    public static let predicateDepth = 2 * logicTreeDepth + 3
    /// Embedded resources nested in a `select` (`a(b(c(…)))` is 3 deep), whatever the engine; each engine serves
    /// `embedDepth(on:)` of them.
    public static let selectDepth = 16
    /// Parentheses and `!` nested in an `fts` query (`to_tsquery` syntax). Measured on SQLite 3.40.1: 60 levels of
    /// `(a&!(a&!(…)))` parse (FTS5 and the SQL of its fallback), 62 do not.
    public static let textQueryDepth = 32
    /// Steps of a JSON path (`data->a->0->>b` has 3).
    public static let jsonPathSteps = 32
    /// Values in all of one request's lists (`in.(…)`, `{…}`): each becomes a bound parameter on SQLite, which
    /// takes 32,766 of them in a statement.
    public static let listItems = 10_000
    /// Terms of one `order=` parameter.
    public static let orderTerms = 64
    /// Values one embedded resource selects (its columns and nested embeds): its row is built by one call of
    /// PostgreSQL's `json_build_object`, which takes 100 arguments (50 name/value pairs).
    public static let embeddedValues = 50
    /// Values one read selects at its top level.
    public static let selectedValues = 1000

    /// The depth of embedded resources an engine serves: the levels of correlated subqueries its SQL parser takes
    /// with a filter and a policy at each level. Measured on SQLite 3.40.1 (a parser stack fixed at 100 entries):
    /// `places → reviews → …` parses 6 deep (and a logic tree of 4 groups at the sixth level), not 7. Deep filters
    /// or policies with subqueries inside the deepest embeds can still pass what SQLite takes: that request is
    /// answered `400 PGRST100` too (`limitExceeded`), never a 500.
    public static func embedDepth(on dialect: SQLDialect) -> Int {
        switch dialect {
        case .sqlite: 6
        case .postgres: selectDepth
        }
    }

    // MARK: Errors

    /// The `400 PGRST100` of a request past `limit` of `what`; `setting` names the configuration key when it is one.
    public static func exceeded(_ what: String, limit: Int, setting: String? = nil, hint: String? = nil) -> CaravanError {
        CaravanError(.limitExceeded, "The request exceeds the limit of \(limit) \(what)",
                     details: setting.map { "The limit is the server's \($0) setting" } ?? "The limit is fixed by the server",
                     hint: hint)
    }
}

extension QueryLimits {
    /// The conditions and list values of `predicates`, counted without recursion, and refused past the limits.
    public func checkConditions(_ predicates: [Predicate]) throws(CaravanError) {
        var conditions = 0
        var listValues = 0
        var pending = predicates
        while let predicate = pending.popLast() {
            switch predicate {
            case .and(let items), .or(let items): pending.append(contentsOf: items)
            case .not(let inner): pending.append(inner)
            case .constant: continue
            case .columns: conditions += 1
            case .condition(let condition):
                var count = 1
                if case .list(let items) = condition.operand {
                    listValues += items.count
                    if condition.quantifier != nil { count = max(1, items.count) }
                }
                conditions += count
            }
        }
        guard conditions <= maxFilters else {
            throw Self.exceeded("filter conditions", limit: maxFilters, setting: "query_max_filters",
                                hint: "Filter with fewer conditions (an in.(…) list counts once)")
        }
        guard listValues <= Self.listItems else {
            throw Self.exceeded("values in in.(…) and {…} lists", limit: Self.listItems)
        }
    }

    /// The embedded resources of `items`, nested ones included, counted without recursion, and refused past the limit.
    public func checkEmbeds(_ items: [SelectItem]) throws(CaravanError) {
        var embeds = 0
        var pending = items
        while let item = pending.popLast() {
            guard case .embed(let request) = item else { continue }
            embeds += 1
            pending.append(contentsOf: request.select)
        }
        guard embeds <= maxEmbeds else {
            throw Self.exceeded("embedded resources", limit: maxEmbeds, setting: "query_max_embeds")
        }
    }
}

extension Predicate {
    /// The nesting depth of and/or/not groups (a condition is 0, `and(a,b)` 1), measured without recursion.
    public var nestingDepth: Int {
        var deepest = 0
        var pending: [(Predicate, Int)] = [(self, 0)]
        while let (predicate, depth) = pending.popLast() {
            deepest = max(deepest, depth)
            switch predicate {
            case .and(let items), .or(let items): pending.append(contentsOf: items.map { ($0, depth + 1) })
            case .not(let inner): pending.append((inner, depth + 1))
            case .condition, .constant, .columns: continue
            }
        }
        return deepest
    }
}
