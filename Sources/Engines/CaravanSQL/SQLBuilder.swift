package import CaravanCore

/// One SQL statement being written for dialect `Syntax`: its text and the values bound to its placeholders.
/// Predicates are rendered here once for every engine; `Syntax` spells the parts that differ.
package struct SQLBuilder<Syntax: SQLSyntax>: Sendable {
    /// Whether values become bound parameters or (in DDL) inlined literals.
    package enum LiteralMode: Sendable { case bind, inline }

    package private(set) var text = ""
    /// The values of the placeholders, in order.
    package private(set) var bindings: [Value] = []
    package let mode: LiteralMode

    package init(mode: LiteralMode = .bind) { self.mode = mode }

    package mutating func append(_ sql: String) { text += sql }

    /// Appends the next placeholder, bound to `value`.
    package mutating func bind(_ value: Value) {
        bindings.append(value)
        text += Syntax.placeholder(bindings.count)
    }

    /// Appends `value` as a `type` expression (a placeholder, or a literal in DDL).
    package mutating func value(_ value: Value, as type: ColumnType? = nil) {
        Syntax.value(value, as: type, into: &self)
    }

    /// Binds `value` as `value(_:as:)` does and returns its text instead of appending it, to be used (even twice)
    /// later in the statement.
    package mutating func placeholder(_ value: Value, as type: ColumnType? = nil) -> String {
        let before = text.count
        self.value(value, as: type)
        let placeholder = String(text.dropFirst(before))
        text.removeLast(placeholder.count)
        return placeholder
    }

    package static func quote(_ identifier: String) -> String { Syntax.quote(identifier) }

    /// The operator of a comparison.
    package static func comparison(_ op: ComparisonOperator) -> String {
        switch op {
        case .eq: "="
        case .neq: "<>"
        case .gt: ">"
        case .gte: ">="
        case .lt: "<"
        case .lte: "<="
        case .isDistinct: Syntax.distinctOperator
        }
    }

    /// Quoted identifiers separated by commas.
    package static func list(_ identifiers: [String]) -> String { identifiers.map(Syntax.quote).joined(separator: ", ") }

    /// A column reference: qualified by its table when it is the outer row of a subquery.
    package static func reference(_ column: Column) -> String {
        let base = column.qualifier.map { Syntax.quote($0) + "." + Syntax.quote(column.name) } ?? Syntax.quote(column.name)
        guard let path = column.jsonPath else { return base }
        // Both engines spell JSON paths alike (SQLite ≥ 3.38, PostgreSQL on jsonb). Keys are letters, digits and `_`
        // (`JSONPath.parse`), so they are written as literals.
        let literals = path.steps.map { step in
            switch step {
            case .key(let key): "'" + key + "'"
            case .index(let position): String(position)
            }
        }
        let container = literals.dropLast().reduce(base) { "\($0) -> \($1)" }
        guard let last = literals.last else { return base }
        return path.asText ? Syntax.jsonPathText(container, last) : "(\(container) -> \(last))"
    }

    package mutating func predicate(_ predicate: BoundPredicate) {
        switch predicate {
        case .constant(let b):
            append(Syntax.booleanLiteral(b))
        case .and(let items):
            junction(items, joiner: " AND ", empty: true)
        case .or(let items):
            junction(items, joiner: " OR ", empty: false)
        case .not(let inner):
            // A junction of several items brings its own parentheses: one level less for the engine's parser.
            switch inner {
            case .and(let items) where items.count > 1, .or(let items) where items.count > 1:
                append("NOT ")
                self.predicate(inner)
            default:
                append("NOT (")
                self.predicate(inner)
                append(")")
            }
        case .compare(let column, let op, let operand):
            append("\(Self.reference(column)) \(Self.comparison(op)) ")
            if case .bool(let b) = operand {
                // Booleans are inlined (never user text): `"is_active" = TRUE` then matches partial indexes' WHERE.
                append(Syntax.booleanLiteral(b))
            } else {
                value(operand, as: column.type)
            }
        case .like(let column, let pattern, let caseInsensitive):
            Syntax.like(column, pattern: pattern, caseInsensitive: caseInsensitive, into: &self)
        case .regex(let column, let pattern, let caseInsensitive):
            Syntax.regex(column, pattern: pattern, caseInsensitive: caseInsensitive, into: &self)
        case .isNull(let column):
            append("\(Self.reference(column)) IS NULL")
        case .isBool(let column, let expected):
            append("\(Self.reference(column)) IS \(Syntax.booleanLiteral(expected))")
        case .inList(let column, let values):
            Syntax.inList(column, values, into: &self)
        case .compareColumns(let left, let op, let right):
            append("\(Self.reference(left)) \(Self.comparison(op)) \(Self.reference(right))")
        case .exists(let table, let inner):
            append("EXISTS (SELECT 1 FROM \(Syntax.quote(table.name)) AS \"caravan_subquery\" WHERE ")
            self.predicate(inner)
            append(")")
        case .existsUnaliased(let table, let inner):
            append("EXISTS (SELECT 1 FROM \(Syntax.quote(table.name)) WHERE ")
            self.predicate(inner)
            append(")")
        case .inSubquery(let column, let table, let selecting, let inner):
            append("\(Self.reference(column)) IN (SELECT \(Syntax.quote(selecting.name)) FROM \(Syntax.quote(table.name)) AS \"caravan_subquery\" WHERE ")
            self.predicate(inner)
            append(")")
        case .textSearch(let column, let query, let index):
            Syntax.textSearch(column, query, index: index, into: &self)
        case .array(let column, let op, let elements):
            Syntax.array(column, op, elements, into: &self)
        }
    }

    /// Items joined by AND or OR in parentheses; one item stands alone, so that a group of one (`and(and(…))`)
    /// costs the engine's parser nothing (SQLite's stack is 100 entries, and every parenthesis takes at least one).
    private mutating func junction(_ items: [BoundPredicate], joiner: String, empty: Bool) {
        guard !items.isEmpty else {
            append(Syntax.booleanLiteral(empty))
            return
        }
        if items.count == 1 { return predicate(items[0]) }
        append("(")
        for (i, item) in items.enumerated() {
            if i > 0 { append(joiner) }
            predicate(item)
        }
        append(")")
    }

    /// A predicate rendered with inlined literals (a CHECK constraint or a partial index condition).
    package static func inlined(_ predicate: BoundPredicate) -> String {
        var sql = SQLBuilder(mode: .inline)
        sql.predicate(predicate)
        return sql.text
    }
}
