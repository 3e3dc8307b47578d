package import CaravanCore

/// The tables of multi-factor authentication and reauthentication (migration `auth-0003-mfa`): GoTrue's
/// `mfa_factors` and `mfa_challenges`, and the pending reauthentication nonce GoTrue keeps on the user row. Secret,
/// like every auth table.
extension AuthSchema {
    /// A TOTP factor: its base32 secret, whether a code has proved it (`verified`), and the last time step a code was
    /// accepted for (a code, or an earlier step's code, is never accepted twice).
    package static let mfaFactors = TableSchema(
        "auth_mfa_factors",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("friendly_name", .text),
            Column("factor_type", .text, nullable: false),
            Column("status", .text, nullable: false),
            Column("secret", .text, nullable: false),
            Column("last_used_step", .integer),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("updated_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        checks: [
            CheckConstraint("valid_factor_type", .oneOf("factor_type", ["totp"])),
            CheckConstraint("valid_factor_status", .oneOf("status", ["unverified", "verified"])),
        ],
        indexes: [Index("idx_auth_mfa_factors_user", [IndexKey("user_id")])],
        exposure: .secret
    )

    /// A challenge of a factor: answered once (`verified_at`), from the address that asked for it, before it expires.
    package static let mfaChallenges = TableSchema(
        "auth_mfa_challenges",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("factor_id", .uuid, nullable: false),
            Column("ip", .text, nullable: false),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("verified_at", .timestamp),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["factor_id"], references: "auth_mfa_factors", ["id"], onDelete: .cascade)],
        indexes: [Index("idx_auth_mfa_challenges_factor", [IndexKey("factor_id")])],
        exposure: .secret
    )

    /// The pending reauthentication nonce of a user (`GET /reauthenticate`), stored as a SHA-256 hash.
    package static let reauthentications = TableSchema(
        "auth_reauthentications",
        columns: [
            Column("user_id", .uuid, nullable: false),
            Column("code_hash", .text, nullable: false),
            Column("attempts", .integer, nullable: false, default: .value(.integer(0))),
            Column("sent_at", .timestamp, nullable: false),
            Column("expires_at", .timestamp, nullable: false),
        ],
        primaryKey: ["user_id"],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        exposure: .secret
    )

    /// The tables of `auth-0003-mfa`, in creation order.
    package static let mfaTables = [mfaFactors, mfaChallenges, reauthentications]
}
