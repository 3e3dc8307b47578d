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
}
