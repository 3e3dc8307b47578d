public import CaravanCore

/// The statements of reads and of the write pipeline, written once for every dialect.
extension SQLBuilder {
    /// The SELECT of a read plan: its outputs, filter, order and page.
    public static func select(_ plan: ReadPlan) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT ")
        sql.append(plan.outputs.map { Syntax.output($0.column) }.joined(separator: ", "))
        sql.append(" FROM \(quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        if !plan.order.isEmpty {
            sql.append(" ORDER BY ")
            sql.append(plan.order.map { term in
                quote(term.column.name) + (term.direction == .ascending ? " ASC" : " DESC")
                    + (term.nulls == .first ? " NULLS FIRST" : " NULLS LAST")
            }.joined(separator: ", "))
        }
        sql.append(" LIMIT ")
        sql.value(plan.limit.map { .integer(Int64($0)) } ?? Syntax.noLimit, as: .integer)
        sql.append(" OFFSET ")
        sql.value(.integer(Int64(plan.offset)), as: .integer)
        return sql
    }

    /// The number of rows a read plan's filter matches (its page aside).
    public static func count(_ plan: ReadPlan) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT count(*) FROM \(quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        return sql
    }

    /// Every column of the rows matching `predicate`, in key order. With `locking` the rows are locked where the
    /// engine has row locks: a row another transaction is changing is waited for and re-checked against
    /// `predicate` after that one commits, so a write never acts on a row version it did not see (SQLite gets this
    /// by having one writer).
    public static func selectRows(_ table: TableSchema, where predicate: BoundPredicate, locking: Bool = false) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT \(table.columns.map(Syntax.output).joined(separator: ", ")) FROM \(quote(table.name)) WHERE ")
        sql.predicate(predicate)
        sql.append(" ORDER BY \(list(table.primaryKey))")
        if locking, let clause = Syntax.lockClause(table) { sql.append(" " + clause) }
        return sql
    }

    /// How many of the rows matching `rows` fail `rule` (NULL counts as failing).
    public static func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT count(*) FROM \(quote(table.name)) WHERE ")
        sql.predicate(rows)
        sql.append(" AND NOT COALESCE((")
        sql.predicate(rule)
        sql.append("), \(Syntax.booleanLiteral(false)))")
        return sql
    }

    /// INSERT of one row, returning its primary key.
    public static func insert(_ row: RowValues, into table: TableSchema) throws -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("INSERT INTO \(quote(table.name))")
        if row.columns.isEmpty {
            sql.append(" DEFAULT VALUES")
        } else {
            sql.append(" (\(list(row.columns))) VALUES (")
            for (i, (name, value)) in zip(row.columns, row.values).enumerated() {
                if i > 0 { sql.append(", ") }
                sql.value(value, as: try table.requireColumn(name).type)
            }
            sql.append(")")
        }
        let keyColumns = try table.primaryKey.map { try table.requireColumn($0) }
        sql.append(" RETURNING \(keyColumns.map(Syntax.output).joined(separator: ", "))")
        return sql
    }

    /// UPDATE of the rows matching `predicate`.
    public static func update(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) throws -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("UPDATE \(quote(table.name)) SET ")
        for (i, (name, value)) in zip(values.columns, values.values).enumerated() {
            if i > 0 { sql.append(", ") }
            sql.append("\(quote(name)) = ")
            sql.value(value, as: try table.requireColumn(name).type)
        }
        sql.append(" WHERE ")
        sql.predicate(predicate)
        return sql
    }

    /// DELETE of the rows matching `predicate`.
    public static func delete(from table: TableSchema, where predicate: BoundPredicate) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("DELETE FROM \(quote(table.name)) WHERE ")
        sql.predicate(predicate)
        return sql
    }
}
