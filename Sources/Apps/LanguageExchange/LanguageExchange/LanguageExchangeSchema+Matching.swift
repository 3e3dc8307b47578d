package import CaravanCore

extension LanguageExchangeSchema {
    package static let swipeDirections = ["left", "right", "super"]
    package static let matchTypes = ["normal", "super_like"]

    /// One row per pair, stored ordered (`user1_id < user2_id`); `is_mutual` is derived on write from the two likes
    /// (the design's generated column).
    package static let matches = TableSchema(
        "matches",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user1_id", .uuid, nullable: false), Column("user2_id", .uuid, nullable: false),
            flag("user1_liked", false), flag("user2_liked", false), flag("is_mutual", false),
            Column("match_type", .text, nullable: false, default: .value(.text("normal"))),
            Column("matched_at", .timestamp, nullable: false, default: .now),
            Column("conversation_id", .uuid), flag("is_active", true),
        ],
        primaryKey: ["id"],
        uniques: [["user1_id", "user2_id"], ["id", "user1_id", "user2_id"]],
        foreignKeys: [
            ForeignKey(["user1_id"], references: "profiles", ["id"], onDelete: .cascade),
            ForeignKey(["user2_id"], references: "profiles", ["id"], onDelete: .cascade),
        ],
        checks: [
            CheckConstraint("matches_match_type", .oneOf("match_type", matchTypes)),
            // Ordered pair: also rules out a self-match (the design's no_self_match).
            CheckConstraint("matches_ordered_pair", .columns("user1_id", .lt, "user2_id")),
        ],
        indexes: [
            Index("idx_matches_user1", [IndexKey("user1_id")]), Index("idx_matches_user2", [IndexKey("user2_id")]),
            Index("idx_matches_mutual", [IndexKey("is_mutual")], where: .isTrue("is_mutual")),
        ],
        synced: true,
        participants: ["user1_id", "user2_id"]
    )

    package static let swipes = TableSchema(
        "swipes",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("swiper_id", .uuid, nullable: false), Column("swiped_id", .uuid, nullable: false),
            Column("direction", .text, nullable: false), Column("swiped_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["swiper_id", "swiped_id"]],
        foreignKeys: [
            ForeignKey(["swiper_id"], references: "profiles", ["id"], onDelete: .cascade),
            ForeignKey(["swiped_id"], references: "profiles", ["id"], onDelete: .cascade),
        ],
        checks: [
            CheckConstraint("swipes_direction", .oneOf("direction", swipeDirections)),
            CheckConstraint("no_self_swipe", .columns("swiper_id", .neq, "swiped_id")),
        ],
        indexes: [Index("idx_swipes_swiper", [IndexKey("swiper_id")]), Index("idx_swipes_swiped_at", [IndexKey("swiped_at", descending: true)])],
        owner: "swiper_id"
    )

    /// One conversation per match (`UNIQUE (match_id)`); its stats are kept by the `messages` hook. `user1_id` and
    /// `user2_id` repeat the match's pair (a foreign key on all three keeps them equal), so the participants policy
    /// needs no subquery.
    package static let conversations = TableSchema(
        "conversations",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("match_id", .uuid, nullable: false),
            Column("user1_id", .uuid, nullable: false), Column("user2_id", .uuid, nullable: false),
            createdAt(), Column("last_message_at", .timestamp), Column("last_message_preview", .text),
            Column("message_count", .integer, nullable: false, default: .value(.integer(0))), flag("is_active", true),
        ],
        primaryKey: ["id"],
        uniques: [["match_id"]],
        foreignKeys: [ForeignKey(["match_id", "user1_id", "user2_id"], references: "matches", ["id", "user1_id", "user2_id"], onDelete: .cascade)],
        checks: [CheckConstraint("valid_message_count", .column("message_count", .gte, "0"))],
        indexes: [Index("idx_conversations_last_message", [IndexKey("last_message_at", descending: true)])],
        synced: true,
        participants: ["user1_id", "user2_id"]
    )

    /// `blocks`: one row per (blocker, blocked) pair of `user_preferences.blocked_users`, kept by its hook, so
    /// policies can ask "is this pair blocked" with an equality subquery. Service role only.
    package static let blocks = TableSchema(
        "blocks",
        columns: [Column("blocker_id", .uuid, nullable: false), Column("blocked_id", .uuid, nullable: false)],
        primaryKey: ["blocker_id", "blocked_id"],
        foreignKeys: [ForeignKey(["blocker_id"], references: "user_preferences", ["user_id"], onDelete: .cascade)],
        indexes: [Index("idx_blocks_blocked", [IndexKey("blocked_id"), IndexKey("blocker_id")])]
    )

    static let matchingTables = [matches, swipes, conversations]
}
