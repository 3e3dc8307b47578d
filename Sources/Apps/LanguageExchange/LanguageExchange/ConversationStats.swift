import CaravanCore

/// The design's `on_new_message` trigger, kept by the pipeline on every insert, update and delete of a message:
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

    static func afterWrite(_ write: RowWrite, _ tx: any StoreTransaction) async throws {
        let before = write.old?["conversation_id"]
        let after = write.new?["conversation_id"]
        if let after, before != after { try await refresh(after, countChange: 1, in: tx) }
        if let before, before != after { try await refresh(before, countChange: -1, in: tx) }
        if let after, before == after { try await refresh(after, countChange: 0, in: tx) }
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
