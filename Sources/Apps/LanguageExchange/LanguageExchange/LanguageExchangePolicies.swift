package import CaravanCore

/// Row-level security of LangMatcher. Closed by default: `translation_cache` and `blocks` have
/// no policy (service role only); swipes, matches and conversations are written only through the RPCs.
package enum LanguageExchangePolicies {
    static let signedIn: Set<Role> = [.authenticated]

    /// Neither user of the pair in columns `a` and `b` of the guarded row blocks the other.
    static func notBlocked(_ a: String, _ b: String) -> PolicyRule {
        .and([
            .not(.exists(table: "blocks", where: [.matchesOuter(inner: "blocker_id", outer: a), .matchesOuter(inner: "blocked_id", outer: b)])),
            .not(.exists(table: "blocks", where: [.matchesOuter(inner: "blocker_id", outer: b), .matchesOuter(inner: "blocked_id", outer: a)])),
        ])
    }

    /// The caller is one of the two users in columns `a` and `b`, and the pair is not blocked.
    static func participant(_ a: String, _ b: String) -> PolicyRule {
        .and([.or([.ownedBy(a), .ownedBy(b)]), notBlocked(a, b)])
    }

    /// The conversation of the guarded message joins its sender and receiver and is active.
    static let activeConversationOfPair = PolicyRule.or([
        .exists(table: "conversations", where: [
            .matchesOuter(inner: "id", outer: "conversation_id"), .matchesOuter(inner: "user1_id", outer: "sender_id"),
            .matchesOuter(inner: "user2_id", outer: "receiver_id"), .equals(inner: "is_active", .literal(.bool(true))),
        ]),
        .exists(table: "conversations", where: [
            .matchesOuter(inner: "id", outer: "conversation_id"), .matchesOuter(inner: "user2_id", outer: "sender_id"),
            .matchesOuter(inner: "user1_id", outer: "receiver_id"), .equals(inner: "is_active", .literal(.bool(true))),
        ]),
    ])

    static func owned(_ column: String) -> [TablePolicy] {
        [TablePolicy("own_rows", for: TablePolicy.allCommands, to: signedIn, using: .ownedBy(column))]
    }

    package static let all: [String: [TablePolicy]] = [
        "languages": [TablePolicy("languages_read", for: [.select], to: [.anon, .authenticated])],
        "profiles": [
            TablePolicy("profiles_signed_in_read", for: [.select], to: signedIn),
            TablePolicy("profiles_own_write", for: [.insert, .update, .delete], to: signedIn, using: .ownedBy("id")),
        ],
        "profile_private": owned("id"),
        "user_preferences": owned("user_id"),
        "saved_phrases": owned("user_id"),
        "swipes": [TablePolicy("swipes_swiper_read", for: [.select], to: signedIn, using: .ownedBy("swiper_id"))],
        "matches": [TablePolicy("matches_participants_read", for: [.select], to: signedIn, using: participant("user1_id", "user2_id"))],
        "conversations": [TablePolicy("conversations_participants_read", for: [.select], to: signedIn, using: participant("user1_id", "user2_id"))],
        "messages": [
            TablePolicy("messages_participants_read", for: [.select], to: signedIn, using: participant("sender_id", "receiver_id")),
            TablePolicy("messages_sender_insert", for: [.insert], to: signedIn,
                        check: .and([.ownedBy("sender_id"), activeConversationOfPair, notBlocked("sender_id", "receiver_id")])),
        ],
        "analytics_events": [TablePolicy("analytics_events_insert_own", for: [.insert], to: signedIn, check: .ownedBy("user_id"))],
    ]
}
