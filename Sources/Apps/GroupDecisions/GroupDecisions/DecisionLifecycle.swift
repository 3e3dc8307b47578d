import CaravanCore

/// A decision as the lifecycle reads it.
struct DecisionRecord: Sendable {
    static let columns = ["id", "group_id", "created_by", "method", "status", "deadline"]
    let id: Value
    let group: Value
    let createdBy: String?
    let method: String
    let status: String
    let deadline: Int64?

    init(_ row: [Value]) {
        id = row[0]
        group = row[1]
        createdBy = row[2].textValue
        method = row[3].textValue ?? ""
        status = row[4].textValue ?? ""
        deadline = row[5].textValue.flatMap(Timestamp.parseMicroseconds)
    }
}

/// Completing, tallying and expiring decisions: every status change is a conditional update (`… where status =
/// 'active'`), so two callers racing for one decision change it once, and only the one that changed it notifies.
struct DecisionLifecycle: Sendable {
    let clock: WallClock
    let notifier: Notifier

    static let decisions = GroupDecisionsSchema.decisions

    /// The decision, read as the service role, or 22023 naming `decision_id`.
    func require(_ id: Value, in tx: any StoreTransaction) async throws -> DecisionRecord {
        let row = try await tx.asServiceRole { service in
            try await service.rows(Self.decisions, DecisionRecord.columns, where: try Self.decisions.equals("id", id)).first
        }
        guard let row else { throw CaravanError.invalidArgument("decision_id", id.textValue, "no such decision") }
        return DecisionRecord(row)
    }

    /// Ids of one column of the rows of a decision's snapshot table.
    func snapshot(_ table: TableSchema, _ column: String, of decision: Value, in tx: any StoreTransaction) async throws -> [String] {
        try await tx.asServiceRole { service in
            try await service.rows(table, [column], where: try table.equals("decision_id", decision)).compactMap { $0[0].textValue }
        }
    }

    /// The instant-runoff tally of the decision's candidates and stored votes.
    func tally(_ decision: DecisionRecord, in tx: any StoreTransaction) async throws -> (Tally, ballots: Int) {
        let candidates = try await snapshot(GroupDecisionsSchema.decisionCandidates, "restaurant_id", of: decision.id, in: tx)
        let votes = GroupDecisionsSchema.votes
        let ballots = try await tx.asServiceRole { service in
            try await service.rows(votes, ["rankings"], where: try votes.equals("decision_id", decision.id)).compactMap { $0[0].textArrayValue }
        }
        let canonical = ballots.map { $0.map { ColumnType.canonicalUUID($0) ?? $0 } }
        return (try InstantRunoff.tally(candidates: candidates, ballots: canonical), ballots.count)
    }

    /// Completes an active decision with `winner`; returns false when it was no longer active (someone else won
    /// the race). Notifies the participants with the completed toggle.
    @discardableResult
    func complete(_ decision: DecisionRecord, winner: String, reasoning: String, weights: [String: Double]?, in tx: any StoreTransaction) async throws -> Bool {
        var values = RowValues(["status": .text("completed"), "result_restaurant_id": .text(winner),
                                "selected_at": .text(Timestamp.format(microseconds: clock.microseconds)), "reasoning": .text(reasoning)])
        values.set("weights", weights.map { .json(TallyDocument.weightsObject($0).jsonText) } ?? .null)
        let changed = try await tx.asServiceRole { service in
            try await service.update(Self.decisions, set: values, where: try Self.decisions.matching(["id": decision.id, "status": .text("active")]))
        }
        guard changed.updated == 1 else { return false }
        let participants = try await snapshot(GroupDecisionsSchema.decisionParticipants, "user_id", of: decision.id, in: tx)
        var data = ["decisionId": decision.id.textValue ?? "", "restaurantId": winner]
        if let group = decision.group.textValue { data["groupId"] = group }
        try await notifier.notify(.decisionResult, users: participants, title: "Decision made", message: reasoning, data: data, in: tx)
        return true
    }

    /// Makes transactions on one decision (votes, tallies, closing, expiry) run one after the other, so a vote and
    /// the tally that completes the decision never miss each other.
    static func serialize(decision id: Value, in tx: any StoreTransaction) async throws {
        try await tx.serialize(on: "group-decisions.decision:\(id.textValue ?? "")")
    }

    /// Tallies a tiered decision with votes and completes it.
    func completeByTally(_ decision: DecisionRecord, in tx: any StoreTransaction) async throws -> Bool {
        try await Self.serialize(decision: decision.id, in: tx)
        let (tally, ballots) = try await tally(decision, in: tx)
        let reasoning = "instant-runoff over \(ballots) ballot\(ballots == 1 ? "" : "s") in \(tally.rounds.count) round\(tally.rounds.count == 1 ? "" : "s")"
        return try await complete(decision, winner: tally.winner, reasoning: reasoning, weights: tally.weights, in: tx)
    }

    /// Every active decision whose deadline has passed: a tiered one with votes is tallied, the others expire.
    /// Returns how many this call changed (a decision another caller already changed is not counted).
    func expireDue(in tx: any StoreTransaction) async throws -> Int {
        let now = Timestamp.format(microseconds: clock.microseconds)
        let due = BoundPredicate.and([
            try Self.decisions.equals("status", .text("active")),
            .compare(try Self.decisions.requireColumn("deadline"), .lte, .text(now)),
        ])
        let rows = try await tx.asServiceRole { service in try await service.rows(Self.decisions, DecisionRecord.columns, where: due) }
        var changed = 0
        for decision in rows.map(DecisionRecord.init) {
            try await Self.serialize(decision: decision.id, in: tx)
            if decision.method == "tiered", try await tally(decision, in: tx).ballots > 0 {
                if try await completeByTally(decision, in: tx) { changed += 1 }
                continue
            }
            let expired = try await tx.asServiceRole { service in
                try await service.update(Self.decisions, set: RowValues(["status": .text("expired")]),
                                   where: .and([try Self.decisions.equals("id", decision.id), due]))
            }
            changed += expired.updated
        }
        return changed
    }
}
