import CaravanCore

/// Whether logged rows are visible to one caller: the caller's select rule on a table, evaluated in memory on the
/// logged record. Membership rules (`EXISTS` on another table) are answered by reads of the store as it is now.
struct RowVisibility: Sendable {
    let table: TableSchema
    let rule: BoundPredicate
    let store: any Store

    /// The logged JSON object as column values (absent or unknown columns read as NULL).
    static func values(of recordJSON: String, in table: TableSchema) throws(CaravanError) -> [String: Value] {
        guard case .object(let pairs) = try JSONParser.parse(recordJSON) else {
            throw CaravanError(.internalFailure, "a change-log record is not a JSON object", internalDetail: table.name)
        }
        var values: [String: Value] = [:]
        for (key, json) in pairs {
            guard let column = table.column(named: key) else { continue }
            values[key] = try column.type.value(fromJSON: json)
        }
        return values
    }

    /// Whether the rule admits `recordJSON` (unknown counts as hidden, as in SQL's WHERE).
    func admits(_ recordJSON: String) async throws -> Bool {
        if case .constant(let verdict) = rule { return verdict }
        let values = try Self.values(of: recordJSON, in: table)
        let lookup: (String) -> Value = { values[$0] ?? .null }
        guard rule.containsSubquery else { return rule.evaluate(lookup) == true }
        // First pass: which subqueries the rule asks; then answer each with a read; then evaluate with the answers.
        var asked: [(TableSchema, BoundPredicate)] = []
        _ = rule.evaluate(lookup) { table, predicate in
            asked.append((table, predicate))
            return nil
        }
        var answers: [Answer: Bool] = [:]
        for (inner, predicate) in asked {
            let key = Answer(table: inner.name, predicate: predicate)
            guard answers[key] == nil else { continue }
            let plan = try ReadPlan(table: inner, query: Query(limit: 1), access: predicate, maxRows: nil, includeCount: false)
            answers[key] = try await !store.fetch(plan).rows.isEmpty
        }
        return rule.evaluate(lookup) { inner, predicate in answers[Answer(table: inner.name, predicate: predicate)] } == true
    }

    private struct Answer: Hashable {
        let table: String
        let predicate: BoundPredicate
    }
}
