import CaravanCore

/// What the pipeline does for LangMatcher's tables besides their declarations, on every write path (REST, RPC,
/// sync push), in the write's transaction.
enum LanguageExchangeBehaviours {
    static let all: [TableBehaviour] = [
        TableBehaviour("profiles", afterWrite: canonicalLanguages),
        TableBehaviour("profile_private", derived: [DerivedColumn("email_key") { row in row.text("email").map { .text($0.lowercased()) } ?? .null }]),
        TableBehaviour("matches", derived: [DerivedColumn("is_mutual") { row in
            .bool(row["user1_liked"].boolValue == true && row["user2_liked"].boolValue == true)
        }]),
        TableBehaviour("messages", afterWrite: ConversationStats.afterWrite),
        TableBehaviour("user_preferences", touches: "updated_at", afterWrite: Blocks.afterWrite),
    ]

    /// Stores a profile's language codes canonically (`ara` → `ar`); unknown codes and proficiency keys outside the
    /// learning languages are 23514.
    static func canonicalLanguages(_ write: RowWrite, _ tx: any StoreTransaction) throws {
        guard let row = write.new else { return }
        let changes = try ProfileLanguages.canonicalize(row, in: tx)
        guard !changes.columns.isEmpty else { return }
        let profiles = LanguageExchangeSchema.profiles
        _ = try tx.update(profiles, set: changes, where: try profiles.equals("id", row["id"]))
    }
}
