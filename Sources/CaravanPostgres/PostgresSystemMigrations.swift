/// Frozen PostgreSQL SQL of platform migrations this adapter owns (none today: the system tables' migrations are
/// files of CaravanCore, `Sources/CaravanCore/Migrations`). Never edit a shipped entry; add new ones.
enum PostgresSystemMigrations {
    static let sql: [String: String] = [:]
}
