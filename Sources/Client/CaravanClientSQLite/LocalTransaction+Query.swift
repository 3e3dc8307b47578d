package import CaravanCore
import CaravanSQL
import CaravanSQLite
import GRDB

extension LocalTransaction {
    /// Rows of `table` matching `predicate` (bound to the table: the REST and policy grammar, rendered by the shared
    /// serializer with SQLite's spelling, as the server's SQLite engine runs it), in `order` then by primary key, at
    /// most `limit`; as JSON objects.
    package func rows(_ table: TableSchema, matching predicate: BoundPredicate, order: [OrderTerm], limit: Int?) throws -> [JSONValue] {
        let (sql, arguments) = try select(table, matching: predicate, order: order, limit: limit)
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            .object(table.columns.enumerated().map { index, column in (column.name, LocalValues.json(row[index], for: column)) })
        }
    }

    /// The same rows as `rows(_:matching:order:limit:)`, as their stored bytes (`LocalRows`): a live query's read.
    /// With `rowids`, each row's rowid too (a live query follows changes by rowid: `LocalDatabase.observeRows`).
    package func localRows(_ table: TableSchema, matching predicate: BoundPredicate, order: [OrderTerm], limit: Int?, rowids: Bool = false) throws -> LocalRows {
        let (sql, arguments) = try select(table, matching: predicate, order: order, limit: limit, rowids: rowids)
        let statement = try db.cachedStatement(sql: sql)
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        var rows = LocalRows(columns: table.columns)
        while try cursor.next() != nil { rows.append(from: statement.sqliteStatement, rowid: rowids) }
        return rows
    }

    private func select(_ table: TableSchema, matching predicate: BoundPredicate, order: [OrderTerm], limit: Int?,
                        rowids: Bool = false) throws -> (String, StatementArguments) {
        guard !predicate.containsSubquery else {
            throw LocalStorageError.unsupported("a local read filters on the table's own columns (no subqueries)")
        }
        var sql = SQLBuilder<SQLiteSyntax>()
        sql.append("SELECT \(table.columns.map { LocalSchema.quote($0.name) }.joined(separator: ", "))\(rowids ? ", rowid" : "") FROM \(LocalSchema.quote(table.name)) WHERE ")
        sql.predicate(predicate.simplified)
        var terms: [String] = []
        for term in order {
            guard table.column(named: term.column) != nil else { throw LocalStorageError.unknownColumn(table: table.name, column: term.column) }
            terms.append("\(LocalSchema.quote(term.column)) \(term.direction == .ascending ? "ASC" : "DESC") NULLS \(term.effectiveNulls == .first ? "FIRST" : "LAST")")
        }
        terms += table.primaryKey.map(LocalSchema.quote)
        sql.append(" ORDER BY " + terms.joined(separator: ", "))
        if let limit {
            sql.append(" LIMIT ")
            sql.bind(.integer(Int64(max(0, limit))))
        }
        return (sql.text, StatementArguments(sql.bindings.map(SQLiteSyntax.databaseValue)))
    }
}
