package import CaravanCore
package import CaravanSQL
import Foundation
package import GRDB

/// A SQLite statement being written (the shared serializer with SQLite's spelling).
typealias SQLiteSQL = SQLBuilder<SQLiteSyntax>

/// How SQLite spells what differs between engines. Physical types: text, uuid, timestamp (canonical UTC text) and
/// date → TEXT; integer and boolean (0/1) → INTEGER; double and decimal → REAL; json and textArray → TEXT holding
/// validated JSON. Index kind `.arrayMembership` (Postgres GIN) has no SQLite equivalent and is skipped.
package enum SQLiteSyntax: SQLSyntax {
    package static let dialect = SQLDialect.sqlite

    package static func quote(_ identifier: String) -> String { doubleQuotedIdentifier(identifier) }

    package static func placeholder(_ position: Int) -> String { "?" }

    package static func booleanLiteral(_ value: Bool) -> String { value ? "1" : "0" }

    package static let distinctOperator = "IS NOT"

    package static func typeName(_ type: ColumnType) -> String {
        switch type {
        case .text, .uuid, .timestamp, .date, .json, .textArray: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .double, .decimal: "REAL"
        }
    }

    package static func typeCheck(_ column: CaravanCore.Column) -> String? {
        let name = quote(column.name)
        switch column.type {
        case .boolean: return "\(name) IN (0, 1)"
        // json_valid(NULL) is 0 on SQLite before 3.45, so NULL is allowed explicitly.
        case .json: return "\(name) IS NULL OR json_valid(\(name))"
        case .textArray: return "\(name) IS NULL OR (json_valid(\(name)) AND json_type(\(name)) = 'array')"
        case .uuid: return "length(\(name)) = 36"
        default: return nil
        }
    }

    /// Canonical UTC timestamp text with microseconds, as `Timestamp.format` writes it.
    package static let nowExpression = "(strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')"

    package static func defaultExpression(_ value: ColumnDefault, type: ColumnType) -> String {
        switch value {
        case .value(let v): literal(v, as: type)
        case .now: nowExpression
        case .randomUUID:
            "(lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))))"
        }
    }

    package static func indexMethod(_ kind: IndexKind) -> String? {
        switch kind {
        case .btree, .textPrefix: ""
        case .arrayMembership: nil
        }
    }

    /// BINARY, SQLite's default collation, already compares bytes: a `.textPrefix` index is an ordinary one.
    package static func indexOperatorClass(_ kind: IndexKind) -> String { "" }

    package static func output(_ column: CaravanCore.Column) -> String { SQLiteSQL.reference(column) }

    /// An integer cast of a real rounds as PostgreSQL's does (SQLite's CAST truncates); text casts as SQLite reads
    /// its leading number (PostgreSQL refuses text that is not an integer).
    package static func cast(_ expression: String, from type: ColumnType, to cast: SelectCast) -> String {
        var real = type == .double
        if case .decimal = type { real = true }
        return switch cast {
        case .text: "CAST(\(expression) AS TEXT)"
        case .int4, .int8: real ? "CAST(round(\(expression)) AS INTEGER)" : "CAST(\(expression) AS INTEGER)"
        case .float8, .numeric: "CAST(\(expression) AS REAL)"
        case .bool: "CAST(\(expression) AS INTEGER)"
        case .jsonb: expression
        }
    }

    /// SQLite's `sum` of integers is an integer, its `avg` a real, as Caravan's columns read.
    package static func aggregate(_ function: AggregateFunction, of input: String?, result: ColumnType) -> String {
        "\(function.rawValue)(\(input ?? "*"))"
    }

    package static func jsonValue(_ column: CaravanCore.Column) -> String {
        let name = SQLiteSQL.reference(column)
        switch column.type {
        case .boolean: return "CASE WHEN \(name) IS NULL THEN NULL WHEN \(name) THEN json('true') ELSE json('false') END"
        case .json, .textArray: return "json(\(name))"
        // `->>` of a number or boolean is emulated with `->` (`jsonPathText`), whose JSON subtype json_object would
        // keep: concatenation makes it plain text, as PostgreSQL's `->>` is (NULL stays NULL).
        case .text where column.jsonPath != nil: return "('' || \(name))"
        case .text, .integer, .double, .decimal, .uuid, .timestamp, .date: return name
        }
    }

    package static func jsonPathText(_ container: String, _ step: String) -> String {
        // SQLite's ->> answers numbers and booleans as SQL values (true as 1): only strings are taken by ->>.
        "(CASE json_type(\(container) -> \(step)) WHEN 'null' THEN NULL WHEN 'text' THEN \(container) ->> \(step) ELSE \(container) -> \(step) END)"
    }

    package static let jsonObjectFunction = "json_object"
    package static let jsonArrayFunction = "json_array"
    /// `-> '$'` after the subquery (its JSON text, as JSON) rather than `json(…)` around it: a postfix operator costs
    /// SQLite's parser no stack entries while it reads the subquery, a function call two per level of embedding.
    package static let jsonNested = (prefix: "", suffix: " -> '$'")
    package static let jsonArrayOfEmbeds = "json_group_array(json(\"caravan_embed\"))"
    package static let jsonText = (prefix: "", suffix: "")

    package static let noLimit = Value.integer(-1)

    package static func lockClause(_ table: TableSchema) -> String? { nil }

    package static func literal(_ value: Value, as type: ColumnType?) -> String {
        switch value {
        case .null: "NULL"
        case .bool(let b): b ? "1" : "0"
        case .integer(let i): String(i)
        case .double(let d): String(d)
        case .text(let s), .json(let s): "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }

    package static func value(_ value: Value, as type: ColumnType?, into sql: inout SQLBuilder<Self>) {
        switch sql.mode {
        case .bind: sql.bind(value)
        case .inline: sql.append(literal(value, as: type))
        }
    }

    package static func databaseValue(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let b): (b ? 1 : 0).databaseValue
        case .integer(let i): i.databaseValue
        case .double(let d): d.databaseValue
        case .text(let s), .json(let s): s.databaseValue
        }
    }

    package static func like(_ column: CaravanCore.Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>) {
        let name = SQLiteSQL.reference(column)
        if caseInsensitive {
            sql.append("caravan_casefold(\(name)) LIKE ")
            sql.value(.text(pattern.lowercased()))
            sql.append(" ESCAPE '\\'")
        } else {
            sql.append("\(name) GLOB ")
            sql.value(.text(globPattern(fromLike: pattern)))
        }
    }

    package static func regex(_ column: CaravanCore.Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>) {
        sql.append("caravan_regexp(")
        sql.value(.text(pattern))
        sql.append(", \(SQLiteSQL.reference(column)), \(caseInsensitive ? 1 : 0))")
    }

    package static func textSearch(_ column: CaravanCore.Column, _ query: TextQuery, index: FullTextIndexReference?, into sql: inout SQLBuilder<Self>) {
        let name = SQLiteSQL.reference(column)
        // NULL text is unknown, as `to_tsvector(NULL) @@ q` is in Postgres (so `not.fts` leaves it out too).
        sql.append("(CASE WHEN \(name) IS NULL THEN NULL ELSE ")
        if let index {
            indexedTextSearch(query, column: column.name, index: index, into: &sql)
        } else {
            sql.append("caravan_text_match(\(name), ")
            sql.value(.text(SQLiteTextSearch.encode(query)))
            sql.append(")")
        }
        sql.append(" END)")
    }

    /// A full-text test through the table's FTS5 index: one MATCH when the query is an FTS5 expression, else the
    /// boolean combination of its parts (a lone negation becomes `NOT IN`).
    static func indexedTextSearch(_ query: TextQuery, column: String, index: FullTextIndexReference, into sql: inout SQLBuilder<Self>) {
        if let expression = FTS5Query.render(query, columns: [column]) {
            let names = SQLiteSearchNames(table: index.table)
            sql.append("\(quote(index.primaryKey)) IN (SELECT k.\(SQLiteSearchNames.keyColumn) FROM \(quote(names.keys)) AS k WHERE k.rowid IN (SELECT rowid FROM \(quote(names.fullText)) WHERE \(quote(names.fullText)) MATCH ")
            sql.value(.text(expression))
            sql.append("))")
            return
        }
        switch query {
        case .and(let items), .or(let items):
            guard !items.isEmpty else { sql.append("0"); return }
            let joiner: String
            if case .and = query { joiner = " AND " } else { joiner = " OR " }
            sql.append("(")
            for (i, item) in items.enumerated() {
                if i > 0 { sql.append(joiner) }
                indexedTextSearch(item, column: column, index: index, into: &sql)
            }
            sql.append(")")
        case .not(let inner):
            sql.append("NOT (")
            indexedTextSearch(inner, column: column, index: index, into: &sql)
            sql.append(")")
        case .nothing, .term, .phrase:
            sql.append("0")
        }
    }

    package static func createSearch(_ table: TableSchema, _ indexes: SearchIndexes) throws -> [String] {
        SQLiteSearchSchema.statements(table, indexes)
    }

    package static func array(_ column: CaravanCore.Column, _ op: ArrayOperator, _ elements: [Value], into sql: inout SQLBuilder<Self>) {
        let name = SQLiteSQL.reference(column)
        let given = Value.json(JSONValue.array(elements.map { if case .text(let s) = $0 { .string(s) } else { .null } }).jsonText)
        sql.append("(CASE WHEN \(name) IS NULL THEN NULL ELSE ")
        switch op {
        case .contains:
            sql.append("NOT EXISTS (SELECT 1 FROM json_each(")
            sql.value(given)
            sql.append(") AS given WHERE given.value IS NULL OR given.value NOT IN (SELECT value FROM json_each(\(name)) WHERE value IS NOT NULL))")
        case .containedBy:
            sql.append("NOT EXISTS (SELECT 1 FROM json_each(\(name)) AS stored WHERE stored.value IS NULL OR stored.value NOT IN (SELECT value FROM json_each(")
            sql.value(given)
            sql.append(") WHERE value IS NOT NULL))")
        case .overlaps:
            sql.append("EXISTS (SELECT 1 FROM json_each(\(name)) AS stored WHERE stored.value IN (SELECT value FROM json_each(")
            sql.value(given)
            sql.append(")))")
        }
        sql.append(" END)")
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

extension SQLBuilder where Syntax == SQLiteSyntax {
    /// The bound values as GRDB arguments.
    var arguments: [DatabaseValue] { bindings.map(SQLiteSyntax.databaseValue) }

    var statementArguments: StatementArguments { StatementArguments(arguments) }
}
