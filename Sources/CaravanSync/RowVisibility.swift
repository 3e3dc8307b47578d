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

    /// The subqueries the rule asks of the store to decide on `recordJSON` (none when the rest of the rule decides).
    func questions(about recordJSON: String) throws(CaravanError) -> [SubqueryAnswers.Question] {
        guard rule.containsSubquery else { return [] }
        let values = try Self.values(of: recordJSON, in: table)
        return questions(about: { values[$0] ?? .null })
    }

    private func questions(about lookup: (String) -> Value) -> [SubqueryAnswers.Question] {
        var asked: [SubqueryAnswers.Question] = []
        _ = rule.evaluate(lookup) { table, predicate in
            asked.append(SubqueryAnswers.Question(table: table, predicate: predicate))
            return nil
        }
        return asked
    }

    /// Whether the rule admits `recordJSON` (unknown counts as hidden, as in SQL's WHERE); its subqueries are answered
    /// by `answers` (read and remembered there when it does not know them yet).
    func admits(_ recordJSON: String, answers: inout SubqueryAnswers) async throws -> Bool {
        if case .constant(let verdict) = rule { return verdict }
        let values = try Self.values(of: recordJSON, in: table)
        let lookup: (String) -> Value = { values[$0] ?? .null }
        guard rule.containsSubquery else { return rule.evaluate(lookup) == true }
        for question in questions(about: lookup) {
            _ = try await answers.exists(question.predicate, in: question.table, store: store)
        }
        let known = answers
        return rule.evaluate(lookup) { table, predicate in known.known(predicate, in: table) } == true
    }
}
