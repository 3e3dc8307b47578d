import CaravanCore

/// `create_decision`, `submit_vote`, `finalize_decision`, `pick_restaurant`, `close_decision`, `expire_decisions`.
/// Each first settles the decisions whose deadline has passed (expiry on read), then acts.
struct DecisionFunctions: Sendable {
    let lifecycle: DecisionLifecycle
    let random: RandomSource

    var all: [RPCFunction] { [createDecision, submitVote, finalizeDecision, pickRestaurant, closeDecision, expireDecisions] }

    /// 42501 unless the caller created the decision or administers its group.
    func requireCreatorOrAdmin(_ decision: DecisionRecord, caller: String, in tx: any StoreTransaction) async throws {
        if decision.createdBy == caller { return }
        if !decision.group.isNull, try await tx.membership(of: caller, in: decision.group) == "admin" { return }
        throw CaravanError.denied("decision_id", "only the decision's creator or a group admin may do this")
    }

    /// The decision, still active after expiry ran, or P0001 naming its status.
    func requireActive(_ id: Value, in tx: any StoreTransaction) async throws -> DecisionRecord {
        _ = try await lifecycle.expireDue(in: tx)
        let decision = try await lifecycle.require(id, in: tx)
        guard decision.status == "active" else { throw RPCFailure.raised("decision_id", "the decision is \(decision.status)") }
        return decision
    }

    var submitVote: RPCFunction {
        RPCFunction("submit_vote", parameters: [RPCParameter("decision_id", .uuid), RPCParameter("rankings", .textArray)], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("submit_vote")
            let decision = try await requireActive(arguments["decision_id"], in: tx)
            let participants = try await lifecycle.snapshot(GroupDecisionsSchema.decisionParticipants, "user_id", of: decision.id, in: tx)
            guard participants.contains(caller) else { throw CaravanError.denied("decision_id", "only the decision's participants vote") }
            guard decision.method == "tiered" else { throw CaravanError.invalidArgument("decision_id", decision.id.textValue, "a \(decision.method) decision takes no votes") }
            let rankings = try await validatedRankings(arguments["rankings"], decision: decision, in: tx)
            let vote = RowValues(["decision_id": decision.id, "user_id": .text(caller), "rankings": ColumnType.textArray(rankings),
                                  "submitted_at": .text(Timestamp.format(microseconds: lifecycle.clock.microseconds))])
            _ = try await tx.insert([vote], into: GroupDecisionsSchema.votes, conflict: ConflictTarget(columns: ["decision_id", "user_id"], resolution: .merge))
            let votes = GroupDecisionsSchema.votes
            let voted = try await tx.asServiceRole { try await $0.count(votes, where: try votes.equals("decision_id", decision.id)) }
            if voted >= participants.count { _ = try await lifecycle.completeByTally(decision, in: tx) }
            return .void
        }
    }

    /// Rankings: non-empty, each a candidate, none twice (22023 naming `rankings[i]`).
    func validatedRankings(_ value: Value, decision: DecisionRecord, in tx: any StoreTransaction) async throws -> [String] {
        guard let rankings = value.textArrayValue, !rankings.isEmpty else { throw CaravanError.invalidArgument("rankings", nil, "rank at least one candidate") }
        let candidates = Set(try await lifecycle.snapshot(GroupDecisionsSchema.decisionCandidates, "restaurant_id", of: decision.id, in: tx))
        var seen = Set<String>()
        return try rankings.enumerated().map { index, raw in
            let id = ColumnType.canonicalUUID(raw) ?? raw
            guard candidates.contains(id) else { throw CaravanError.invalidArgument("rankings[\(index)]", raw, "not a candidate of this decision") }
            guard seen.insert(id).inserted else { throw CaravanError.invalidArgument("rankings[\(index)]", raw, "ranked twice") }
            return id
        }
    }

    var finalizeDecision: RPCFunction {
        RPCFunction("finalize_decision", parameters: [RPCParameter("decision_id", .uuid)], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("finalize_decision")
            let decision = try await requireActive(arguments["decision_id"], in: tx)
            try await requireCreatorOrAdmin(decision, caller: caller, in: tx)
            guard decision.method == "tiered" else {
                throw CaravanError.invalidArgument("decision_id", decision.id.textValue, "a \(decision.method) decision is not finalized by a tally")
            }
            guard try await lifecycle.tally(decision, in: tx).ballots > 0 else { throw RPCFailure.raised("decision_id", "no votes to tally yet") }
            _ = try await lifecycle.completeByTally(decision, in: tx)
            return .void
        }
    }

    var pickRestaurant: RPCFunction {
        RPCFunction("pick_restaurant", parameters: [RPCParameter("decision_id", .uuid), RPCParameter("restaurant_id", .uuid)], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("pick_restaurant")
            let decision = try await requireActive(arguments["decision_id"], in: tx)
            try await requireCreatorOrAdmin(decision, caller: caller, in: tx)
            guard decision.method == "manual" else { throw CaravanError.invalidArgument("decision_id", decision.id.textValue, "only a manual decision is picked by hand") }
            let candidates = try await lifecycle.snapshot(GroupDecisionsSchema.decisionCandidates, "restaurant_id", of: decision.id, in: tx)
            let pick = try ManualPick.decide(candidates: candidates, pick: arguments.text("restaurant_id") ?? "")
            _ = try await lifecycle.complete(decision, winner: pick, reasoning: "picked by hand", weights: nil, in: tx)
            return .void
        }
    }

    var closeDecision: RPCFunction {
        RPCFunction("close_decision", parameters: [RPCParameter("decision_id", .uuid)], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("close_decision")
            try await DecisionLifecycle.serialize(decision: arguments["decision_id"], in: tx)
            let decision = try await requireActive(arguments["decision_id"], in: tx)
            try await requireCreatorOrAdmin(decision, caller: caller, in: tx)
            let decisions = GroupDecisionsSchema.decisions
            _ = try await tx.asServiceRole { service in
                try await service.update(decisions, set: RowValues(["status": .text("closed")]), where: try decisions.matching(["id": decision.id, "status": .text("active")]))
            }
            return .void
        }
    }

    /// `expire_decisions() → integer`: how many decisions this call settled (expired, or tallied when tiered with
    /// votes). Callable by the service role and signed-in users: it only does what is due.
    var expireDecisions: RPCFunction {
        RPCFunction("expire_decisions", parameters: [], readOnly: false) { _, tx in
            guard tx.access.identity.role != .anon else { throw CaravanError(.permissionDenied, "permission denied for function expire_decisions") }
            return .scalar(.integer(Int64(try await lifecycle.expireDue(in: tx))))
        }
    }
}
