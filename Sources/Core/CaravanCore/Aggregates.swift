/// An aggregate function of `select` (PostgREST 12 with `db-aggregates-enabled`): `count()`, `col.count()`,
/// `col.sum()`, `col.avg()`, `col.min()`, `col.max()`.
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    case count, sum, avg, min, max
}

/// `[alias:]count()[::cast]` or `[alias:]column[::cast].function()[::cast]` in `select=`.
public struct AggregateRequest: Sendable, Hashable {
    public var function: AggregateFunction
    /// The column (JSON paths allowed); nil for `count()`, which counts rows.
    public var column: String?
    public var alias: String?
    /// The cast of the input, applied before aggregating (`col::int.sum()`).
    public var inputCast: SelectCast?
    /// The cast of the result (`col.sum()::text`).
    public var resultCast: SelectCast?

    public init(function: AggregateFunction, column: String? = nil, alias: String? = nil, inputCast: SelectCast? = nil, resultCast: SelectCast? = nil) {
        self.function = function
        self.column = column
        self.alias = alias
        self.inputCast = inputCast
        self.resultCast = resultCast
    }

    /// The key of the result in each row: the alias, else the function's name (`count`, `sum`, …) as PostgREST.
    public var name: String { alias ?? function.rawValue }
}

/// An aggregate resolved against a table: what the adapters render in place of a column. The output column's type
/// is the result's (`count` an integer, `sum` of integers an integer, `avg` a double, `min`/`max` the input's).
public struct ResolvedAggregate: Sendable, Hashable {
    public let function: AggregateFunction
    /// The aggregated column; nil for `count()` (every row).
    public let input: Column?
    public let inputCast: SelectCast?

    /// The type of the input after its cast.
    public var inputType: ColumnType? {
        guard let input else { return nil }
        return inputCast.map(Self.type(of:)) ?? input.type
    }

    /// The column type a cast produces.
    static func type(of cast: SelectCast) -> ColumnType {
        switch cast {
        case .text: .text
        case .int4, .int8: .integer
        case .float8, .numeric: .double
        case .bool: .boolean
        case .jsonb: .json
        }
    }

    /// The type of the result; PostgreSQL's 42883 when the function does not apply to the input's type.
    func resultType() throws(CaravanError) -> ColumnType {
        guard let type = inputType else { return .integer }
        switch (function, type) {
        case (.count, _): return .integer
        case (.sum, .integer): return .integer
        case (.sum, .double), (.sum, .decimal), (.avg, .integer), (.avg, .double), (.avg, .decimal): return .double
        case (.min, .integer), (.min, .double), (.min, .decimal), (.min, .text), (.min, .timestamp), (.min, .date),
             (.max, .integer), (.max, .double), (.max, .decimal), (.max, .text), (.max, .timestamp), (.max, .date):
            return type
        default:
            throw CaravanError(.undefinedFunction, "function \(function.rawValue)(\(type.postgresName)) does not exist",
                               hint: "No function matches the given name and argument types. You might need to add explicit type casts.")
        }
    }
}

extension ReadPlan {
    /// The output of an aggregate of `select=`: its function resolved against `table`, named as PostgREST names it.
    static func aggregateOutput(_ request: AggregateRequest, table: TableSchema) throws(CaravanError) -> OutputColumn {
        let input = try request.column.map { name throws(CaravanError) in try table.resolveColumn(name) }
        let aggregate = ResolvedAggregate(function: request.function, input: input, inputCast: request.inputCast)
        return OutputColumn(name: request.name, column: Column(request.name, try aggregate.resultType()), cast: request.resultCast, aggregate: aggregate)
    }

    /// PGRST123 when `items` (embedded resources' included) use an aggregate and aggregates are off.
    static func requireAggregatesAllowed(_ items: [SelectItem], allowed: Bool) throws(CaravanError) {
        guard !allowed, containsAggregate(items) else { return }
        throw CaravanError(.aggregatesNotAllowed, "Use of aggregate functions is not allowed")
    }

    static func containsAggregate(_ items: [SelectItem]) -> Bool {
        items.contains { item in
            switch item {
            case .aggregate: true
            case .embed(let request): containsAggregate(request.select)
            case .star, .column: false
            }
        }
    }

    /// The implicit GROUP BY of a select with aggregates: every output that is not aggregated (none without
    /// aggregates). An embedded resource may only read grouped columns of the row (PostgreSQL's 42803).
    static func grouping(_ outputs: [OutputColumn], table: TableSchema) throws(CaravanError) -> [Column] {
        guard outputs.contains(where: { $0.aggregate != nil }) else { return [] }
        let grouped = outputs.filter { $0.aggregate == nil && $0.embed == nil }.map(\.column)
        for embed in outputs.compactMap(\.embed) {
            for column in embed.filter.outerColumns(of: table.name) where !grouped.contains(where: { $0.name == column.name && $0.jsonPath == nil }) {
                throw groupingError(table: table, column: column.name)
            }
        }
        return grouped
    }

    /// The order of a grouped read: the terms asked for, each on a grouped column (42803 otherwise), else the
    /// grouping columns in order, so the groups come back alike from every engine.
    static func groupedOrder(_ order: [ResolvedOrder], grouping: [Column], table: TableSchema) throws(CaravanError) -> [ResolvedOrder] {
        for term in order where !grouping.contains(term.column) {
            throw groupingError(table: table, column: term.column.name)
        }
        return order.isEmpty ? grouping.map { ResolvedOrder(column: $0, direction: .ascending, nulls: .last) } : order
    }

    static func groupingError(table: TableSchema, column: String) -> CaravanError {
        CaravanError(.groupingError, "column \"\(table.name).\(column)\" must appear in the GROUP BY clause or be used in an aggregate function",
                     hint: "Select \(column) too (every selected column that is not aggregated is grouped by)")
    }
}

extension BoundPredicate {
    /// The columns of the row of `table` that this predicate of a subquery reads (qualified by the table's name).
    func outerColumns(of table: String) -> [Column] {
        switch self {
        case .constant: return []
        case .and(let items), .or(let items): return items.flatMap { $0.outerColumns(of: table) }
        case .not(let inner), .exists(_, let inner), .existsUnaliased(_, let inner): return inner.outerColumns(of: table)
        case .inSubquery(let column, _, _, let inner): return [column].filter { $0.qualifier == table } + inner.outerColumns(of: table)
        case .compare(let column, _, _), .like(let column, _, _), .regex(let column, _, _), .isNull(let column), .isBool(let column, _),
             .inList(let column, _), .array(let column, _, _), .textSearch(let column, _, _):
            return [column].filter { $0.qualifier == table }
        case .compareColumns(let left, _, let right): return [left, right].filter { $0.qualifier == table }
        }
    }
}
