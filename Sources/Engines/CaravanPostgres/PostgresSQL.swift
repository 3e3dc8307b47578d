package import CaravanCore
package import CaravanSQL
import Foundation
import PostgresNIO

/// A PostgreSQL statement being written (the shared serializer with PostgreSQL's spelling).
typealias PostgresSQL = SQLBuilder<PostgresSyntax>

/// How PostgreSQL spells what differs between engines. Values are bound as parameters (`$1`, `$2`, … cast to the
/// column's type). Physical types: text, int8, float8, numeric(p,s), boolean, uuid, timestamptz, date, jsonb (JSON),
/// text[] (text arrays). Defaults `now()` and `gen_random_uuid()`. Index kind `.arrayMembership` becomes GIN, `.textPrefix` a btree with `text_pattern_ops`.
package enum PostgresSyntax: SQLSyntax {
    package static let dialect = SQLDialect.postgres

    /// Lists longer than this are sent as one JSON array parameter instead of one parameter per value.
    static let maximumInlineList = 100

    package static func quote(_ identifier: String) -> String { doubleQuotedIdentifier(identifier) }

    /// A string literal for DDL (`standard_conforming_strings` is on since Postgres 9.1: only `'` needs doubling).
    static func quoteLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    package static func placeholder(_ position: Int) -> String { "$\(position)" }

    package static func booleanLiteral(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }

    package static let distinctOperator = "IS DISTINCT FROM"

    package static func typeName(_ type: ColumnType) -> String {
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
    static func castName(_ type: ColumnType) -> String {
        if case .decimal = type { return "numeric" }
        return typeName(type)
    }

    package static func typeCheck(_ column: Column) -> String? { nil }

    package static func defaultExpression(_ value: ColumnDefault, type: ColumnType) -> String {
        switch value {
        case .value(let v): literal(v, as: type)
        case .now: "now()"
        case .randomUUID: "gen_random_uuid()"
        }
    }

    package static func indexMethod(_ kind: IndexKind) -> String? {
        switch kind {
        case .btree, .textPrefix: ""
        case .arrayMembership: " USING gin"
        }
    }

    /// `text_pattern_ops` compares text byte by byte, so `LIKE 'abc%'` uses the index under any collation.
    package static func indexOperatorClass(_ kind: IndexKind) -> String {
        kind == .textPrefix ? " text_pattern_ops" : ""
    }

    /// The expression reading `column` as Caravan values come back from SQLite: canonical UTC timestamp text,
    /// lowercase uuid text, dates as `YYYY-MM-DD`, numerics as float8, JSON and arrays as JSON text.
    package static func output(_ column: Column) -> String {
        output(PostgresSQL.reference(column), type: column.type)
    }

    /// `expression`, a `type` value, as a result column: timestamps, uuids, numerics, json and text arrays come
    /// back in PostgreSQL's binary form and `PostgresRows` renders them (formatting them in SQL — `to_char`,
    /// `to_jsonb`, casts to text and float8 — cost the server more than the rest of a read); the rest come back as
    /// SQLite gives them.
    static func output(_ name: String, type: ColumnType) -> String {
        switch type {
        case .timestamp, .textArray, .uuid, .decimal, .json: return name
        default: return textOutput(name, type: type)
        }
    }

    /// `expression`, a `type` value, rendered in SQL exactly as Caravan values read: the text, int8, float8 or
    /// boolean that SQLite gives (inside JSON objects, and where the text itself is decoded).
    static func textOutput(_ name: String, type: ColumnType) -> String {
        switch type {
        case .text, .integer, .double, .boolean: return name
        case .decimal: return "\(name)::float8"
        case .uuid: return "\(name)::text"
        case .timestamp: return "to_char(\(name) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
        case .date: return "to_char(\(name), 'YYYY-MM-DD')"
        case .json: return "\(name)::text"
        case .textArray: return "to_jsonb(\(name))::text"
        }
    }

    /// `column` as `textOutput` renders it.
    static func textOutput(_ column: Column) -> String {
        textOutput(PostgresSQL.reference(column), type: column.type)
    }

    package static func cast(_ expression: String, from type: ColumnType, to cast: SelectCast) -> String {
        let name: String = switch cast {
        case .text: "text"
        case .int4: "int4"
        case .int8: "int8"
        case .float8: "float8"
        case .numeric: "numeric"
        case .bool: "boolean"
        case .jsonb: "jsonb"
        }
        return "(\(expression))::\(name)"
    }

    /// `sum` of int8 is numeric and `avg` numeric in PostgreSQL: cast back to int8 and float8, so both read as
    /// SQLite's (an overflowing sum is 22003 rather than a wider number).
    package static func aggregate(_ function: AggregateFunction, of input: String?, result: ColumnType) -> String {
        let call = "\(function.rawValue)(\(input ?? "*"))"
        switch (function, result) {
        case (.count, _): return call
        case (.sum, .integer): return "\(call)::int8"
        case (.sum, _), (.avg, _): return "\(call)::float8"
        case (.min, _), (.max, _): return textOutput(call, type: result)
        }
    }

    package static let noLimit = Value.null

    package static func jsonValue(_ column: Column) -> String {
        switch column.type {
        case .json: PostgresSQL.reference(column)
        case .textArray: "to_jsonb(\(PostgresSQL.reference(column)))"
        default: textOutput(column)
        }
    }

    package static func jsonPathText(_ container: String, _ step: String) -> String { "(\(container) ->> \(step))" }

    package static let jsonObjectFunction = "json_build_object"
    package static let jsonArrayFunction = "json_build_array"
    package static let jsonNested = (prefix: "", suffix: "")
    package static let jsonArrayOfEmbeds = "COALESCE(json_agg(\"caravan_embed\"), '[]'::json)"
    package static let jsonText = (prefix: "(", suffix: ")::text")

    /// `FOR NO KEY UPDATE`, the lock PostgreSQL's own UPDATE takes when no key changes: it does not conflict with
    /// the `FOR KEY SHARE` a foreign-key check takes on the parent row, so a transaction that inserts a child and
    /// then updates its parent does not deadlock with another doing the same. A DELETE (or a key change) strengthens
    /// it to `FOR UPDATE` itself.
    package static func lockClause(_ table: TableSchema) -> String? { "FOR NO KEY UPDATE OF \(quote(table.name))" }

    /// A DDL literal: numbers and booleans bare, everything else quoted and cast.
    package static func literal(_ value: Value, as type: ColumnType?) -> String {
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
            guard let type, type != .text else { return quoteLiteral(s) }
            return quoteLiteral(s) + "::" + castName(type)
        }
    }

    package static func value(_ value: Value, as type: ColumnType?, into sql: inout SQLBuilder<Self>) {
        guard let type else {
            sql.mode == .bind ? sql.bind(value) : sql.append(literal(value, as: nil))
            return
        }
        if case .null = value {
            sql.append("NULL::\(castName(type))")
            return
        }
        if case .bool(let b) = value, type == .boolean {
            // Booleans are inlined (never user text): `"is_active" = TRUE` then matches partial indexes' WHERE.
            sql.append(booleanLiteral(b))
            return
        }
        switch sql.mode {
        case .bind:
            if type == .textArray {
                sql.append("ARRAY(SELECT jsonb_array_elements_text(")
                sql.bind(value)
                sql.append("::jsonb))")
            } else {
                sql.bind(value)
                sql.append("::" + castName(type))
            }
        case .inline:
            sql.append(literal(value, as: type))
        }
    }

    package static func like(_ column: Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>) {
        sql.append("\(PostgresSQL.reference(column)) \(caseInsensitive ? "ILIKE" : "LIKE") ")
        sql.value(.text(pattern), as: .text)
    }

    package static func regex(_ column: Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>) {
        sql.append("\(PostgresSQL.reference(column)) \(caseInsensitive ? "~*" : "~") ")
        sql.value(.text(pattern), as: .text)
    }

    package static func textSearch(_ column: Column, _ query: TextQuery, index: FullTextIndexReference?, into sql: inout SQLBuilder<Self>) {
        sql.textSearch(column, query, index: index)
    }

    package static func createSearch(_ table: TableSchema, _ indexes: SearchIndexes) throws -> [String] {
        PostgresSearchSchema.statements(table, indexes)
    }

    package static func array(_ column: Column, _ op: ArrayOperator, _ elements: [Value], into sql: inout SQLBuilder<Self>) {
        let symbol = switch op {
        case .contains: "@>"
        case .containedBy: "<@"
        case .overlaps: "&&"
        }
        sql.append("\(PostgresSQL.reference(column)) \(symbol) ")
        sql.value(.json(jsonArray(elements)), as: .textArray)
    }

    /// `column IN (…)`: one parameter per value for short lists, one JSON array parameter for long ones.
    package static func inList(_ column: Column, _ values: [Value], into sql: inout SQLBuilder<Self>) {
        guard sql.mode == .bind, values.count > maximumInlineList else {
            valueList(column, values, into: &sql)
            return
        }
        sql.append("\(PostgresSQL.reference(column)) IN (SELECT (element)::\(castName(column.type)) FROM jsonb_array_elements_text(")
        sql.bind(.json(jsonArray(values)))
        sql.append("::jsonb) AS element)")
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

extension SQLBuilder where Syntax == PostgresSyntax {
    /// The statement for postgres-nio, its values bound with their natural Postgres types.
    var query: PostgresQuery {
        var binds = PostgresBindings()
        for value in bindings {
            switch value {
            case .null: binds.appendNull()
            case .bool(let b): binds.append(b)
            case .integer(let i): binds.append(i)
            case .double(let d): binds.append(d)
            case .text(let s), .json(let s): binds.append(s)
            }
        }
        return PostgresQuery(unsafeSQL: text, binds: binds)
    }

}
