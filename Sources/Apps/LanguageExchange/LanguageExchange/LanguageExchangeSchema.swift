package import CaravanCore

/// The tables of LangMatcher. Every rule a row can carry alone is a declared CHECK, UNIQUE or
/// FOREIGN KEY; the rules that need another table (language codes against `languages`, proficiency keys ⊆ learning
/// languages after canonicalization) are `LanguageExchangeBehaviours` hooks, so every write path runs them.
package enum LanguageExchangeSchema {
    static func notBlank(_ table: String, _ column: String) -> CheckConstraint {
        CheckConstraint("\(table)_\(column)_not_blank", .column(column, .neq, ""))
    }

    static func flag(_ name: String, _ value: Bool) -> Column {
        Column(name, .boolean, nullable: false, default: .value(.bool(value)))
    }

    static func createdAt() -> Column { Column("created_at", .timestamp, nullable: false, default: .now) }

    static let emptyObject = ColumnDefault.value(.json("{}"))
    static let emptyArray = ColumnDefault.value(ColumnType.textArray([]))

    /// `languages`: ISO 639-3 reference data with English, Arabic and native names. `code` is the canonical code
    /// (ISO 639-1 where one exists, else 639-3), the one profiles store; loaded by `LanguageImporter`.
    package static let languages = TableSchema(
        "languages",
        columns: [
            Column("code", .text, nullable: false), Column("iso639_3", .text, nullable: false), Column("iso639_1", .text),
            Column("iso639_2b", .text), Column("name_en", .text, nullable: false), Column("name_ar", .text),
            Column("native_name", .text), Column("scope", .text), Column("type", .text),
        ],
        primaryKey: ["code"],
        uniques: [["iso639_3"]],
        checks: [notBlank("languages", "code"), notBlank("languages", "iso639_3"), notBlank("languages", "name_en")],
        indexes: [Index("idx_languages_iso639_2b", [IndexKey("iso639_2b")])]
    )

    /// `profiles`: the public card of a user (`id` = the auth user's id). The design's `email` and
    /// `cloudkit_record_id` live in `profile_private` (owner only): policies are per row, so a column readable by
    /// its owner only needs its own table.
    package static let profiles = TableSchema(
        "profiles",
        columns: [
            Column("id", .uuid, nullable: false), Column("first_name", .text, nullable: false), Column("bio", .text),
            Column("age", .integer), Column("location", .text), Column("native_language", .text, nullable: false),
            Column("learning_languages", .textArray, nullable: false),
            Column("proficiency_levels", .json, nullable: false, default: emptyObject),
            Column("learning_goals", .textArray, nullable: false, default: emptyArray),
            Column("profile_image_url", .text), flag("is_premium", false),
            Column("granularity_level", .integer, nullable: false, default: .value(.integer(2))),
            createdAt(), Column("last_active", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        checks: [
            notBlank("profiles", "first_name"),
            CheckConstraint("valid_age", .between("age", "18", "120")),
            CheckConstraint("granularity_level_range", .between("granularity_level", "0", "3")),
            // "At least one": the design's array_length(…) > 0 is NULL, so passes, for '{}'.
            CheckConstraint("valid_languages", .column("learning_languages", .neq, "{}")),
        ],
        indexes: [
            Index("idx_profiles_native_language", [IndexKey("native_language")]),
            Index("idx_profiles_learning_languages", [IndexKey("learning_languages")], kind: .arrayMembership),
            Index("idx_profiles_last_active", [IndexKey("last_active", descending: true)]),
            Index("idx_profiles_location", [IndexKey("location")]),
        ],
        owner: "id",
        // Another user's export (item 8) shows a profile it names as its id and first name only.
        exportCard: ["id", "first_name"]
    )

    /// The order `find_language_matches` reads a tier in: one native language, most recently active first
    /// (migration language-exchange-0002; the 0001 table declaration stays as shipped).
    package static let profilesByNativeActivity = Index("idx_profiles_native_last_active",
                                                       [IndexKey("native_language"), IndexKey("last_active", descending: true), IndexKey("id")])

    /// `profile_private`: what only the owner reads — `email` (unique case-insensitively through `email_key`, its
    /// lowercased form derived on write) and `cloudkit_record_id`.
    package static let profilePrivate = TableSchema(
        "profile_private",
        columns: [
            Column("id", .uuid, nullable: false), Column("email", .text, nullable: false), Column("email_key", .text, nullable: false),
            Column("cloudkit_record_id", .text),
        ],
        primaryKey: ["id"],
        uniques: [["email_key"]],
        foreignKeys: [ForeignKey(["id"], references: "profiles", ["id"], onDelete: .cascade)],
        checks: [notBlank("profile_private", "email")],
        owner: "id"
    )

    package static let userPreferences = TableSchema(
        "user_preferences",
        columns: [
            Column("user_id", .uuid, nullable: false),
            Column("min_age", .integer, nullable: false, default: .value(.integer(18))),
            Column("max_age", .integer, nullable: false, default: .value(.integer(99))),
            Column("max_distance_km", .integer),
            Column("preferred_locations", .textArray, nullable: false, default: emptyArray),
            Column("blocked_users", .textArray, nullable: false, default: emptyArray),
            Column("notification_settings", .json, nullable: false, default: .value(.json(#"{"likes":true,"matches":true,"messages":true}"#))),
            Column("privacy_settings", .json, nullable: false, default: .value(.json(#"{"show_location":true,"show_online":true}"#))),
            Column("updated_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["user_id"],
        foreignKeys: [ForeignKey(["user_id"], references: "profiles", ["id"], onDelete: .cascade)],
        checks: [
            CheckConstraint("user_preferences_min_age", .column("min_age", .gte, "18")),
            CheckConstraint("user_preferences_age_order", .columns("min_age", .lte, "max_age")),
            CheckConstraint("user_preferences_max_distance", .column("max_distance_km", .gt, "0")),
        ],
        owner: "user_id"
    )

    package static let tables = [languages, profiles, profilePrivate, userPreferences, blocks] + matchingTables + messagingTables
}
