import CaravanCore

extension DecisionFunctions {
    /// `create_decision(collection_id, method, deadline, visit_date, group_id, candidate_ids, participant_ids) → uuid`.
    ///
    /// Candidates default to the collection's restaurants (at least one, two for tiered; given ones must belong to
    /// the collection); participants to the group's members, or the caller. The deadline, when given, is in the
    /// future and not after the visit date. A random decision completes at once. The other participants are
    /// notified (decision started).
    var createDecision: RPCFunction {
        RPCFunction("create_decision", parameters: [
            RPCParameter("collection_id", .uuid), RPCParameter("method", .text), RPCParameter("deadline", .timestamp, default: .null),
            RPCParameter("visit_date", .timestamp), RPCParameter("group_id", .uuid, default: .null),
            RPCParameter("candidate_ids", .textArray, default: .null), RPCParameter("participant_ids", .textArray, default: .null),
        ], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("create_decision")
            let method = arguments.text("method") ?? ""
            guard GroupDecisionsSchema.methods.contains(method) else { throw CaravanError.invalidArgument("method", method, "must be random, tiered or manual") }
            try validateDates(arguments)
            let collection = try await readableCollection(arguments["collection_id"], in: tx)
            let group = arguments["group_id"].isNull ? collection.group : arguments["group_id"]
            if !group.isNull, try await tx.membership(of: caller, in: group) == nil { throw CaravanError.denied("group_id", "you are not a member of the group") }
            let candidates = try await chooseCandidates(arguments["candidate_ids"], collection: collection.id, method: method, in: tx)
            let participants = try await chooseParticipants(arguments["participant_ids"], group: group, caller: caller, in: tx)
            let decision = try await insertDecision(arguments, method: method, group: group, caller: caller, candidates: candidates, participants: participants, in: tx)
            try await lifecycle.notifier.notify(.groupDecision, users: participants.filter { $0 != caller }, title: "Where should we eat?",
                                          message: "A \(method) decision was started", data: ["decisionId": decision.id.textValue ?? "", "groupId": group.textValue ?? ""], in: tx)
            if method == "random" {
                let pick = try RandomPick.decide(candidates: candidates, random: random)
                _ = try await lifecycle.complete(decision, winner: pick.winner, reasoning: "random pick among \(candidates.count)", weights: pick.weights, in: tx)
            }
            return .scalar(decision.id)
        }
    }

    func validateDates(_ arguments: RPCArguments) throws {
        guard let visit = arguments.text("visit_date").flatMap(Timestamp.parseMicroseconds) else {
            throw CaravanError.invalidArgument("visit_date", arguments.text("visit_date"), "required")
        }
        guard let deadlineText = arguments.text("deadline") else { return }
        guard let deadline = Timestamp.parseMicroseconds(deadlineText) else { throw CaravanError.invalidArgument("deadline", deadlineText, "not a timestamp") }
        guard deadline > lifecycle.clock.microseconds else { throw CaravanError.invalidArgument("deadline", deadlineText, "must be in the future") }
        guard deadline <= visit else { throw CaravanError.invalidArgument("deadline", deadlineText, "must not be after visit_date") }
    }

    /// The collection (id, group) if the caller may read it, else 22023 naming `collection_id`.
    func readableCollection(_ id: Value, in tx: any StoreTransaction) async throws -> (id: Value, group: Value) {
        let collections = GroupDecisionsSchema.collections
        guard let row = try await tx.rows(collections, ["id", "group_id"], where: try collections.equals("id", id)).first else {
            throw CaravanError.invalidArgument("collection_id", id.textValue, "no such collection, or not yours to read")
        }
        return (row[0], row[1])
    }

    func chooseCandidates(_ given: Value, collection: Value, method: String, in tx: any StoreTransaction) async throws -> [String] {
        let items = GroupDecisionsSchema.collectionRestaurants
        let inCollection = try await tx.asServiceRole { service in
            try await service.rows(items, ["restaurant_id", "position"], where: try items.equals("collection_id", collection))
                .sorted { ($0[1].integerValue ?? 0) < ($1[1].integerValue ?? 0) }.compactMap { $0[0].textValue }
        }
        var candidates = inCollection
        if !given.isNull {
            guard let ids = given.textArrayValue else { throw CaravanError.invalidArgument("candidate_ids", nil, "must be an array of restaurant ids") }
            let allowed = Set(inCollection)
            candidates = try ids.enumerated().map { index, raw in
                let id = ColumnType.canonicalUUID(raw) ?? raw
                guard allowed.contains(id) else { throw CaravanError.invalidArgument("candidate_ids[\(index)]", raw, "not a restaurant of the collection") }
                return id
            }
            candidates = try validatedCandidates(candidates, field: "candidate_ids")
        }
        let needed = method == "tiered" ? 2 : 1
        guard candidates.count >= needed else {
            throw CaravanError.invalidArgument("candidate_ids", String(candidates.count), "a \(method) decision needs at least \(needed) candidate\(needed == 1 ? "" : "s")")
        }
        return candidates
    }

    func chooseParticipants(_ given: Value, group: Value, caller: String, in tx: any StoreTransaction) async throws -> [String] {
        let members = GroupDecisionsSchema.groupMembers
        let groupMembers: [String] = group.isNull ? [caller] : try await tx.asServiceRole { service in
            try await service.rows(members, ["user_id"], where: try members.equals("group_id", group)).compactMap { $0[0].textValue }
        }
        guard !given.isNull else { return groupMembers }
        guard let ids = given.textArrayValue, !ids.isEmpty else { throw CaravanError.invalidArgument("participant_ids", nil, "must be a non-empty array of user ids") }
        let allowed = Set(groupMembers)
        var seen = Set<String>()
        return try ids.enumerated().map { index, raw in
            let id = ColumnType.canonicalUUID(raw) ?? raw
            guard allowed.contains(id) else { throw CaravanError.invalidArgument("participant_ids[\(index)]", raw, group.isNull ? "a personal decision has only you" : "not a member of the group") }
            guard seen.insert(id).inserted else { throw CaravanError.invalidArgument("participant_ids[\(index)]", raw, "listed twice") }
            return id
        }
    }

    func insertDecision(_ arguments: RPCArguments, method: String, group: Value, caller: String, candidates: [String], participants: [String],
                        in tx: any StoreTransaction) async throws -> DecisionRecord {
        let decisions = GroupDecisionsSchema.decisions
        return try await tx.asServiceRole { service in
            let row = RowValues(["type": .text(group.isNull ? "personal" : "group"), "collection_id": arguments["collection_id"], "group_id": group,
                                 "created_by": .text(caller), "method": .text(method), "deadline": arguments["deadline"], "visit_date": arguments["visit_date"]])
            let inserted = try await service.insert([row], into: decisions, conflict: nil)
            guard let stored = inserted.rows.first else { throw CaravanError(.internalFailure, "create_decision wrote no row") }
            let id = stored[decisions.position(of: "id") ?? 0]
            _ = try await service.insert(candidates.map { RowValues(["decision_id": id, "restaurant_id": .text($0)]) }, into: GroupDecisionsSchema.decisionCandidates, conflict: nil)
            _ = try await service.insert(participants.map { RowValues(["decision_id": id, "user_id": .text($0)]) }, into: GroupDecisionsSchema.decisionParticipants, conflict: nil)
            return DecisionRecord(DecisionRecord.columns.map { stored[decisions.position(of: $0) ?? 0] })
        }
    }
}

