package import CaravanCore

/// The statements of reads and of the write pipeline, written once for every dialect.
extension SQLBuilder {
    /// The SELECT of a read plan: its outputs, filter, order and page.
    package static func select(_ plan: ReadPlan) -> SQLBuilder {
        if plan.isAggregate { return groupedSelect(plan) }
        var sql = SQLBuilder()
        sql.append("SELECT ")
        sql.outputs(plan.outputs)
        let embeds = plan.outputs.contains { $0.embed != nil }
        if embeds {
            // The page first, then the embeds of its rows only: an engine that sorts computes every output of every
            // matching row before the LIMIT, so the correlated subqueries run on the page, named as the table.
            sql.append(" FROM (SELECT * FROM \(quote(plan.table.name)) WHERE ")
        } else {
            sql.append(" FROM \(quote(plan.table.name)) WHERE ")
        }
        sql.predicate(plan.filter)
        sql.orderBy(plan.order)
        sql.append(" LIMIT ")
        sql.value(plan.limit.map { .integer(Int64($0)) } ?? Syntax.noLimit, as: .integer)
        sql.append(" OFFSET ")
        sql.value(.integer(Int64(plan.offset)), as: .integer)
        if embeds {
            sql.append(") AS \(quote(plan.table.name))")
            sql.orderBy(plan.order)
        }
        return sql
    }

    /// The select list of a read's outputs: columns, embedded resources (as JSON text) and aggregates.
    mutating func outputs(_ outputs: [OutputColumn]) {
        for (index, output) in outputs.enumerated() {
            if index > 0 { append(", ") }
            expression(of: output, inJSON: false)
        }
    }

    /// One output: an embed's subquery, an aggregate or the column, as a SQL value of the select list, or
    /// (`inJSON`) as a JSON value inside an embedded row's object.
    private mutating func expression(of output: OutputColumn, inJSON: Bool) {
        if let embed = output.embed, embed.cardinality == .value {
            embedded(embed, inJSON: inJSON)
        } else if let embed = output.embed {
            let wrapper = inJSON ? Syntax.jsonNested : Syntax.jsonText
            append(wrapper.prefix)
            embedded(embed)
            append(wrapper.suffix)
        } else if let aggregate = output.aggregate {
            append(Self.aggregate(aggregate, result: output.column.type))
        } else {
            append(inJSON ? Syntax.jsonValue(output.column) : Syntax.output(output.column))
        }
    }

    /// ` ORDER BY …` of resolved terms (nothing when there are none).
    mutating func orderBy(_ order: [ResolvedOrder]) {
        guard !order.isEmpty else { return }
        append(" ORDER BY ")
        append(order.map { term in
            // The column's reference, so a JSON path (`features->>seats`) orders by the value at the path.
            Self.reference(term.column) + (term.direction == .ascending ? " ASC" : " DESC")
                + (term.nulls == .first ? " NULLS FIRST" : " NULLS LAST")
        }.joined(separator: ", "))
    }

    /// An embedded resource as a correlated subquery: the JSON object of the related row (or NULL), or the JSON
    /// array of the related rows' objects in their order and page. Keys are bound, never inlined.
    mutating func embedded(_ read: EmbeddedRead, inJSON: Bool = true) {
        let order = read.order
        switch read.cardinality {
        case .value:
            guard let output = read.outputs.first else { return append("NULL") }
            append("(SELECT \(inJSON ? Syntax.jsonValue(output.column) : Syntax.output(output.column)) FROM \(Self.quote(read.table.name)) WHERE ")
            predicate(read.filter)
            orderBy(order)
            append(" LIMIT 1)")
        case .count:
            append("(SELECT \(Syntax.jsonArrayFunction)(\(Syntax.jsonObjectFunction)(")
            value(.text(read.outputs.first?.name ?? "count"), as: .text)
            append(", count(*))) FROM \(Self.quote(read.table.name)) WHERE ")
            predicate(read.filter)
            append(")")
        case .one:
            append("(SELECT ")
            jsonObject(read.outputs)
            append(" FROM \(Self.quote(read.table.name)) WHERE ")
            predicate(read.filter)
            orderBy(order)
            append(" LIMIT 1)")
        case .many:
            append("(SELECT \(Syntax.jsonArrayOfEmbeds) FROM (SELECT ")
            jsonObject(read.outputs)
            append(" AS \"caravan_embed\" FROM \(Self.quote(read.table.name)) WHERE ")
            predicate(read.filter)
            groupBy(read.groupBy)
            orderBy(order)
            append(" LIMIT ")
            value(read.limit.map { .integer(Int64($0)) } ?? Syntax.noLimit, as: .integer)
            append(" OFFSET ")
            value(.integer(Int64(read.offset)), as: .integer)
            append(") AS \"caravan_embed_rows\")")
        }
    }

    /// The JSON object of one row's outputs, nested embeds included.
    private mutating func jsonObject(_ outputs: [OutputColumn]) {
        append(Syntax.jsonObjectFunction + "(")
        for (index, output) in outputs.enumerated() {
            if index > 0 { append(", ") }
            value(.text(output.name), as: .text)
            append(", ")
            expression(of: output, inJSON: true)
        }
        append(")")
    }

    /// The number of rows a read plan's filter matches (its page aside).
    package static func count(_ plan: ReadPlan) -> SQLBuilder {
        if plan.isAggregate { return groupCount(plan) }
        var sql = SQLBuilder()
        sql.append("SELECT count(*) FROM \(quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        return sql
    }

    /// Every column of the rows matching `predicate`, in key order. With `locking` the rows are locked where the
    /// engine has row locks: a row another transaction is changing is waited for and re-checked against
    /// `predicate` after that one commits, so a write never acts on a row version it did not see (SQLite gets this
    /// by having one writer).
    package static func selectRows(_ table: TableSchema, where predicate: BoundPredicate, locking: Bool = false) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT \(table.columns.map(Syntax.output).joined(separator: ", ")) FROM \(quote(table.name)) WHERE ")
        sql.predicate(predicate)
        sql.append(" ORDER BY \(list(table.primaryKey))")
        if locking, let clause = Syntax.lockClause(table) { sql.append(" " + clause) }
        return sql
    }

    /// How many of the rows matching `rows` fail `rule` (NULL counts as failing).
    package static func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT count(*) FROM \(quote(table.name)) WHERE ")
        sql.predicate(rows)
        sql.append(" AND NOT COALESCE((")
        sql.predicate(rule)
        sql.append("), \(Syntax.booleanLiteral(false)))")
        return sql
    }

    /// INSERT of one row, returning every column of the stored row (defaults and generated columns included), in
    /// table order. With `skippingConflictOn` (the primary key or a UNIQUE column set) a row whose key is already
    /// taken — also by a concurrent transaction that commits while this one waits — is not inserted and nothing
    /// is returned (`ON CONFLICT … DO NOTHING`), instead of failing with a unique violation.
    package static func insert(_ row: RowValues, into table: TableSchema, skippingConflictOn conflictColumns: [String]? = nil) throws -> SQLBuilder {
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
        if let conflictColumns {
            for name in conflictColumns { _ = try table.requireColumn(name) }
            sql.append(" ON CONFLICT (\(list(conflictColumns))) DO NOTHING")
        }
        sql.append(" RETURNING \(table.columns.map(Syntax.output).joined(separator: ", "))")
        return sql
    }

    /// UPDATE of the rows matching `predicate`.
    package static func update(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) throws -> SQLBuilder {
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
    package static func delete(from table: TableSchema, where predicate: BoundPredicate) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("DELETE FROM \(quote(table.name)) WHERE ")
        sql.predicate(predicate)
        return sql
    }
}
