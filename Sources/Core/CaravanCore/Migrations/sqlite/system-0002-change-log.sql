CREATE TABLE "caravan_changes" (
  "seq" INTEGER PRIMARY KEY AUTOINCREMENT,
  "table_name" TEXT NOT NULL,
  "primary_key" TEXT NOT NULL CHECK (json_valid("primary_key")),
  "op" TEXT NOT NULL CHECK ("op" IN ('insert', 'update', 'delete')),
  "record" TEXT CHECK ("record" IS NULL OR json_valid("record")),
  "old_record" TEXT CHECK ("old_record" IS NULL OR json_valid("old_record")),
  "committed_at" TEXT NOT NULL,
  "actor" TEXT NOT NULL
);
CREATE INDEX "caravan_changes_table_seq" ON "caravan_changes" ("table_name", "seq");