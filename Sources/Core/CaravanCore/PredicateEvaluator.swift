/// Evaluates bound predicates on a row in memory with SQL's three-valued logic.
///
/// Used to check CHECK constraints before a write and (later) to filter realtime events; a differential
/// test keeps it equal to the SQL each adapter generates.
extension BoundPredicate {
    /// `true`, `false`, or `nil` for SQL's unknown. `value(column)` returns `.null` for absent columns.
    /// `subquery` answers `EXISTS` tests (table, predicate over that table's columns only); without it they are unknown.
    public func evaluate(_ value: (String) -> Value, subquery: ((TableSchema, BoundPredicate) -> Bool?)? = nil) -> Bool? {
        switch self {
        case .compareColumns(let left, let op, let right):
            return BoundPredicate.compare(column: left, op, value: value(right.name)).evaluate(value, subquery: subquery)
        case .exists(let table, let inner), .existsUnaliased(let table, let inner):
            guard let subquery else { return nil }
            return subquery(table, inner.substitutingOuterColumns(value))
        case .inSubquery(let column, let table, let selecting, let inner):
            let outer = value(column.name)
            guard let subquery, !outer.isNull else { return nil }
            return subquery(table, .and([inner, .compare(selecting, .eq, outer)]))
        case .constant(let b): return b
        case .and(let items):
            return Self.combine(items, deciding: false) { $0.evaluate(value, subquery: subquery) }
        case .or(let items):
            return Self.combine(items, deciding: true) { $0.evaluate(value, subquery: subquery) }
        case .not(let inner):
            return inner.evaluate(value, subquery: subquery).map { !$0 }
        case .compare(let column, let op, let operand):
            return Self.compareValues(value(column.name), op, operand)
        case .like(let column, let pattern, let caseInsensitive):
            guard case .text(let text) = value(column.name) else { return nil }
            return LikePattern.matches(text, pattern: pattern, caseInsensitive: caseInsensitive)
        case .regex(let column, let pattern, let caseInsensitive):
            guard case .text(let text) = value(column.name) else { return nil }
            do {
                return try RegexCache.shared.matches(text, pattern: pattern, caseInsensitive: caseInsensitive)
            } catch {
                return nil // binding already compiled the pattern; unreachable in practice
            }
        case .textSearch(let column, let query, _):
            guard case .text(let text) = value(column.name) else { return nil }
            return query.matches(text: text)
        case .isNull(let column):
            return value(column.name).isNull
        case .isBool(let column, let expected):
            guard case .bool(let b) = value(column.name) else { return false }
            return b == expected
        case .inList(let column, let values):
            let current = value(column.name)
            guard !current.isNull else { return nil }
            var sawNull = false
            for candidate in values {
                if candidate.isNull { sawNull = true; continue }
                if Self.compare(current, candidate) == 0 { return true }
            }
            return sawNull ? nil : false
        case .array(let column, let op, let operand):
            guard case .json(let text) = value(column.name),
                  case .array(let elements)? = try? JSONParser.parse(text) else { return nil }
            let stored = Set(elements.compactMap { if case .string(let s) = $0 { s } else { nil } })
            let given = Set(operand.compactMap { if case .text(let s) = $0 { s } else { nil } })
            switch op {
            case .contains: return given.isSubset(of: stored)
            case .containedBy: return stored.isSubset(of: given)
            case .overlaps: return !stored.isDisjoint(with: given)
            }
        }
    }

    /// AND (`deciding` false) or OR (`deciding` true) with SQL's three-valued logic: the deciding value wins,
    /// else any unknown makes the whole unknown.
    static func combine(_ items: [BoundPredicate], deciding: Bool, _ evaluate: (BoundPredicate) -> Bool?) -> Bool? {
        var sawUnknown = false
        for item in items {
            switch evaluate(item) {
            case .some(deciding): return deciding
            case .none: sawUnknown = true
            case .some: continue
            }
        }
        return sawUnknown ? nil : !deciding
    }

    /// Replaces comparisons with outer-row columns (those with a qualifier) by comparisons with their values.
    func substitutingOuterColumns(_ value: (String) -> Value) -> BoundPredicate {
        switch self {
        case .and(let items): return .and(items.map { $0.substitutingOuterColumns(value) })
        case .or(let items): return .or(items.map { $0.substitutingOuterColumns(value) })
        case .not(let inner): return .not(inner.substitutingOuterColumns(value))
        case .compareColumns(let left, let op, let right) where right.qualifier != nil:
            // Typed for the inner column: text from an outer text column (a channel name) that is no valid value of
            // it (not a uuid) matches nothing, rather than reaching SQL as a value it cannot compare.
            var outer = value(right.name)
            if case .text(let text) = outer, left.type != .text { outer = (try? left.type.value(fromText: text)) ?? .null }
            return .compare(left, op, outer)
        default: return self
        }
    }

    static func compare(column: Column, _ op: ComparisonOperator, value: Value) -> BoundPredicate {
        .compare(column, op, value)
    }

    /// Compares two values with SQL semantics; nil is unknown.
    public static func compareValues(_ a: Value, _ op: ComparisonOperator, _ b: Value) -> Bool? {
        if op == .isDistinct { return !sqlEqual(a, b, nullsEqual: true) }
        guard !a.isNull, !b.isNull, let order = compare(a, b) else { return nil }
        switch op {
        case .eq: return order == 0
        case .neq: return order != 0
        case .gt: return order > 0
        case .gte: return order >= 0
        case .lt: return order < 0
        case .lte: return order <= 0
        case .isDistinct: return nil
        }
    }

    static func sqlEqual(_ a: Value, _ b: Value, nullsEqual: Bool) -> Bool {
        if a.isNull || b.isNull { return nullsEqual && a.isNull && b.isNull }
        return compare(a, b) == 0
    }

    /// Orders two non-null values of compatible kinds: -1, 0, 1, or nil when incomparable.
    public static func compare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case let (.integer(x), .integer(y)): return x < y ? -1 : (x == y ? 0 : 1)
        case let (.double(x), .double(y)): return x < y ? -1 : (x == y ? 0 : 1)
        case let (.integer(x), .double(y)): return Double(x) < y ? -1 : (Double(x) == y ? 0 : 1)
        case let (.double(x), .integer(y)): return x < Double(y) ? -1 : (x == Double(y) ? 0 : 1)
        case let (.bool(x), .bool(y)): return x == y ? 0 : (!x ? -1 : 1)
        case let (.text(x), .text(y)), let (.json(x), .json(y)):
            if x == y { return 0 }
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1
        default: return nil
        }
    }
}
