extension SystemModule {
    /// Deployment secrets kept in the database (`caravan_secrets`), one row per secret `name`. A PostgreSQL deployment
    /// keeps its JWT signing secret here (row `jwt`), so every instance on the database signs and verifies with the
    /// same key. SQLite deployments keep theirs in the data directory (`jwt_secret.json`, mode 0600) and leave the table
    /// empty. Secret: never reachable through REST, never written to the change log.
    public static let secrets = TableSchema(
        "caravan_secrets",
        columns: [
            Column("name", .text, nullable: false),
            /// The secret's bytes, base64.
            Column("secret", .text, nullable: false),
            /// Seconds since 1970 when the secret was made.
            Column("created_at", .integer, nullable: false),
        ],
        primaryKey: ["name"],
        exposure: .secret
    )
}
