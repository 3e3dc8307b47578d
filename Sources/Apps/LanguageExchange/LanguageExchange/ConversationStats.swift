import CaravanCore

/// The design's `on_new_message` trigger, kept by the pipeline after every statement inserting, updating or deleting messages:
/// `message_count` (+1 / −1), and `last_message_at` / `last_message_preview` (its first 100 scalars) from the
/// conversation's latest remaining message.
enum ConversationStats {
    static let previewScalars = 100

    /// The first `previewScalars` Unicode scalars of `text`.
    static func preview(of text: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.prefix(previewScalars))
        return String(scalars)
    }

    /// Once per statement: each conversation the statement's messages left or joined is refreshed once, with the
    /// net change of its count, in the order of the conversations' ids (two statements touching the same
    /// conversations take their locks in one order).
    static func afterStatement(_ writes: [RowWrite], _ tx: any StoreTransaction) async throws {
        var countChanges: [Value: Int64] = [:]
        for write in writes {
            let before = write.old?["conversation_id"]
            let after = write.new?["conversation_id"]
            if let after { countChanges[after, default: 0] += before == after ? 0 : 1 }
            if let before, before != after { countChanges[before, default: 0] -= 1 }
        }
        for (conversation, change) in countChanges.sorted(by: { ($0.key.textValue ?? "") < ($1.key.textValue ?? "") }) {
            try await refresh(conversation, countChange: change, in: tx)
        }
    }

    static func refresh(_ conversation: Value, countChange: Int64, in tx: any StoreTransaction) async throws {
        let conversations = LanguageExchangeSchema.conversations
        let messages = LanguageExchangeSchema.messages
        let target = try conversations.equals("id", conversation)
        // Writes to one conversation's messages run one after the other from here: the count read is the latest.
        try await tx.serialize(on: "language-exchange.conversation:\(conversation.textValue ?? "")")
        // Gone with its match (a cascade): nothing to keep.
        guard let current = try await tx.rows(conversations, ["message_count"], where: target).first?[0].integerValue else { return }
        let latest = try await tx.rows(messages, ["created_at", "original_text"], where: try messages.equals("conversation_id", conversation),
                                 order: [OrderTerm(column: "created_at", direction: .descending), OrderTerm(column: "id", direction: .descending)],
                                 limit: 1).first
        var values = RowValues(["message_count": .integer(current + countChange)])
        values.set("last_message_at", latest?[0] ?? .null)
        values.set("last_message_preview", latest.flatMap { $0[1].textValue }.map { .text(preview(of: $0)) } ?? .null)
        _ = try await tx.update(conversations, set: values, where: target)
    }
}
