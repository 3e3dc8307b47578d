import CaravanCore
import PostgresNIO

/// Decodes result rows into Caravan values. Every output expression (see `PostgresSQL.output`) yields text, int8,
/// float8 or boolean, so a value comes back exactly as SQLite gives it.
enum PostgresRows {
    static func collect(_ sequence: PostgresRowSequence, types: [ColumnType]) async throws -> [[Value]] {
        var rows: [[Value]] = []
        for try await row in sequence {
            var values: [Value] = []
            values.reserveCapacity(types.count)
            for (cell, type) in zip(row, types) {
                values.append(try value(cell, as: type))
            }
            rows.append(values)
        }
        return rows
    }

    /// The single int8 of a `count(*)`.
    static func count(_ sequence: PostgresRowSequence) async throws -> Int {
        for try await row in sequence {
            return Int(try row.decode(Int64.self))
        }
        throw CaravanError(.internalFailure, "a count returned no row")
    }

    static func value(_ cell: PostgresCell, as type: ColumnType) throws -> Value {
        guard cell.bytes != nil else { return .null }
        switch type {
        case .text, .uuid, .timestamp, .date:
            return .text(try cell.decode(String.self))
        case .integer:
            return .integer(try cell.decode(Int64.self))
        case .double, .decimal:
            return .double(try cell.decode(Double.self))
        case .boolean:
            return .bool(try cell.decode(Bool.self))
        case .json, .textArray:
            // jsonb prints `{"a": 1}`; the canonical form has no spaces and Caravan's number format.
            return .json(try JSONParser.parse(try cell.decode(String.self)).jsonText)
        }
    }
}

/// The SELECT (and COUNT, when asked) of a read plan.
enum PostgresRead {
    static func compile(_ plan: ReadPlan) -> (select: PostgresSQL, count: PostgresSQL?) {
        var sql = PostgresSQL()
        sql.append("SELECT ")
        sql.append(plan.outputs.map { PostgresSQL.output($0.column) }.joined(separator: ", "))
        sql.append(" FROM \(PostgresSQL.quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        if !plan.order.isEmpty {
            sql.append(" ORDER BY ")
            sql.append(plan.order.map { term in
                PostgresSQL.quote(term.column.name) + (term.direction == .ascending ? " ASC" : " DESC")
                    + (term.nulls == .first ? " NULLS FIRST" : " NULLS LAST")
            }.joined(separator: ", "))
        }
        sql.append(" LIMIT ")
        sql.value(plan.limit.map { .integer(Int64($0)) } ?? .null, as: .integer)
        sql.append(" OFFSET ")
        sql.value(.integer(Int64(plan.offset)), as: .integer)
        guard plan.includeCount else { return (sql, nil) }
        var count = PostgresSQL()
        count.append("SELECT count(*) FROM \(PostgresSQL.quote(plan.table.name)) WHERE ")
        count.predicate(plan.filter)
        return (sql, count)
    }

    /// Every column of the rows of `table` matching `predicate`, sorted by primary key.
    /// Every column of the rows matching `predicate`, in key order. With `locking` the rows are locked
    /// (`FOR UPDATE`): a row another transaction is changing is waited for and re-checked against `predicate`
    /// after that one commits, so a write never acts on a row version it did not see (SQLite gets this by having
    /// one writer).
    static func selectRows(_ table: TableSchema, where predicate: BoundPredicate, locking: Bool = false) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT \(table.columns.map(PostgresSQL.output).joined(separator: ", ")) FROM \(PostgresSQL.quote(table.name)) WHERE ")
        sql.predicate(predicate)
        sql.append(" ORDER BY \(table.primaryKey.map(PostgresSQL.quote).joined(separator: ", "))")
        if locking { sql.append(" FOR UPDATE OF \(PostgresSQL.quote(table.name))") }
        return sql
    }
}

extension PostgresSQL {
    var query: PostgresQuery { PostgresQuery(unsafeSQL: text, binds: binds) }
}
