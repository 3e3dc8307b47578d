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