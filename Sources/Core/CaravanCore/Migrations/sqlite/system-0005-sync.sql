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