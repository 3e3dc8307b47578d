package import CaravanCore

/// Reads whose select aggregates (`count()`, `col.sum()`, …, PostgREST 12): one row per group of the plan's
/// implicit GROUP BY, over the rows the filter (the caller's policy included) lets through.
extension SQLBuilder {
    /// `SELECT outputs FROM table WHERE filter GROUP BY … ORDER BY … LIMIT … OFFSET …`: the page is a page of groups.
    static func groupedSelect(_ plan: ReadPlan) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT ")
        sql.outputs(plan.outputs)
        sql.append(" FROM \(quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        sql.groupBy(plan.groupBy)
        if !plan.order.isEmpty {
            sql.append(" ORDER BY ")
            sql.append(plan.order.map { term in
                reference(term.column) + (term.direction == .ascending ? " ASC" : " DESC") + (term.nulls == .first ? " NULLS FIRST" : " NULLS LAST")
            }.joined(separator: ", "))
        }
        sql.append(" LIMIT ")
        sql.value(plan.limit.map { .integer(Int64($0)) } ?? Syntax.noLimit, as: .integer)
        sql.append(" OFFSET ")
        sql.value(.integer(Int64(plan.offset)), as: .integer)
        return sql
    }

    /// The number of groups a grouped read has (one when it groups by nothing).
    static func groupCount(_ plan: ReadPlan) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT count(*) FROM (SELECT count(*) FROM \(quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        sql.groupBy(plan.groupBy)
        sql.append(") AS \"caravan_groups\"")
        return sql
    }

    /// ` GROUP BY …` of the grouping columns (nothing when there are none).
    mutating func groupBy(_ columns: [Column]) {
        guard !columns.isEmpty else { return }
        append(" GROUP BY " + columns.map(Self.reference).joined(separator: ", "))
    }

    /// An aggregate's expression, its input cast first, read back as the result type reads.
    static func aggregate(_ aggregate: ResolvedAggregate, result: ColumnType) -> String {
        let input = aggregate.input.map { column in
            aggregate.inputCast.map { Syntax.cast(reference(column), from: column.type, to: $0) } ?? reference(column)
        }
        return Syntax.aggregate(aggregate.function, of: input, result: result)
    }
}
