package import CaravanCore

extension LanguageExchangeSchema {
    /// The longest message, in Unicode scalars (code points: what PostgreSQL's LIKE `_` and SQLite's GLOB `?` count).
    package static let maxMessageScalars = 1_000

    package static let messages = TableSchema(
        "messages",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("conversation_id", .uuid, nullable: false),
            Column("sender_id", .uuid, nullable: false), Column("receiver_id", .uuid, nullable: false),
            Column("original_text", .text, nullable: false), Column("original_language", .text, nullable: false),
            Column("translated_text", .json, nullable: false, default: emptyObject),
            Column("ai_insights", .json, nullable: false, default: emptyObject),
            createdAt(), Column("edited_at", .timestamp), flag("is_read", false), flag("is_delivered", false),
        ],
        primaryKey: ["id"],
        foreignKeys: [
            ForeignKey(["conversation_id"], references: "conversations", ["id"], onDelete: .cascade),
            ForeignKey(["sender_id"], references: "profiles", ["id"], onDelete: .cascade),
            ForeignKey(["receiver_id"], references: "profiles", ["id"], onDelete: .cascade),
        ],
        checks: [
            CheckConstraint("valid_participants", .columns("sender_id", .neq, "receiver_id")),
            // 1…1,000 scalars: not empty, and not 1,001 single characters followed by anything.
            CheckConstraint("messages_text_length", .and([
                .column("original_text", .neq, ""),
                .not(.column("original_text", .like, String(repeating: "_", count: maxMessageScalars + 1) + "*")),
            ])),
        ],
        indexes: [
            Index("idx_messages_conversation", [IndexKey("conversation_id"), IndexKey("created_at")]),
            Index("idx_messages_created", [IndexKey("created_at", descending: true)]),
            Index("idx_messages_sender", [IndexKey("sender_id")]), Index("idx_messages_receiver", [IndexKey("receiver_id")]),
        ],
        synced: true,
        participants: ["sender_id", "receiver_id"]
    )

    package static let savedPhrases = TableSchema(
        "saved_phrases",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("user_id", .uuid, nullable: false),
            Column("message_id", .uuid), Column("original_text", .text, nullable: false),
            Column("translated_text", .text, nullable: false), Column("language", .text, nullable: false),
            Column("context", .text), Column("cloudkit_record_id", .text),
            Column("saved_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [
            ForeignKey(["user_id"], references: "profiles", ["id"], onDelete: .cascade),
            ForeignKey(["message_id"], references: "messages", ["id"], onDelete: .setNull),
        ],
        indexes: [Index("idx_saved_phrases_user", [IndexKey("user_id")]), Index("idx_saved_phrases_language", [IndexKey("language")])],
        synced: true,
        owner: "user_id"
    )

    package static let analyticsEvents = TableSchema(
        "analytics_events",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("user_id", .uuid, nullable: false),
            Column("event_type", .text, nullable: false),
            Column("event_data", .json, nullable: false, default: emptyObject),
            Column("device_info", .json, nullable: false, default: emptyObject), createdAt(),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["user_id"], references: "profiles", ["id"], onDelete: .cascade)],
        checks: [notBlank("analytics_events", "event_type")],
        indexes: [
            Index("idx_analytics_user", [IndexKey("user_id")]), Index("idx_analytics_type", [IndexKey("event_type")]),
            Index("idx_analytics_created", [IndexKey("created_at", descending: true)]),
        ],
        owner: "user_id"
    )

    package static let translationCache = TableSchema(
        "translation_cache",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("text_hash", .text, nullable: false),
            Column("from_language", .text, nullable: false), Column("to_language", .text, nullable: false),
            Column("translated_text", .text, nullable: false),
            Column("provider", .text, nullable: false, default: .value(.text("openai"))), createdAt(),
            Column("usage_count", .integer, nullable: false, default: .value(.integer(1))),
        ],
        primaryKey: ["id"],
        uniques: [["text_hash", "from_language", "to_language", "provider"]],
        checks: [
            CheckConstraint("translation_cache_hash", .column("text_hash", .match, "^[0-9a-f]{64}$")),
            CheckConstraint("translation_cache_usage", .column("usage_count", .gte, "1")),
        ],
        indexes: [Index("idx_translation_usage", [IndexKey("usage_count", descending: true)])]
    )

    static let messagingTables = [messages, savedPhrases, analyticsEvents, translationCache]
}
