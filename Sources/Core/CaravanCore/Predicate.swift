/// A PostgREST filter operator.
public enum FilterOperator: String, Sendable, Hashable, CaseIterable {
    case eq, neq, gt, gte, lt, lte
    case like, ilike, match, imatch
    case `is`
    case isdistinct
    case `in`
    case cs, cd, ov
    case fts, plfts, phfts, wfts
    case sl, sr, nxl, nxr, adj
}

/// The `(any)` / `(all)` modifier of an operator.
public enum Quantifier: String, Sendable, Hashable {
    case any, all
}

/// The operand of `is`.
public enum IsValue: String, Sendable, Hashable {
    case null
    case notNull = "not_null"
    case `true`
    case `false`
    case unknown
}

/// A filter operand as written by the client, not yet typed by a column.
public enum Operand: Sendable, Hashable {
    /// One value, verbatim.
    case scalar(String)
    /// `in.(a,b,"c,d")` elements, or `{a,b}` elements of an any/all modifier or array operator.
    /// `nil` is an unquoted NULL element of a `{…}` array.
    case list([String?])
    /// The operand of `is`.
    case isValue(IsValue)
}

/// One `column.op.value` test.
public struct Condition: Sendable, Hashable {
    public let column: String
    public let op: FilterOperator
    public let quantifier: Quantifier?
    public let operand: Operand
    /// The language of an fts operator, such as `english` in `fts(english)`.
    public let language: String?

    public init(column: String, op: FilterOperator, quantifier: Quantifier? = nil, operand: Operand, language: String? = nil) {
        self.column = column
        self.op = op
        self.quantifier = quantifier
        self.operand = operand
        self.language = language
    }
}

/// A boolean expression over a row's columns: PostgREST filters and logic trees, CHECK constraints,
/// index conditions and (later) policies share it.
public indirect enum Predicate: Sendable, Hashable {
    case condition(Condition)
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)
    case constant(Bool)
    /// One column against another column of the same row (`user1_id < user2_id`): CHECK constraints only.
    case columns(String, ComparisonOperator, String)

    // Small builders for schema declarations.
    public static func column(_ name: String, _ op: FilterOperator, _ value: String) -> Predicate {
        .condition(Condition(column: name, op: op, operand: .scalar(value)))
    }
    public static func isNull(_ name: String) -> Predicate {
        .condition(Condition(column: name, op: .is, operand: .isValue(.null)))
    }
    public static func isTrue(_ name: String) -> Predicate {
        .condition(Condition(column: name, op: .is, operand: .isValue(.true)))
    }
    public static func between(_ name: String, _ low: String, _ high: String) -> Predicate {
        .and([.column(name, .gte, low), .column(name, .lte, high)])
    }
    public static func oneOf(_ name: String, _ values: [String]) -> Predicate {
        .condition(Condition(column: name, op: .in, operand: .list(values)))
    }

    /// Every column the predicate mentions.
    public var columns: [String] {
        switch self {
        case .condition(let c): [c.column]
        case .and(let items), .or(let items): items.flatMap(\.columns)
        case .not(let inner): inner.columns
        case .constant: []
        case .columns(let left, _, let right): [left, right]
        }
    }
}
