import CaravanCore

/// What the pipeline does for LangMatcher's tables besides their declarations, on every write path (REST, RPC,
/// sync push), in the write's transaction.
enum LanguageExchangeBehaviours {
    static let all: [TableBehaviour] = [
        TableBehaviour("profiles", afterWrite: canonicalLanguages),
        TableBehaviour("profile_private", derived: [DerivedColumn("email_key") { row in row.text("email").map { .text($0.lowercased()) } ?? .null }]),
        TableBehaviour("matches", derived: [DerivedColumn("is_mutual") { row in
            .bool(row["user1_liked"].boolValue == true && row["user2_liked"].boolValue == true)
        }], afterWrite: conversationFollowsMatch),
        TableBehaviour("messages", afterStatement: ConversationStats.afterStatement),
        TableBehaviour("user_preferences", touches: "updated_at", afterWrite: Blocks.afterWrite),
    ]

    /// A conversation is active exactly while its match is active and mutual, whoever changes the match (`unmatch`,
    /// the service role): the message insert policy reads the conversation's flag.
    static func conversationFollowsMatch(_ write: RowWrite, _ tx: any StoreTransaction) async throws {
        guard write.operation == .update, let new = write.new else { return }
        let active = new["is_active"].boolValue == true && new["is_mutual"].boolValue == true
        let conversations = LanguageExchangeSchema.conversations
        let stale = BoundPredicate.and([try conversations.equals("match_id", new["id"]), .compare(try conversations.requireColumn("is_active"), .neq, .bool(active))])
        _ = try await tx.update(conversations, set: RowValues(["is_active": .bool(active)]), where: stale)
    }

    /// Stores a profile's language codes canonically (`ara` → `ar`); unknown codes and proficiency keys outside the
    /// learning languages are 23514.
    static func canonicalLanguages(_ write: RowWrite, _ tx: any StoreTransaction) async throws {
        guard let row = write.new else { return }
        let changes = try await ProfileLanguages.canonicalize(row, in: tx)
        guard !changes.columns.isEmpty else { return }
        let profiles = LanguageExchangeSchema.profiles
        _ = try await tx.update(profiles, set: changes, where: try profiles.equals("id", row["id"]))
    }
}
