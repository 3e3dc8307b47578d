/// Applies a parsed query (select, filters, order, limit, offset, count) to rows held in memory — the rows an RPC
/// function computed. The same binding and evaluator as everywhere else, so the grammar and errors are identical.
package enum InMemoryQuery {
    package static func apply(_ query: Query, columns: [Column], rows: [[Value]], includeCount: Bool, maxRows: Int?) throws(CaravanError) -> (ReadResult, offset: Int) {
        let table = TableSchema("result", columns: columns, primaryKey: [])
        let plan = try ReadPlan(table: table, query: query, access: .constant(true), maxRows: maxRows, includeCount: includeCount)
        var kept = rows.filter { row in
            plan.filter.evaluate { name in table.position(of: name).map { row[$0] } ?? .null } == true
        }
        if !query.order.isEmpty {
            let keys = plan.order.compactMap { term in table.position(of: term.column.name).map { ($0, term) } }
            kept.sort { left, right in
                for (index, term) in keys {
                    let a = left[index], b = right[index]
                    if a.isNull != b.isNull { return a.isNull == (term.nulls == .first) }
                    if a.isNull { continue }
                    guard let order = BoundPredicate.compare(a, b), order != 0 else { continue }
                    return term.direction == .ascending ? order < 0 : order > 0
                }
                return false
            }
        }
        let total = kept.count
        let start = min(plan.offset, kept.count)
        let end = plan.limit.map { min(start + $0, kept.count) } ?? kept.count
        let page = kept[start..<end].map { row in plan.outputs.map { output in table.position(of: output.column.name).map { row[$0] } ?? .null } }
        return (ReadResult(outputs: plan.outputs, rows: page, totalCount: includeCount ? total : nil), plan.offset)
    }
}
