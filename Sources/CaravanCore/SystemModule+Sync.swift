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

    /// system-0005, frozen in both dialects. Never edit it; append new migrations.
    /// - `caravan_changes.tx_id`: the `seq` of the first entry of the entry's write transaction (NULL for that first
    ///   entry and for entries logged before this migration), so readers can keep a transaction in one page.
    /// - `caravan_sync_state`: the deployment's sync epoch (random, made here; a copied or restored deployment has
    ///   another) and the highest `seq` compaction has removed.
    /// - `caravan_sync_mutations`: push verdicts.
    static let migration0005Sync = Migration(id: "system-0005-sync", sql: [
        .postgres: """
            ALTER TABLE "caravan_changes" ADD COLUMN "tx_id" int8;
            CREATE INDEX "caravan_changes_committed_at" ON "caravan_changes" ("committed_at");
            CREATE TABLE "caravan_sync_state" (
              "id" int4 NOT NULL PRIMARY KEY CHECK ("id" = 1),
              "epoch" text NOT NULL,
              "compacted_through" int8 NOT NULL DEFAULT 0
            );
            INSERT INTO "caravan_sync_state" ("id", "epoch") VALUES (1, md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text));
            CREATE TABLE "caravan_sync_mutations" (
              "caller" text NOT NULL,
              "mutation_id" text NOT NULL,
              "status" text NOT NULL CHECK ("status" IN ('applied', 'rejected')),
              "seq" int8,
              "error" jsonb,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              PRIMARY KEY ("caller", "mutation_id")
            );
            CREATE INDEX "caravan_sync_mutations_created_at" ON "caravan_sync_mutations" ("created_at");
            """,
        .sqlite: """
            ALTER TABLE "caravan_changes" ADD COLUMN "tx_id" INTEGER;
            CREATE INDEX "caravan_changes_committed_at" ON "caravan_changes" ("committed_at");
            CREATE TABLE "caravan_sync_state" (
              "id" INTEGER NOT NULL PRIMARY KEY CHECK ("id" = 1),
              "epoch" TEXT NOT NULL,
              "compacted_through" INTEGER NOT NULL DEFAULT 0
            );
            INSERT INTO "caravan_sync_state" ("id", "epoch") VALUES (1, lower(hex(randomblob(16))));
            CREATE TABLE "caravan_sync_mutations" (
              "caller" TEXT NOT NULL,
              "mutation_id" TEXT NOT NULL,
              "status" TEXT NOT NULL CHECK ("status" IN ('applied', 'rejected')),
              "seq" INTEGER,
              "error" TEXT CHECK ("error" IS NULL OR json_valid("error")),
              "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
              PRIMARY KEY ("caller", "mutation_id")
            );
            CREATE INDEX "caravan_sync_mutations_created_at" ON "caravan_sync_mutations" ("created_at");
            """,
    ])
}
