import CaravanCore
import Foundation
import PostgresNIO

/// Builds PostgreSQL text from Caravan's typed values. Identifiers come only from the schema model and are quoted;
/// values are bound as parameters (`$1`, `$2`, … cast to the column's type), except in DDL (CHECK constraints,
/// partial indexes), where literals are inlined and quoted.
struct PostgresSQL {
    enum LiteralMode { case bind, inline }

    var text = ""
    var binds = PostgresBindings()
    let mode: LiteralMode

    init(mode: LiteralMode = .bind) { self.mode = mode }

    /// Lists longer than this are sent as one JSON array parameter instead of one parameter per value.
    static let maximumInlineList = 100

    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A string literal for DDL (`standard_conforming_strings` is on since Postgres 9.1: only `'` needs doubling).
    static func quoteLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The physical Postgres type of a column type.
    static func typeName(_ type: ColumnType) -> String {
        switch type {
        case .text: "text"
        case .integer: "int8"
        case .double: "float8"
        case .decimal(let precision, let scale): "numeric(\(precision),\(scale))"
        case .boolean: "boolean"
        case .uuid: "uuid"
        case .timestamp: "timestamptz"
        case .date: "date"
        case .json: "jsonb"
        case .textArray: "text[]"
        }
    }

    /// The type a bound parameter is cast to (precision is left to the column).
    private static func castName(_ type: ColumnType) -> String {
        if case .decimal = type { return "numeric" }
        return typeName(type)
    }

    /// The expression reading `column` as Caravan values come back from SQLite: canonical UTC timestamp text,
    /// lowercase uuid text, dates as `YYYY-MM-DD`, numerics as float8, JSON and arrays as JSON text.
    static func output(_ column: CaravanCore.Column) -> String {
        let name = reference(column)
        switch column.type {
        case .text, .integer, .double, .boolean: return name
        case .decimal: return "\(name)::float8"
        case .uuid: return "\(name)::text"
        case .timestamp: return "to_char(\(name) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
        case .date: return "to_char(\(name), 'YYYY-MM-DD')"
        case .json: return "\(name)::text"
        case .textArray: return "to_jsonb(\(name))::text"
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
        case .isDistinct: "IS DISTINCT FROM"
        }
    }

    /// Appends the next parameter placeholder for `value`, bound with its natural Postgres type.
    private mutating func bind(_ value: Value) {
        switch value {
        case .null: binds.appendNull()
        case .bool(let b): binds.append(b)
        case .integer(let i): binds.append(i)
        case .double(let d): binds.append(d)
        case .text(let s), .json(let s): binds.append(s)
        }
        text += "$\(binds.count)"
    }

    /// `value` as a `type` expression: a cast parameter, or a quoted literal in DDL.
    mutating func value(_ value: Value, as type: ColumnType) {
        if case .null = value {
            text += "NULL::\(Self.castName(type))"
            return
        }
        if case .bool(let b) = value, type == .boolean {
            // Booleans are inlined (never user text): `"is_active" = TRUE` then matches partial indexes' WHERE.
            text += b ? "TRUE" : "FALSE"
            return
        }
        switch mode {
        case .bind:
            if type == .textArray {
                text += "ARRAY(SELECT jsonb_array_elements_text("
                bind(value)
                text += "::jsonb))"
            } else {
                bind(value)
                text += "::" + Self.castName(type)
            }
        case .inline:
            text += Self.literal(value, as: type)
        }
    }

    /// A DDL literal: numbers and booleans bare, everything else quoted and cast.
    static func literal(_ value: Value, as type: ColumnType) -> String {
        switch value {
        case .null: return "NULL"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : quoteLiteral("\(d)") + "::float8"
        case .text(let s), .json(let s):
            if type == .textArray, case .array(let items)? = try? JSONParser.parse(s) {
                let elements = items.map { item -> String in if case .string(let e) = item { quoteLiteral(e) } else { "NULL" } }
                return "ARRAY[\(elements.joined(separator: ", "))]::text[]"
            }
            return type == .text ? quoteLiteral(s) : quoteLiteral(s) + "::" + castName(type)
        }
    }


    mutating func predicate(_ predicate: BoundPredicate) {
        switch predicate {
        case .textSearch(let column, let query, let index):
            textSearch(column, query, index: index)
        case .constant(let b):
            append(b ? "TRUE" : "FALSE")
        case .and(let items), .or(let items):
            let isAnd: Bool
            if case .and = predicate { isAnd = true } else { isAnd = false }
            if items.isEmpty {
                append(isAnd ? "TRUE" : "FALSE")
                return
            }
            append("(")
            for (i, item) in items.enumerated() {
                if i > 0 { append(isAnd ? " AND " : " OR ") }
                self.predicate(item)
            }
            append(")")
        case .not(let inner):
            append("NOT (")
            self.predicate(inner)
            append(")")
        case .compare(let column, let op, let operand):
            append("\(Self.reference(column)) \(Self.sqlOperator(op)) ")
            value(operand, as: column.type)
        case .like(let column, let pattern, let caseInsensitive):
            append("\(Self.reference(column)) \(caseInsensitive ? "ILIKE" : "LIKE") ")
            value(.text(pattern), as: .text)
        case .regex(let column, let pattern, let caseInsensitive):
            append("\(Self.reference(column)) \(caseInsensitive ? "~*" : "~") ")
            value(.text(pattern), as: .text)
        case .isNull(let column):
            append("\(Self.reference(column)) IS NULL")
        case .isBool(let column, let expected):
            append("\(Self.reference(column)) IS \(expected ? "TRUE" : "FALSE")")
        case .inList(let column, let values):
            inList(column, values)
        case .compareColumns(let left, let op, let right):
            append("\(Self.reference(left)) \(Self.sqlOperator(op)) \(Self.reference(right))")
        case .exists(let table, let inner):
            append("EXISTS (SELECT 1 FROM \(Self.quote(table.name)) AS \"caravan_subquery\" WHERE ")
            self.predicate(inner)
            append(")")
        case .array(let column, let op, let elements):
            let symbol = switch op {
            case .contains: "@>"
            case .containedBy: "<@"
            case .overlaps: "&&"
            }
            append("\(Self.reference(column)) \(symbol) ")
            value(.json(Self.jsonArray(elements)), as: .textArray)
        }
    }

    /// `column IN (…)`: one parameter per value for short lists, one JSON array parameter for long ones.
    private mutating func inList(_ column: CaravanCore.Column, _ values: [Value]) {
        let name = Self.reference(column)
        guard mode == .bind, values.count > Self.maximumInlineList else {
            append("\(name) IN (")
            for (i, v) in values.enumerated() {
                if i > 0 { append(", ") }
                value(v, as: column.type)
            }
            append(")")
            return
        }
        append("\(name) IN (SELECT (element)::\(Self.castName(column.type)) FROM jsonb_array_elements_text(")
        bind(.json(Self.jsonArray(values)))
        append("::jsonb) AS element)")
    }

    /// A JSON array of the values' text forms (NULL stays null), cast back by the reader.
    static func jsonArray(_ values: [Value]) -> String {
        JSONValue.array(values.map { value -> JSONValue in
            switch value {
            case .null: .null
            case .bool(let b): .string(b ? "true" : "false")
            case .integer(let i): .string(String(i))
            case .double(let d): .string("\(d)")
            case .text(let s), .json(let s): .string(s)
            }
        }).jsonText
    }
}
