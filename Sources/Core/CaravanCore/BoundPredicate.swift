package import Foundation
import Synchronization

/// A comparison between a column and a typed value.
public enum ComparisonOperator: Sendable, Hashable {
    case eq, neq, gt, gte, lt, lte, isDistinct
}

/// Array containment operators (`cs`, `cd`, `ov`).
public enum ArrayOperator: Sendable, Hashable {
    case contains, containedBy, overlaps
}

/// A predicate whose columns are resolved and whose operands are typed: what adapters compile to SQL and
/// what the in-memory evaluator runs. Produced only by `Predicate.bound(to:)`.
public indirect enum BoundPredicate: Sendable, Hashable {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(Column, ComparisonOperator, Value)
    /// A LIKE pattern in SQL syntax (`%`, `_`, `\` escapes).
    case like(Column, pattern: String, caseInsensitive: Bool)
    case regex(Column, pattern: String, caseInsensitive: Bool)
    case isNull(Column)
    case isBool(Column, Bool)
    case inList(Column, [Value])
    /// Elements are `.text` or `.null`.
    case array(Column, ArrayOperator, [Value])
    /// Column against column (inside a subquery, the right one may be the outer row's, with a `qualifier`).
    case compareColumns(Column, ComparisonOperator, Column)
    /// `EXISTS (SELECT 1 FROM table WHERE predicate)`.
    case exists(TableSchema, BoundPredicate)
    /// `EXISTS` over a table left under its own name (no alias): the predicate may name that table's columns
    /// qualified by it, as its policies do. The junction of a many-to-many embedding, never the outer row's table.
    case existsUnaliased(TableSchema, BoundPredicate)
    /// `column IN (SELECT selecting FROM table WHERE predicate)`: a semi-join the engine may drive from the subquery
    /// (an index range on another table), where a correlated `EXISTS` probes once per outer row.
    case inSubquery(Column, TableSchema, selecting: Column, where: BoundPredicate)
    /// Full-text match of a text column (the `fts` family of operators). `index` names the table's full-text index
    /// when it covers the column; otherwise adapters evaluate the folded tokens directly (no stemming).
    case textSearch(Column, TextQuery, index: FullTextIndexReference?)

    /// The same predicate with constant branches folded (`x AND true` → `x`, `x OR true` → `true`).
    public var simplified: BoundPredicate {
        switch self {
        case .and(let items):
            var kept: [BoundPredicate] = []
            for item in items.map(\.simplified) {
                if case .constant(false) = item { return .constant(false) }
                if case .constant(true) = item { continue }
                kept.append(item)
            }
            return kept.isEmpty ? .constant(true) : (kept.count == 1 ? kept[0] : .and(kept))
        case .or(let items):
            var kept: [BoundPredicate] = []
            for item in items.map(\.simplified) {
                if case .constant(true) = item { return .constant(true) }
                if case .constant(false) = item { continue }
                kept.append(item)
            }
            return kept.isEmpty ? .constant(false) : (kept.count == 1 ? kept[0] : .or(kept))
        case .not(let inner):
            let folded = inner.simplified
            if case .constant(let b) = folded { return .constant(!b) }
            return .not(folded)
        default:
            return self
        }
    }

    /// Whether the predicate needs other tables (an `EXISTS` subquery) to be evaluated.
    public var containsSubquery: Bool {
        switch self {
        case .exists, .existsUnaliased, .inSubquery: true
        case .and(let items), .or(let items): items.contains { $0.containsSubquery }
        case .not(let inner): inner.containsSubquery
        default: false
        }
    }

    /// The columns of the guarded row the predicate reads (outer columns of subqueries included).
    public var columnNames: Set<String> {
        switch self {
        case .constant: []
        case .and(let items), .or(let items): items.reduce(into: Set<String>()) { $0.formUnion($1.columnNames) }
        case .not(let inner): inner.columnNames
        case .compare(let column, _, _), .like(let column, _, _), .regex(let column, _, _), .isNull(let column),
             .isBool(let column, _), .inList(let column, _), .array(let column, _, _), .textSearch(let column, _, _),
             .inSubquery(let column, _, _, _):
            [column.name]
        case .compareColumns(let left, _, let right): [left.name, right.name]
        case .exists(_, let inner), .existsUnaliased(_, let inner): inner.columnNames
        }
    }

    /// Both predicates must hold.
    public static func both(_ a: BoundPredicate, _ b: BoundPredicate) -> BoundPredicate {
        BoundPredicate.and([a, b]).simplified
    }
}

extension Predicate {
    /// Resolves columns against `table`, checks that each operator applies to its column's type, and types
    /// every operand. Throws 42703 / PGRST127 / 22P02-style errors, and `limitExceeded` for a tree nested deeper than
    /// `QueryLimits.predicateDepth` (measured first, without recursion), so that no bound predicate is deeper than
    /// what the evaluator and the SQL serializer walk.
    public func bound(to table: TableSchema) throws(CaravanError) -> BoundPredicate {
        guard nestingDepth <= QueryLimits.predicateDepth else {
            throw QueryLimits.exceeded("levels of nested and/or/not in a filter", limit: QueryLimits.predicateDepth)
        }
        return try boundChecked(to: table)
    }

    /// `bound(to:)` of a tree whose depth is checked.
    private func boundChecked(to table: TableSchema) throws(CaravanError) -> BoundPredicate {
        switch self {
        case .constant(let b): return .constant(b)
        case .and(let items):
            var bound: [BoundPredicate] = []
            for item in items { bound.append(try item.boundChecked(to: table)) }
            return .and(bound)
        case .or(let items):
            var bound: [BoundPredicate] = []
            for item in items { bound.append(try item.boundChecked(to: table)) }
            return .or(bound)
        case .not(let inner): return .not(try inner.boundChecked(to: table))
        case .condition(let condition): return try condition.bound(to: table)
        case .columns(let left, let op, let right): return .compareColumns(try table.requireColumn(left), op, try table.requireColumn(right))
        }
    }
}

extension Condition {
    func bound(to table: TableSchema) throws(CaravanError) -> BoundPredicate {
        let column = try table.resolveColumn(self.column)
        guard Self.applies(op, to: column.type) else {
            throw CaravanError(
                .unsupportedOperator,
                "operator \(op.rawValue) is not supported on column \(table.name).\(column.name) of type \(column.type.postgresName)",
                hint: [.fts, .plfts, .phfts, .wfts].contains(op) ? "Full-text search operators apply to text columns" : nil
            )
        }
        if let quantifier {
            guard case .list(let items) = operand else { throw QueryParser.filterError(self.column, details: "expecting a {…} list") }
            var parts: [BoundPredicate] = []
            for item in items {
                guard let item else { parts.append(.constant(false)); continue }
                parts.append(try single(column, table: table, text: item))
            }
            return quantifier == .any ? .or(parts) : .and(parts)
        }
        switch op {
        case .is: return try boundIs(column, table: table)
        case .in: return try boundIn(column)
        case .fts, .plfts, .phfts, .wfts: return try boundTextSearch(column, table: table)
        case .cs, .cd, .ov: return try boundArray(column)
        default:
            guard case .scalar(let text) = operand else { throw QueryParser.filterError(self.column, details: "expecting a value") }
            return try single(column, table: table, text: text)
        }
    }

    /// `is.null`, `is.not_null`, and `is.true|false|unknown` on a boolean column.
    private func boundIs(_ column: Column, table: TableSchema) throws(CaravanError) -> BoundPredicate {
        guard case .isValue(let isValue) = operand else { throw QueryParser.filterError(self.column, details: "bad is operand") }
        switch isValue {
        case .null: return .isNull(column)
        case .notNull: return .not(.isNull(column))
        case .true, .false, .unknown:
            guard column.type == .boolean else {
                throw CaravanError(.unsupportedOperator, "operator is.\(isValue.rawValue) is not supported on column \(table.name).\(column.name) of type \(column.type.postgresName)")
            }
            if isValue == .unknown { return .isNull(column) }
            return .isBool(column, isValue == .true)
        }
    }

    /// `in.(a,b,…)`: an empty list matches nothing.
    private func boundIn(_ column: Column) throws(CaravanError) -> BoundPredicate {
        guard case .list(let items) = operand else { throw QueryParser.filterError(self.column, details: "expecting a list") }
        if items.isEmpty { return .constant(false) }
        var values: [Value] = []
        for item in items {
            guard let item else { values.append(.null); continue }
            values.append(try column.type.value(fromText: item))
        }
        return .inList(column, values)
    }

    /// `fts`, `plfts`, `phfts`, `wfts`: through the table's full-text index when it covers the column.
    private func boundTextSearch(_ column: Column, table: TableSchema) throws(CaravanError) -> BoundPredicate {
        guard case .scalar(let text) = operand else { throw QueryParser.filterError(self.column, details: "expecting a value") }
        try Self.checkTextSearchConfiguration(language)
        let query: TextQuery
        switch op {
        case .fts: query = try TextQuery.tsquery(text)
        case .plfts: query = TextQuery.allTokens(of: text)
        case .phfts: query = TextQuery.phrase(of: text)
        default: query = TextQuery.websearch(text)
        }
        let index = table.search.flatMap { search in
            search.fullTextColumns.contains(column.name) && table.primaryKey.count == 1
                ? FullTextIndexReference(table: table.name, primaryKey: table.primaryKey[0]) : nil
        }
        return .textSearch(column, query, index: index)
    }

    /// `cs`, `cd`, `ov` with a `{…}` list or a JSON array literal.
    private func boundArray(_ column: Column) throws(CaravanError) -> BoundPredicate {
        let items: [String?]
        switch operand {
        case .list(let list): items = list
        case .scalar(let text):
            guard case .json(let canonical) = try column.type.value(fromText: text),
                  case .array(let elements) = try JSONParser.parse(canonical) else {
                throw CaravanError(.invalidValue, "malformed array literal: \"\(text)\"")
            }
            items = elements.map { if case .string(let s) = $0 { s } else { nil } }
        case .isValue: throw QueryParser.filterError(self.column, details: "bad operand")
        }
        let arrayOp: ArrayOperator = op == .cs ? .contains : (op == .cd ? .containedBy : .overlaps)
        return .array(column, arrayOp, items.map { $0.map(Value.text) ?? .null })
    }

    /// One comparison, LIKE or regex test against one operand text.
    private func single(_ column: Column, table: TableSchema, text: String) throws(CaravanError) -> BoundPredicate {
        switch op {
        case .eq: return .compare(column, .eq, try column.type.value(fromText: text))
        case .neq: return .compare(column, .neq, try column.type.value(fromText: text))
        case .gt: return .compare(column, .gt, try column.type.value(fromText: text))
        case .gte: return .compare(column, .gte, try column.type.value(fromText: text))
        case .lt: return .compare(column, .lt, try column.type.value(fromText: text))
        case .lte: return .compare(column, .lte, try column.type.value(fromText: text))
        case .isdistinct: return .compare(column, .isDistinct, try column.type.value(fromText: text))
        case .like, .ilike:
            let pattern = text.replacingOccurrences(of: "*", with: "%")
            try LikePattern.validate(pattern)
            return .like(column, pattern: pattern, caseInsensitive: op == .ilike)
        case .match, .imatch:
            _ = try RegexCache.shared.regex(text, caseInsensitive: op == .imatch)
            return .regex(column, pattern: text, caseInsensitive: op == .imatch)
        default:
            throw CaravanError(.unsupportedOperator, "operator \(op.rawValue)(\(quantifier?.rawValue ?? "")) is not supported on column \(table.name).\(column.name)")
        }
    }

    static func applies(_ op: FilterOperator, to type: ColumnType) -> Bool {
        switch op {
        case .is: return true
        case .eq, .neq, .isdistinct: return true
        case .gt, .gte, .lt, .lte, .in: return type != .json && type != .textArray
        case .like, .ilike, .match, .imatch: return type == .text
        case .cs, .cd, .ov: return type == .textArray
        case .fts, .plfts, .phfts, .wfts: return type == .text
        case .sl, .sr, .nxl, .nxr, .adj: return false
        }
    }
}

extension Condition {
    /// The text-search configurations a `fts(config)` operator may name: Postgres' built-in ones. All of them search
    /// the same folded index (English words stemmed); the name selects nothing else.
    static let textSearchConfigurations: Set<String> = [
        "simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french", "german",
        "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian",
        "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish",
    ]

    static func checkTextSearchConfiguration(_ language: String?) throws(CaravanError) {
        guard let language, !textSearchConfigurations.contains(language.lowercased()) else { return }
        throw CaravanError(.undefinedObject, "text search configuration \"\(language)\" does not exist")
    }
}

/// Names a table's full-text index for a `textSearch` predicate: the table and its (single) primary-key column.
public struct FullTextIndexReference: Sendable, Hashable {
    public let table: String
    public let primaryKey: String
    public init(table: String, primaryKey: String) {
        self.table = table
        self.primaryKey = primaryKey
    }
}

/// SQL LIKE pattern helpers shared by the adapters and the evaluator.
package enum LikePattern {
    /// Postgres refuses a pattern that ends with the escape character (22025).
    static func validate(_ pattern: String) throws(CaravanError) {
        var escaped = false
        for c in pattern {
            if escaped { escaped = false } else if c == "\\" { escaped = true }
        }
        if escaped {
            throw CaravanError(.invalidEscapeSequence, "LIKE pattern must not end with escape character")
        }
    }

    /// `literal` as a LIKE pattern matching exactly it (its `%`, `_` and `\` escaped).
    package static func escaped(_ literal: String) -> String {
        var pattern = ""
        for character in literal {
            if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern
    }

    /// Matches `text` against a LIKE pattern (`%`, `_`, `\` escapes).
    package static func matches(_ text: String, pattern: String, caseInsensitive: Bool) -> Bool {
        let t = Array((caseInsensitive ? text.lowercased() : text).unicodeScalars)
        let p = Array((caseInsensitive ? pattern.lowercased() : pattern).unicodeScalars)
        // Iterative matcher with backtracking on the last %.
        var ti = 0, pi = 0
        var starP = -1, starT = 0
        func atom(_ index: Int) -> (Unicode.Scalar?, Int, Bool) { // (literal or nil for _, width, isPercent)
            let c = p[index]
            if c == "%" { return (nil, 1, true) }
            if c == "_" { return (nil, 1, false) }
            if c == "\\", index + 1 < p.count { return (p[index + 1], 2, false) }
            return (c, 1, false)
        }
        while ti < t.count {
            if pi < p.count {
                let (literal, width, isPercent) = atom(pi)
                if isPercent {
                    starP = pi; starT = ti; pi += 1; continue
                }
                if literal == nil || literal == t[ti] { ti += 1; pi += width; continue }
            }
            if starP >= 0 {
                starT += 1; ti = starT; pi = starP + 1; continue
            }
            return false
        }
        while pi < p.count, p[pi] == "%" { pi += 1 }
        return pi == p.count
    }
}

/// Compiled regular expressions, cached by pattern. Shared by the SQLite `regexp` function and the evaluator.
package final class RegexCache: Sendable {
    /// A process-wide cache of immutable compiled patterns: holding no state that affects results,
    /// sharing it is safe (this is a cache, not a service locator).
    package static let shared = RegexCache()
    private let cache = Mutex<[String: NSRegularExpression]>([:])

    package init() {}

    /// The compiled pattern; throws 2201B when it does not compile.
    package func regex(_ pattern: String, caseInsensitive: Bool) throws(CaravanError) -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "c:") + pattern
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let compiled: NSRegularExpression
        do {
            compiled = try NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : [])
        } catch {
            throw CaravanError(.invalidRegularExpression, "invalid regular expression: \(pattern.prefix(100))")
        }
        cache.withLock { cache in
            if cache.count > 1000 { cache.removeAll() }
            cache[key] = compiled
        }
        return compiled
    }

    /// Whether `text` contains a match of `pattern` (Postgres `~` semantics: unanchored search).
    package func matches(_ text: String, pattern: String, caseInsensitive: Bool) throws(CaravanError) -> Bool {
        let regex = try regex(pattern, caseInsensitive: caseInsensitive)
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return regex.firstMatch(in: text, options: [], range: range) != nil
    }
}
