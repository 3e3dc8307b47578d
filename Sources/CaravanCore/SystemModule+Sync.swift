extension SystemModule {
    /// Push verdicts of `/sync/v1` (`caravan_sync_mutations`): one row per (caller, client mutation id), written in
    /// the mutation's own transaction (a rejection in one of its own), so a replayed mutation is answered from here
    /// and never applied twice. Secret: never reachable through REST, never in the change log. Pruned with the log.
    public static let syncMutations = TableSchema(
        "caravan_sync_mutations",
        columns: [
            /// The caller's user id, or its role when it has none.
            Column("caller", .text, nullable: false),
            /// The client-generated mutation id (a UUID, lowercase).
            Column("mutation_id", .text, nullable: false),
            /// `applied` or `rejected`.
            Column("status", .text, nullable: false),
            /// The write checkpoint of an applied mutation.
            Column("seq", .integer),
            /// The wire error of a rejected mutation (`{code, message, details, hint}`).
            Column("error", .json),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["caller", "mutation_id"],
        exposure: .secret
    )

    /// system-0005. Its frozen SQL lives in the adapters (`SQLiteSystemMigrations`, `PostgresSystemMigrations`), which
    /// render every migration declared without SQL of their dialect.
    /// - `caravan_changes.tx_id`: the `seq` of the first entry of the entry's write transaction (NULL for that first
    ///   entry and for entries logged before this migration), so readers can keep a transaction in one page.
    /// - `caravan_sync_state`: the deployment's sync epoch (random, made by the migration; a copied or restored
    ///   deployment has another) and the highest `seq` compaction has removed.
    /// - `caravan_sync_mutations`: push verdicts.
    static let migration0005Sync = Migration(id: "system-0005-sync", sql: [:])
}
