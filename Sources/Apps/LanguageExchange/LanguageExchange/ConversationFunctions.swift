import CaravanCore

/// `mark_read(conversation_id, up_to)` and `unmatch(match_id)`: what a participant may change of messages and
/// matches, which have no update policy of their own.
enum ConversationFunctions {
    /// Marks the caller's received messages of the conversation up to `up_to` (default: all) read; returns how many
    /// changed. 42501 unless the caller may read the conversation.
    static let markRead = RPCFunction("mark_read", parameters: [
        RPCParameter("conversation_id", .uuid), RPCParameter("up_to", .timestamp, default: .null),
    ], readOnly: false) { arguments, tx in
        let caller = try tx.requireCaller("mark_read")
        let conversations = LanguageExchangeSchema.conversations
        guard try await tx.count(conversations, where: try conversations.equals("id", arguments["conversation_id"])) == 1 else {
            throw CaravanError.denied("conversation_id", "not a conversation of yours")
        }
        let messages = LanguageExchangeSchema.messages
        var filter = [try messages.matching(["conversation_id": arguments["conversation_id"], "receiver_id": .text(caller), "is_read": .bool(false)])]
        if !arguments["up_to"].isNull { filter.append(.compare(try messages.requireColumn("created_at"), .lte, arguments["up_to"])) }
        let changed = try await tx.asServiceRole { service in try await service.update(messages, set: RowValues(["is_read": .bool(true)]), where: .and(filter)) }
        return .scalar(.integer(Int64(changed.updated)))
    }

    /// Ends a match for both: the match becomes inactive, and with it its conversation (no new messages). Idempotent.
    static let unmatch = RPCFunction("unmatch", parameters: [RPCParameter("match_id", .uuid)], readOnly: false) { arguments, tx in
        _ = try tx.requireCaller("unmatch")
        let matches = LanguageExchangeSchema.matches
        guard try await tx.count(matches, where: try matches.equals("id", arguments["match_id"])) == 1 else {
            throw CaravanError.denied("match_id", "not a match of yours")
        }
        _ = try await tx.asServiceRole { service in
            try await service.update(matches, set: RowValues(["is_active": .bool(false)]), where: try matches.equals("id", arguments["match_id"]))
        }
        return .void
    }
}
