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
            // A row logged before a declared rename says the column's old name.
            guard let column = table.column(named: key)
                ?? RenamedColumns(table).pairs.first(where: { $0.old == key }).flatMap({ table.column(named: $0.new) }) else { continue }
            if column.name != key, values[column.name] != nil { continue }
            values[column.name] = try column.type.value(fromJSON: json)
        }
        return values
    }

    /// The subqueries the rule asks of the store to decide on a row (none when the rule reads no other table).
    func questions(about values: [String: Value]) -> [SubqueryAnswers.Question] {
        guard rule.containsSubquery else { return [] }
        var asked: [SubqueryAnswers.Question] = []
        _ = rule.evaluate({ values[$0] ?? .null }) { table, predicate in
            asked.append(SubqueryAnswers.Question(table: table, predicate: predicate))
            return nil
        }
        return asked
    }

    /// Whether the rule admits the row (unknown counts as hidden, as in SQL's WHERE); its subqueries are answered by
    /// `answers` (read and remembered there when it does not know them yet).
    func admits(_ values: [String: Value], answers: inout SubqueryAnswers) async throws -> Bool {
        if case .constant(let verdict) = rule { return verdict }
        let lookup: (String) -> Value = { values[$0] ?? .null }
        guard rule.containsSubquery else { return rule.evaluate(lookup) == true }
        var unanswered: [SubqueryAnswers.Question] = []
        let known = answers
        let verdict = rule.evaluate(lookup) { table, predicate in
            if let answer = known.known(predicate, in: table) { return answer }
            unanswered.append(SubqueryAnswers.Question(table: table, predicate: predicate))
            return nil
        }
        guard !unanswered.isEmpty else { return verdict == true }
        for question in unanswered {
            _ = try await answers.exists(question.predicate, in: question.table, store: store)
        }
        let all = answers
        return rule.evaluate(lookup) { table, predicate in all.known(predicate, in: table) } == true
    }
}
