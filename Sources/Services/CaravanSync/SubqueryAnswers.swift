import CaravanCore

/// The answers to the subqueries a page of logged rows asks of the store (`EXISTS (SELECT 1 FROM group_members WHERE
/// group_id = 'g1' AND user_id = 'u')`), read together: the questions that differ only in one compared value are
/// answered by one grouped read of that column over an `IN` list of the values (`SELECT group_id, count(*) … WHERE
/// group_id IN ('g1', 'g2', …) AND user_id = 'u' GROUP BY group_id`). So a page costs one read per subquery of a rule
/// (and per distinct value of its other comparisons), however many rows it holds; a question no batch answered is
/// read on its own and remembered.
struct SubqueryAnswers {
    /// A subquery with the outer row's values in place: whether `table` has a row matching `predicate`.
    struct Question: Hashable {
        let table: TableSchema
        let predicate: BoundPredicate

        // Tables are told apart by name (one catalog): hashing a whole schema per lookup would cost more than the rest.
        static func == (a: Self, b: Self) -> Bool { a.table.name == b.table.name && a.predicate == b.predicate }
        func hash(into hasher: inout Hasher) {
            hasher.combine(table.name)
            hasher.combine(predicate)
        }
    }

    /// Most values one batched read names (one `IN` list).
    static let batchSize = 500

    private var known: [Question: Bool] = [:]

    /// Answers `questions` with as few reads as their shapes allow.
    mutating func answer(_ questions: Set<Question>, store: any Store) async throws {
        for batch in Batch.group(questions.filter { known[$0] == nil }) {
            let values = Array(batch.questions.keys)
            for start in stride(from: 0, to: values.count, by: Self.batchSize) {
                let chunk = Array(values[start..<min(start + Self.batchSize, values.count)])
                let present = try await Self.present(chunk, batch: batch, store: store)
                for value in chunk {
                    for question in batch.questions[value] ?? [] { known[question] = present.contains(value) }
                }
            }
        }
    }

    /// Whether a row matches `predicate` in `table`: from a batch, else one read (remembered).
    mutating func exists(_ predicate: BoundPredicate, in table: TableSchema, store: any Store) async throws -> Bool {
        let question = Question(table: table, predicate: predicate)
        if let answer = known[question] { return answer }
        let plan = try ReadPlan(table: table, query: Query(limit: 1), access: predicate, maxRows: nil, includeCount: false)
        let answer = try await !store.fetch(plan).rows.isEmpty
        known[question] = answer
        return answer
    }

    /// The answer to a question already read.
    func known(_ predicate: BoundPredicate, in table: TableSchema) -> Bool? {
        known[Question(table: table, predicate: predicate)]
    }

    /// The values of `chunk` for which a row of the batch's table matches the batch's other conditions.
    private static func present(_ chunk: [Value], batch: Batch, store: any Store) async throws -> Set<Value> {
        let conditions = batch.others + [.inList(batch.column, chunk)]
        let query = Query(select: [.column(name: batch.column.name, alias: nil, cast: nil), .aggregate(AggregateRequest(function: .count))])
        let plan = try ReadPlan(table: batch.table, query: query, access: .and(conditions), maxRows: nil, includeCount: false, aggregates: true)
        return Set(try await store.fetch(plan).rows.compactMap { $0.first?.comparable })
    }

    /// Questions that are the same but for the value one column is compared with (`column = value`, every other
    /// condition equal): one read answers them all.
    private struct Batch {
        let table: TableSchema
        let column: Column
        /// The questions' other top-level conditions (the same in all).
        let others: [BoundPredicate]
        /// The questions, by the value they compare the column with.
        var questions: [Value: [Question]]

        /// The batches of two or more questions among `questions`. Questions of one *shape* (the same conditions
        /// with any `column = value` values blanked) are batched on the comparison whose values vary most (the column
        /// linked to the outer row), grouped by the values of their other comparisons.
        static func group(_ questions: Set<Question>) -> [Batch] {
            struct Shape: Hashable {
                let table: String
                let conditions: [BoundPredicate]
            }
            var shapes: [Shape: [(question: Question, conjuncts: [BoundPredicate])]] = [:]
            for question in questions {
                let conjuncts = question.predicate.flattenedConjuncts
                let blanked = conjuncts.map { conjunct -> BoundPredicate in
                    guard case .compare(let column, .eq, let value) = conjunct, !value.isNull else { return conjunct }
                    return .compare(column, .eq, .null)
                }
                shapes[Shape(table: question.table.name, conditions: blanked), default: []].append((question, conjuncts))
            }
            var batches: [Batch] = []
            for (shape, members) in shapes where members.count > 1 {
                let positions = shape.conditions.indices.filter {
                    if case .compare(_, .eq, .null) = shape.conditions[$0] { return members[0].conjuncts[$0] != shape.conditions[$0] }
                    return false
                }
                guard let position = positions.max(by: { a, b in
                    Set(members.map { $0.conjuncts[a] }).count < Set(members.map { $0.conjuncts[b] }).count
                }), case .compare(let column, .eq, _) = shape.conditions[position] else { continue }
                var byOthers: [[BoundPredicate]: Batch] = [:]
                for member in members {
                    guard case .compare(_, .eq, let value) = member.conjuncts[position] else { continue }
                    var others = member.conjuncts
                    others.remove(at: position)
                    byOthers[others, default: Batch(table: member.question.table, column: column, others: others, questions: [:])]
                        .questions[value.comparable, default: []].append(member.question)
                }
                batches += byOthers.values.filter { $0.questions.count > 1 }
            }
            return batches
        }
    }
}

private extension BoundPredicate {
    /// The top-level conditions of an `AND`, nested `AND`s flattened.
    var flattenedConjuncts: [BoundPredicate] {
        guard case .and(let items) = self else { return [self] }
        return items.flatMap(\.flattenedConjuncts)
    }
}

private extension Value {
    /// The value as SQL's `=` matches it across number kinds (an integral double equals the integer).
    var comparable: Value {
        if case .double(let d) = self, d.rounded() == d, let integer = Int64(exactly: d) { return .integer(integer) }
        return self
    }
}
