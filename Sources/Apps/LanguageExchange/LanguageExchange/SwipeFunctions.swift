import CaravanCore

/// `process_swipe(p_swiper_id, p_swiped_id, p_direction) → {is_match, match_id, conversation_id}` (item 4).
///
/// Atomic and idempotent: the swipe is recorded once (a repeat keeps the first direction and returns the current
/// state); a match exists when the *stored* swipes of both sides are right or super, and it is recorded once, with
/// its one conversation. Swipes of one pair of users are serialized (`serialize(on:)` with the pair's key, before
/// any read), so two sides swiping at the same instant see each other's swipe in one order or the other: exactly
/// one match.
enum SwipeFunctions {
    static let likes: Set<String> = ["right", "super"]

    static let processSwipe = RPCFunction("process_swipe", parameters: [
        RPCParameter("p_swiper_id", .uuid), RPCParameter("p_swiped_id", .uuid), RPCParameter("p_direction", .text),
    ], readOnly: false) { arguments, tx in
        let swiper = try tx.requireCaller("process_swipe", is: arguments["p_swiper_id"], parameter: "p_swiper_id")
        let direction = arguments.text("p_direction") ?? ""
        guard LanguageExchangeSchema.swipeDirections.contains(direction) else {
            throw Failure.check("p_direction", "must be left, right or super", value: direction)
        }
        guard let swiped = arguments.text("p_swiped_id"), swiped != swiper else { throw Failure.check("p_swiped_id", "you cannot swipe yourself") }
        let state = try await tx.asServiceRole { service in try await record(swiper: swiper, swiped: swiped, direction: direction, in: service) }
        return .scalar(.json(state.json))
    }

    struct State {
        var match: Value = .null
        var conversation: Value = .null
        var isMatch = false

        var json: String {
            JSONValue.object([("is_match", .bool(isMatch)), ("match_id", JSONValue(match)), ("conversation_id", JSONValue(conversation))]).jsonText
        }
    }

    static func record(swiper: String, swiped: String, direction: String, in tx: any StoreTransaction) async throws -> State {
        let swipes = LanguageExchangeSchema.swipes
        let (user1, user2) = swiper < swiped ? (swiper, swiped) : (swiped, swiper)
        try await tx.serialize(on: "language-exchange.swipe-pair:\(user1):\(user2)")
        _ = try await tx.insert([RowValues(["swiper_id": .text(swiper), "swiped_id": .text(swiped), "direction": .text(direction)])],
                          into: swipes, conflict: ConflictTarget(columns: ["swiper_id", "swiped_id"], resolution: .ignore))
        let mine = try await storedDirection(swiper, swiped, in: tx)
        let theirs = try await storedDirection(swiped, swiper, in: tx)
        let matches = LanguageExchangeSchema.matches
        let pair = try matches.matching(["user1_id": .text(user1), "user2_id": .text(user2)])
        let bothLike = likes.contains(mine ?? "") && likes.contains(theirs ?? "")
        let blocked = try await Blocks.blocked(swiper, swiped, in: tx)
        let type = mine == "super" || theirs == "super" ? "super_like" : "normal"
        guard !blocked else { return State() }
        var match = try await tx.row(matches, where: pair)
        if let existing = match, existing["is_mutual"].boolValue != true {
            // A one-sided row (written by the service role): it becomes the match only when both stored swipes like.
            guard bothLike else { return State() }
            let liked = RowValues(["user1_liked": .bool(true), "user2_liked": .bool(true), "match_type": .text(type)])
            match = try await tx.update(matches, set: liked, where: pair).rows.first.map { StoredRow(table: matches, values: $0) }
        } else if match == nil {
            guard bothLike else { return State() }
            let inserted = try await tx.insert([RowValues(["user1_id": .text(user1), "user2_id": .text(user2), "user1_liked": .bool(true),
                                                     "user2_liked": .bool(true), "match_type": .text(type)])], into: matches, conflict: nil)
            match = inserted.rows.first.map { StoredRow(table: matches, values: $0) }
        }
        guard let match else { throw CaravanError(.internalFailure, "process_swipe wrote no match") }
        let conversation = try await ensureConversation(of: match, in: tx)
        return State(match: match["id"], conversation: conversation, isMatch: match["is_active"].boolValue == true)
    }

    static func storedDirection(_ swiper: String, _ swiped: String, in tx: any StoreTransaction) async throws -> String? {
        let swipes = LanguageExchangeSchema.swipes
        return try await tx.rows(swipes, ["direction"], where: try swipes.matching(["swiper_id": .text(swiper), "swiped_id": .text(swiped)])).first?[0].textValue
    }

    /// The match's conversation, made (and linked from the match) when it has none.
    static func ensureConversation(of match: StoredRow, in tx: any StoreTransaction) async throws -> Value {
        let conversations = LanguageExchangeSchema.conversations
        if let id = try await tx.rows(conversations, ["id"], where: try conversations.equals("match_id", match["id"])).first?[0] { return id }
        let made = try await tx.insert([RowValues(["match_id": match["id"], "user1_id": match["user1_id"], "user2_id": match["user2_id"],
                                             "is_active": .bool(match["is_active"].boolValue == true && match["is_mutual"].boolValue == true)])], into: conversations, conflict: nil)
        guard let id = made.rows.first?[conversations.position(of: "id") ?? 0] else { throw CaravanError(.internalFailure, "process_swipe wrote no conversation") }
        let matches = LanguageExchangeSchema.matches
        _ = try await tx.update(matches, set: RowValues(["conversation_id": id]), where: try matches.equals("id", match["id"]))
        return id
    }
}
