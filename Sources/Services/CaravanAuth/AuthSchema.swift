package import CaravanCore

/// The auth tables (GoTrue's `auth.identities`, `auth.sessions`, `auth.refresh_tokens`, one-time codes and the
/// development outbox). All are secret: never reachable through REST and never in the change log.
/// Users themselves live in `SystemModule.users`, which app tables reference.
package enum AuthSchema {
    package static let identities = TableSchema(
        "auth_identities",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("provider", .text, nullable: false),
            /// The provider's subject: the user id for email/phone, Apple's `sub` for apple.
            Column("provider_id", .text, nullable: false),
            Column("identity_data", .json, nullable: false, default: .value(.json("{}"))),
            Column("last_sign_in_at", .timestamp),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("updated_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["provider", "provider_id"]],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        indexes: [Index("idx_auth_identities_user", [IndexKey("user_id")])],
        exposure: .secret
    )

    package static let sessions = TableSchema(
        "auth_sessions",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("aal", .text, nullable: false, default: .value(.text("aal1"))),
            /// `[{"method":"password","timestamp":1767225600}]`
            Column("amr", .json, nullable: false, default: .value(.json("[]"))),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("refreshed_at", .timestamp),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        indexes: [Index("idx_auth_sessions_user", [IndexKey("user_id")])],
        exposure: .secret
    )

    /// Refresh tokens are stored as SHA-256 hashes: a copy of the database does not hand out sessions.
    package static let refreshTokens = TableSchema(
        "auth_refresh_tokens",
        columns: [
            Column("token_hash", .text, nullable: false),
            Column("session_id", .uuid, nullable: false),
            Column("parent_hash", .text),
            Column("revoked", .boolean, nullable: false, default: .value(.bool(false))),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("revoked_at", .timestamp),
        ],
        primaryKey: ["token_hash"],
        foreignKeys: [ForeignKey(["session_id"], references: "auth_sessions", ["id"], onDelete: .cascade)],
        indexes: [
            Index("idx_auth_refresh_tokens_session", [IndexKey("session_id")]),
            Index("idx_auth_refresh_tokens_parent", [IndexKey("parent_hash")]),
        ],
        exposure: .secret
    )

    /// One pending one-time code per user and purpose; the code itself is stored as a SHA-256 hash.
    package static let codes = TableSchema(
        "auth_codes",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("purpose", .text, nullable: false),
            Column("recipient", .text, nullable: false),
            Column("code_hash", .text, nullable: false),
            Column("attempts", .integer, nullable: false, default: .value(.integer(0))),
            Column("sent_at", .timestamp, nullable: false),
            Column("expires_at", .timestamp, nullable: false),
        ],
        primaryKey: ["id"],
        uniques: [["user_id", "purpose"]],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("valid_code_purpose", .oneOf("purpose", OneTimeCodePurpose.allCases.map(\.rawValue)))],
        indexes: [Index("idx_auth_codes_recipient", [IndexKey("recipient"), IndexKey("purpose")])],
        exposure: .secret
    )

    /// Messages the development sender "sent": read by developers and tests instead of a mailbox.
    package static let outbox = TableSchema(
        "auth_outbox",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("channel", .text, nullable: false),
            Column("recipient", .text, nullable: false),
            Column("subject", .text, nullable: false),
            Column("body", .text, nullable: false),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        indexes: [Index("idx_auth_outbox_recipient", [IndexKey("recipient"), IndexKey("created_at")])],
        exposure: .secret
    )

    package static let tables = [identities, sessions, refreshTokens, codes, outbox, flowState] + mfaTables
}

/// What a one-time code proves.
package enum OneTimeCodePurpose: String, Sendable, CaseIterable {
    /// Confirmation of a sign-up with a password (email or SMS; `/verify` types signup, email, sms).
    case signup
    /// Passwordless sign-in by email (`/verify` types email, magiclink, invite).
    case email
    /// Passwordless sign-in by SMS (`/verify` type sms).
    case sms
    case recovery
    case emailChange = "email_change"
    case phoneChange = "phone_change"
}
