package import CaravanCore

/// What differs between the SQL engines Caravan stores data in. `SQLBuilder` renders predicates, reads, writes and
/// DDL once; a dialect answers how a piece is spelled (quoting, placeholders, types, booleans, values) and renders
/// the few predicates only its engine can express (pattern matching, full-text search, arrays).
///
/// Identifiers come only from the schema model; values are bound as parameters except in DDL (CHECK constraints,
/// partial indexes, defaults), where they are inlined as quoted literals.
/// `identifier` in double quotes, an inner double quote doubled: how SQLite and PostgreSQL both quote identifiers.
/// Schema identifiers almost never hold a double quote, so that case alone pays for the replacement.
package func doubleQuotedIdentifier(_ identifier: String) -> String {
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
}

package protocol SQLSyntax: Sendable {
    /// Which engine this is.
    static var dialect: SQLDialect { get }

    /// A quoted identifier.
    static func quote(_ identifier: String) -> String

    /// The placeholder of the `position`th bound parameter (1-based).
    static func placeholder(_ position: Int) -> String

    /// The boolean literal (`1`/`0` or `TRUE`/`FALSE`).
    static func booleanLiteral(_ value: Bool) -> String

    /// The null-safe inequality (`IS NOT` or `IS DISTINCT FROM`).
    static var distinctOperator: String { get }

    /// The physical type of a column type.
    static func typeName(_ type: ColumnType) -> String

    /// A CHECK the engine needs to keep a column's values of its type (SQLite's loose typing), or nil.
    static func typeCheck(_ column: Column) -> String?

    /// A DEFAULT expression.
    static func defaultExpression(_ value: ColumnDefault, type: ColumnType) -> String

    /// How an index of `kind` is built: nil when the engine has no equivalent (the index is skipped), else the
    /// `USING …` clause (empty for the ordinary index).
    static func indexMethod(_ kind: IndexKind) -> String?

    /// The operator class written after each key of an index of `kind` (with its leading space), or "".
    static func indexOperatorClass(_ kind: IndexKind) -> String

    /// The expression a read selects for `column`, so values come back alike from every engine.
    static func output(_ column: Column) -> String

    /// `expression` (a `type` value) cast as `select=col::cast.sum()` asks, before it is aggregated.
    static func cast(_ expression: String, from type: ColumnType, to cast: SelectCast) -> String

    /// `function(input)` (`count(*)` when `input` is nil), read back as a `result` column reads, inside a JSON object
    /// too: sums of integers as integers, averages as doubles on every engine.
    static func aggregate(_ function: AggregateFunction, of input: String?, result: ColumnType) -> String

    /// The LIMIT value of an unlimited read.
    static var noLimit: Value { get }

    /// The row-lock clause of a read that a write acts on, or nil where one writer holds the database.
    static func lockClause(_ table: TableSchema) -> String?

    /// A literal for DDL.
    static func literal(_ value: Value, as type: ColumnType?) -> String

    /// Appends `value` as a `type` expression: a bound parameter, or a literal in DDL.
    static func value(_ value: Value, as type: ColumnType?, into sql: inout SQLBuilder<Self>)

    /// A LIKE pattern (`%`, `_`, `\` escapes) test.
    static func like(_ column: Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>)

    /// A POSIX regular expression test.
    static func regex(_ column: Column, pattern: String, caseInsensitive: Bool, into sql: inout SQLBuilder<Self>)

    /// A full-text test of a text column (through the table's search index when `index` names one).
    static func textSearch(_ column: Column, _ query: TextQuery, index: FullTextIndexReference?, into sql: inout SQLBuilder<Self>)

    /// An array containment or overlap test; `elements` are `.text` or `.null`.
    static func array(_ column: Column, _ op: ArrayOperator, _ elements: [Value], into sql: inout SQLBuilder<Self>)

    /// `column IN (…)`. The default binds one parameter per value.
    static func inList(_ column: Column, _ values: [Value], into sql: inout SQLBuilder<Self>)

    /// The JSON value of `column` inside an embedded resource's object: what a top-level read would encode.
    static func jsonValue(_ column: Column) -> String

    /// `container ->> step` as PostgreSQL answers it: a JSON string's text, any other value's JSON text, SQL NULL for
    /// JSON null or a missing member.
    static func jsonPathText(_ container: String, _ step: String) -> String

    /// The function that builds a JSON object from alternating keys and values.
    static var jsonObjectFunction: String { get }

    /// The function that builds a JSON array of its arguments.
    static var jsonArrayFunction: String { get }

    /// Around a nested embedded value inside an object (SQLite's `json(…)`, so that text from a subquery is JSON).
    static var jsonNested: (prefix: String, suffix: String) { get }

    /// The JSON array of the `caravan_embed` objects of a subquery's rows (`[]` when there are none).
    static var jsonArrayOfEmbeds: String { get }

    /// Around an embedded value at the top level of a read, so that it comes back as JSON text.
    static var jsonText: (prefix: String, suffix: String) { get }

    /// The statements that create `table`'s declared search objects (full text, trigrams, geo) under the engine's
    /// naming convention, fill them from the rows it has, and keep them in step with its writes (triggers).
    static func createSearch(_ table: TableSchema, _ indexes: SearchIndexes) throws -> [String]
}

extension SQLSyntax {
    /// `column IN (v1, v2, …)`, each value bound (or inlined) as the column's type.
    package static func inList(_ column: Column, _ values: [Value], into sql: inout SQLBuilder<Self>) {
        valueList(column, values, into: &sql)
    }

    /// The plain `IN` list every dialect can write; a dialect's `inList` falls back to it.
    package static func valueList(_ column: Column, _ values: [Value], into sql: inout SQLBuilder<Self>) {
        sql.append("\(SQLBuilder<Self>.reference(column)) IN (")
        for (i, v) in values.enumerated() {
            if i > 0 { sql.append(", ") }
            sql.value(v, as: column.type)
        }
        sql.append(")")
    }
}
