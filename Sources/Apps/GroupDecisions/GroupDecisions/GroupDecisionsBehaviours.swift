import CaravanCore

/// The rules that span rows, as write hooks: every write path (REST, RPC, sync push) runs them in the write's
/// transaction, so none can break them. Each failure is 23514 naming the table and field.
package enum GroupDecisionsBehaviours {
    static func violation(_ field: String, _ message: String) -> CaravanError {
        CaravanError(.checkViolation, "\(field): \(message)", details: "field \(field)")
    }

    static func all(clock: WallClock) -> [TableBehaviour] {
        // Expiry on read: a reader of decisions (or of votes, which become visible when a decision ends) never sees
        // a decision still active after its deadline, whether or not the minute's background run has come.
        let lifecycle = DecisionLifecycle(clock: clock, notifier: Notifier())
        let settleDue: @Sendable (any StoreTransaction) async throws -> Void = { transaction in _ = try await lifecycle.expireDue(in: transaction) }
        return [
            TableBehaviour("users", touches: "updated_at", afterWrite: keepProfile),
            TableBehaviour("groups", touches: "updated_at"),
            TableBehaviour("collections", touches: "updated_at"),
            // The collection's group, for the group policies: filled by the server, never asked of the client.
            TableBehaviour("collection_restaurants", copied: [CopiedColumn("group_id", from: "collections", "group_id", where: "id", equals: "collection_id")]),
            TableBehaviour("notifications", touches: "updated_at", afterWrite: onlyReadChanges),
            TableBehaviour("group_members", afterWrite: keepMembership),
            TableBehaviour("decisions", touches: "updated_at", afterWrite: decisionRules, beforeRead: settleDue),
            TableBehaviour("votes", afterWrite: { write, transaction in try await voteRules(write, transaction, now: clock.microseconds) }, beforeRead: settleDue),
        ]
    }

    /// `member_profiles` mirrors the public columns of `users`.
    static func keepProfile(_ write: RowWrite, _ transaction: any StoreTransaction) async throws {
        guard let row = write.new else { return }
        let card = RowValues(["id": row["id"], "name": row["name"], "username": row["username"], "picture": row["picture"]])
        _ = try await transaction.insert([card], into: GroupDecisionsSchema.memberProfiles, conflict: ConflictTarget(columns: ["id"], resolution: .merge))
    }

    /// Notifications are written by the server; their owner may only mark them read.
    static func onlyReadChanges(_ write: RowWrite, _ transaction: any StoreTransaction) throws {
        guard write.operation == .update, let old = write.old, let new = write.new else { return }
        for column in GroupDecisionsSchema.notifications.columns where !["read", "updated_at"].contains(column.name) {
            if old[column.name] != new[column.name] { throw violation("notifications.\(column.name)", "only read can change") }
        }
    }

    /// `co_members` pairs for a new member; a group never loses its last admin.
    static func keepMembership(_ write: RowWrite, _ transaction: any StoreTransaction) async throws {
        let members = GroupDecisionsSchema.groupMembers
        // Joins and leaves of one group run one after the other: each sees the others' members and admins.
        try await transaction.serialize(on: "group-decisions.group:\((write.new ?? write.old)?["group_id"].textValue ?? "")")
        if write.operation == .insert, let new = write.new {
            let others = try await transaction.rows(members, ["user_id"], where: try members.equals("group_id", new["group_id"]))
                .map(\.[0]).filter { $0 != new["user_id"] }
            let pairs = others.flatMap { other in
                [RowValues(["group_id": new["group_id"], "viewer_id": new["user_id"], "member_id": other]),
                 RowValues(["group_id": new["group_id"], "viewer_id": other, "member_id": new["user_id"]])]
            }
            if !pairs.isEmpty {
                _ = try await transaction.insert(pairs, into: GroupDecisionsSchema.coMembers,
                                           conflict: ConflictTarget(columns: ["group_id", "viewer_id", "member_id"], resolution: .ignore))
            }
        }
        guard let old = write.old, old["role"] == .text("admin"), write.new?["role"] != .text("admin") else { return }
        let group = old["group_id"]
        let groupExists = try await transaction.count(GroupDecisionsSchema.groups, where: try GroupDecisionsSchema.groups.equals("id", group)) > 0
        let admins = try await transaction.count(members, where: try members.matching(["group_id": group, "role": .text("admin")]))
        if groupExists && admins == 0 { throw violation("group_members.role", "every group keeps at least one admin") }
    }

    /// deadline ≤ visit_date; a final status (completed, expired, closed) never changes.
    static func decisionRules(_ write: RowWrite, _ transaction: any StoreTransaction) throws {
        guard let new = write.new else { return }
        if let deadline = new.text("deadline").flatMap(Timestamp.parseMicroseconds),
           let visit = new.text("visit_date").flatMap(Timestamp.parseMicroseconds), deadline > visit {
            throw violation("decisions.deadline", "the deadline must not be after the visit date")
        }
        if let old = write.old, old["status"] != .text("active"), old["status"] != new["status"] {
            throw violation("decisions.status", "a \(old.text("status") ?? "final") decision is final")
        }
    }

    /// A vote ranks only candidates, each once, at least one, while its decision is active and before its deadline.
    static func voteRules(_ write: RowWrite, _ transaction: any StoreTransaction, now: Int64) async throws {
        guard let new = write.new else { return }
        guard let rankings = new["rankings"].textArrayValue, !rankings.isEmpty else {
            throw violation("votes.rankings", "rank at least one candidate")
        }
        let decisions = GroupDecisionsSchema.decisions
        try await DecisionLifecycle.serialize(decision: new["decision_id"], in: transaction)
        guard let decision = try await transaction.rows(decisions, ["status", "deadline"], where: try decisions.equals("id", new["decision_id"])).first else {
            throw violation("votes.decision_id", "no such decision")
        }
        guard decision[0] == .text("active") else { throw violation("votes.decision_id", "the decision is \(decision[0].textValue ?? "closed")") }
        if let deadline = decision[1].textValue.flatMap(Timestamp.parseMicroseconds), deadline <= now {
            throw violation("votes.decision_id", "the decision's deadline has passed")
        }
        let candidates = GroupDecisionsSchema.decisionCandidates
        let allowed = Set(try await transaction.rows(candidates, ["restaurant_id"], where: try candidates.equals("decision_id", new["decision_id"]))
            .compactMap { $0[0].textValue })
        var seen = Set<String>()
        for (index, id) in rankings.enumerated() {
            guard allowed.contains(ColumnType.canonicalUUID(id) ?? id) else { throw violation("votes.rankings[\(index)]", "\(id) is not a candidate") }
            guard seen.insert(id).inserted else { throw violation("votes.rankings[\(index)]", "\(id) is ranked twice") }
        }
    }
}
