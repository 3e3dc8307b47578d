package import CaravanCore

extension AuthSchema {
    /// GoTrue's `flow_state` for the PKCE flow: an OAuth sign-in that reached `/callback` leaves one row, found by the
    /// SHA-256 hash of the auth code handed to the client; `grant_type=pkce` checks the challenge and deletes it.
    package static let flowState = TableSchema(
        "auth_flow_state",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("auth_code_hash", .text, nullable: false),
            Column("code_challenge", .text, nullable: false),
            /// `s256` or `plain`.
            Column("code_challenge_method", .text, nullable: false),
            Column("provider", .text, nullable: false),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("expires_at", .timestamp, nullable: false),
        ],
        primaryKey: ["id"],
        uniques: [["auth_code_hash"]],
        foreignKeys: [ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("valid_code_challenge_method", .oneOf("code_challenge_method", ["s256", "plain"]))],
        indexes: [Index("idx_auth_flow_state_user", [IndexKey("user_id")])],
        exposure: .secret
    )
}
