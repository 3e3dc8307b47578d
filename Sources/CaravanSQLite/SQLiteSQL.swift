import Foundation
import CaravanCore
import GRDB

/// Builds SQLite SQL text from Caravan's typed values. Identifiers come only from the schema model;
/// values are bound as parameters, except in DDL (CHECK, partial indexes), where literals are inlined and quoted.
struct SQLiteSQL {
    enum LiteralMode { case bind, inline }

    var text = ""
    var arguments: [DatabaseValue] = []
    let mode: LiteralMode

    init(mode: LiteralMode = .bind) { self.mode = mode }

    static func quote(_ identifier: String) -> String {
        // Fast path: schema identifiers almost never contain a double quote.
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func literal(_ value: Value) -> String {
        switch value {
        case .null: "NULL"
        case .bool(let b): b ? "1" : "0"
        case .integer(let i): String(i)
        case .double(let d): String(d)
        case .text(let s), .json(let s): "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }

    static func databaseValue(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let b): (b ? 1 : 0).databaseValue
        case .integer(let i): i.databaseValue
        case .double(let d): d.databaseValue
        case .text(let s), .json(let s): s.databaseValue
        }
    }

    mutating func append(_ sql: String) { text += sql }

    /// A column reference: qualified by its table when it is the outer row of a subquery.
    static func reference(_ column: CaravanCore.Column) -> String {
        guard let qualifier = column.qualifier else { return quote(column.name) }
        return quote(qualifier) + "." + quote(column.name)
    }

    static func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .eq: "="
        case .neq: "<>"
        case .gt: ">"
        case .gte: ">="
        case .lt: "<"
        case .lte: "<="
        case .isDistinct: "IS NOT"
        }
    }

    mutating func value(_ value: Value) {
        switch mode {
        case .bind:
            text += "?"
            arguments.append(Self.databaseValue(value))
        case .inline:
            text += Self.literal(value)
        }
    }

    mutating func predicate(_ predicate: BoundPredicate) {
        switch predicate {
        case .constant(let b):
            append(b ? "1" : "0")
        case .and(let items), .or(let items):
            if items.isEmpty {
                if case .and = predicate { append("1") } else { append("0") }
                return
            }
            let joiner: String
            if case .and = predicate { joiner = " AND " } else { joiner = " OR " }
            append("(")
            for (i, item) in items.enumerated() {
                if i > 0 { append(joiner) }
                self.predicate(item)
            }
            append(")")
        case .not(let inner):
            append("NOT (")
            self.predicate(inner)
            append(")")
        case .compare(let column, let op, let operand):
            append(Self.quote(column.name))
            switch op {
            case .eq: append(" = ")
            case .neq: append(" <> ")
            case .gt: append(" > ")
            case .gte: append(" >= ")
            case .lt: append(" < ")
            case .lte: append(" <= ")
            case .isDistinct: append(" IS NOT ")
            }
            if case .bool(let b) = operand {
                // Booleans are inlined (never user text): `"is_active" = 1` then matches partial indexes' WHERE.
                append(b ? "1" : "0")
            } else {
                value(operand)
            }
        case .like(let column, let pattern, let caseInsensitive):
            if caseInsensitive {
                append("caravan_casefold(\(Self.quote(column.name))) LIKE ")
                value(.text(pattern.lowercased()))
                append(" ESCAPE '\\'")
            } else {
                append("\(Self.quote(column.name)) GLOB ")
                value(.text(Self.globPattern(fromLike: pattern)))
            }
        case .regex(let column, let pattern, let caseInsensitive):
            append("caravan_regexp(")
            value(.text(pattern))
            append(", \(Self.quote(column.name)), \(caseInsensitive ? 1 : 0))")
        case .isNull(let column):
            append("\(Self.quote(column.name)) IS NULL")
        case .isBool(let column, let expected):
            append("\(Self.quote(column.name)) IS \(expected ? 1 : 0)")
        case .inList(let column, let values):
            append("\(Self.quote(column.name)) IN (")
            for (i, v) in values.enumerated() {
                if i > 0 { append(", ") }
                value(v)
            }
            append(")")
        case .compareColumns(let left, let op, let right):
            append("\(Self.reference(left)) \(Self.sqlOperator(op)) \(Self.reference(right))")
        case .exists(let table, let inner):
            append("EXISTS (SELECT 1 FROM \(Self.quote(table.name)) AS \"caravan_subquery\" WHERE ")
            self.predicate(inner)
            append(")")
        case .textSearch(let column, let query, let index):
            // NULL text is unknown, as `to_tsvector(NULL) @@ q` is in Postgres (so `not.fts` leaves it out too).
            append("(CASE WHEN \(Self.quote(column.name)) IS NULL THEN NULL ELSE ")
            if let index {
                textSearch(query, column: column.name, index: index)
            } else {
                append("caravan_text_match(\(Self.quote(column.name)), ")
                value(.text(SQLiteTextSearch.encode(query)))
                append(")")
            }
            append(" END)")
        case .array(let column, let op, let elements):
            let name = Self.quote(column.name)
            append("(CASE WHEN \(name) IS NULL THEN NULL ELSE ")
            switch op {
            case .contains:
                append("NOT EXISTS (SELECT 1 FROM json_each(")
                value(.json(JSONValue.array(elements.map { if case .text(let s) = $0 { .string(s) } else { .null } }).jsonText))
                append(") AS given WHERE given.value IS NULL OR given.value NOT IN (SELECT value FROM json_each(\(name)) WHERE value IS NOT NULL))")
            case .containedBy:
                append("NOT EXISTS (SELECT 1 FROM json_each(\(name)) AS stored WHERE stored.value IS NULL OR stored.value NOT IN (SELECT value FROM json_each(")
                value(.json(JSONValue.array(elements.map { if case .text(let s) = $0 { .string(s) } else { .null } }).jsonText))
                append(") WHERE value IS NOT NULL))")
            case .overlaps:
                append("EXISTS (SELECT 1 FROM json_each(\(name)) AS stored WHERE stored.value IN (SELECT value FROM json_each(")
                value(.json(JSONValue.array(elements.map { if case .text(let s) = $0 { .string(s) } else { .null } }).jsonText))
                append(")))")
            }
            append(" END)")
        }
    }

    /// A full-text test through the table's FTS5 index: one MATCH when the query is an FTS5 expression, else the
    /// boolean combination of its parts (a lone negation becomes `NOT IN`).
    mutating func textSearch(_ query: TextQuery, column: String, index: FullTextIndexReference) {
        if let expression = FTS5Query.render(query, columns: [column]) {
            let names = SQLiteSearchNames(table: index.table)
            append("\(Self.quote(index.primaryKey)) IN (SELECT k.\(SQLiteSearchNames.keyColumn) FROM \(Self.quote(names.keys)) AS k WHERE k.rowid IN (SELECT rowid FROM \(Self.quote(names.fullText)) WHERE \(Self.quote(names.fullText)) MATCH ")
            value(.text(expression))
            append("))")
            return
        }
        switch query {
        case .and(let items), .or(let items):
            guard !items.isEmpty else { append("0"); return }
            let joiner: String
            if case .and = query { joiner = " AND " } else { joiner = " OR " }
            append("(")
            for (i, item) in items.enumerated() {
                if i > 0 { append(joiner) }
                textSearch(item, column: column, index: index)
            }
            append(")")
        case .not(let inner):
            append("NOT (")
            textSearch(inner, column: column, index: index)
            append(")")
        case .nothing, .term, .phrase:
            append("0")
        }
    }

    /// Translates a LIKE pattern (`%`, `_`, `\` escapes) into an equivalent, case-sensitive GLOB pattern.
    static func globPattern(fromLike pattern: String) -> String {
        var out = ""
        var escaped = false
        for c in pattern {
            if escaped {
                out += globLiteral(c)
                escaped = false
                continue
            }
            switch c {
            case "\\": escaped = true
            case "%": out += "*"
            case "_": out += "?"
            default: out += globLiteral(c)
            }
        }
        return out
    }

    private static func globLiteral(_ c: Character) -> String {
        switch c {
        case "*": "[*]"
        case "?": "[?]"
        case "[": "[[]"
        default: String(c)
        }
    }
}
