/// A type cast in `select` (`col::text`).
public enum SelectCast: String, Sendable, Hashable {
    case text, int4, int8, float8, numeric, bool, jsonb

    /// The cast of `name` as PostgreSQL spells it, its aliases included (`int`, `integer`, `bigint`, `boolean`, `json`).
    public init?(named name: String) {
        let aliases: [String: SelectCast] = ["int": .int4, "integer": .int4, "bigint": .int8, "boolean": .bool, "json": .jsonb]
        guard let cast = SelectCast(rawValue: name) ?? aliases[name] else { return nil }
        self = cast
    }
}

/// One item of `select=`.
public enum SelectItem: Sendable, Hashable {
    /// `*`: every column in declaration order.
    case star
    /// `[alias:]column[::cast]`.
    case column(name: String, alias: String?, cast: SelectCast?)
    /// `[alias:]table[!hint][!inner|!left](items)`: rows of a related table, embedded (PostgREST resource embedding).
    case embed(EmbedRequest)
    /// `count()`, `col.sum()`, …: an aggregate over the matching rows, grouped by the other selected columns.
    case aggregate(AggregateRequest)
}

/// An embedded resource of a `select=`: the related table, how its key in the response is named, which foreign key
/// to follow when there are several (`!hint`: a column of the key or the other table's name) and whether parent rows
/// without a visible related row are dropped (`!inner`).
public struct EmbedRequest: Sendable, Hashable {
    public var table: String
    public var alias: String?
    public var hint: String?
    public var inner: Bool
    /// `...table(cols)`: the related row's columns become the parent's own (to-one relationships only).
    public var spread: Bool
    public var select: [SelectItem]

    public init(table: String, alias: String? = nil, hint: String? = nil, inner: Bool = false, spread: Bool = false, select: [SelectItem] = [.star]) {
        self.table = table
        self.alias = alias
        self.hint = hint
        self.inner = inner
        self.spread = spread
        self.select = select
    }

    /// The key of the embedded value in each parent row, and the prefix of its query parameters.
    public var name: String { alias ?? table }
}

/// Sort direction.
public enum SortDirection: Sendable, Hashable { case ascending, descending }

/// Where NULLs go in an order term.
public enum NullsPlacement: Sendable, Hashable { case first, last }

/// One `order=` term.
public struct OrderTerm: Sendable, Hashable {
    public let column: String
    public let direction: SortDirection
    /// Explicit placement; nil means Postgres' default (last for ascending, first for descending).
    public let nulls: NullsPlacement?

    public init(column: String, direction: SortDirection = .ascending, nulls: NullsPlacement? = nil) {
        self.column = column
        self.direction = direction
        self.nulls = nulls
    }

    /// The placement that applies, with Postgres' defaults filled in.
    public var effectiveNulls: NullsPlacement {
        nulls ?? (direction == .ascending ? .last : .first)
    }
}

/// A parsed PostgREST read request: select, filters, order and paging. Built once at the edge.
public struct Query: Sendable, Hashable {
    public var select: [SelectItem]
    /// Every top-level filter and logic tree, ANDed together.
    public var filters: [Predicate]
    public var order: [OrderTerm]
    public var limit: Int?
    public var offset: Int?
    /// The filters, order and page of embedded resources (`messages.is_read=eq.false`, `messages.order=…`,
    /// `messages.limit=20`), by the embed's path (`messages`, `messages.author` for a nested one).
    public var embedded: [String: Query]

    public init(select: [SelectItem] = [.star], filters: [Predicate] = [], order: [OrderTerm] = [], limit: Int? = nil, offset: Int? = nil,
                embedded: [String: Query] = [:]) {
        self.select = select
        self.filters = filters
        self.order = order
        self.limit = limit
        self.offset = offset
        self.embedded = embedded
    }

    /// The filters as one predicate.
    public var filter: Predicate {
        switch filters.count {
        case 0: .constant(true)
        case 1: filters[0]
        default: .and(filters)
        }
    }
}

extension Value {
    /// The value converted as a `select=col::cast` asks.
    public func casting(to cast: SelectCast) -> Value {
        switch (cast, self) {
        case (_, .null): return .null
        case (.text, .text(let s)): return .text(s)
        case (.text, .json(let s)): return .text(s)
        case (.text, .integer(let i)): return .text(String(i))
        case (.text, .double(let d)):
            var writer = JSONWriter()
            writer.writeNumber(d)
            return .text(writer.string)
        case (.text, .bool(let b)): return .text(b ? "true" : "false")
        case (.int4, .double(let d)), (.int8, .double(let d)): return .integer(Int64(d.rounded(.toNearestOrEven)))
        case (.int4, .bool(let b)), (.int8, .bool(let b)): return .integer(b ? 1 : 0)
        case (.int4, .text(let s)), (.int8, .text(let s)): return Int64(s).map(Value.integer) ?? self
        case (.float8, .integer(let i)), (.numeric, .integer(let i)): return .double(Double(i))
        case (.float8, .text(let s)), (.numeric, .text(let s)): return Double(s).map(Value.double) ?? self
        case (.bool, .integer(let i)): return .bool(i != 0)
        case (.jsonb, .text(let s)): return .json(JSONValue.string(s).jsonText)
        default: return self
        }
    }
}
