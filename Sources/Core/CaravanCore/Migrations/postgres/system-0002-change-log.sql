CREATE TABLE "caravan_changes" (
  "seq" int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  "table_name" text NOT NULL,
  "primary_key" json NOT NULL,
  "op" text NOT NULL CHECK ("op" IN ('insert', 'update', 'delete')),
  "record" json,
  "old_record" json,
  "committed_at" timestamptz NOT NULL DEFAULT now(),
  "actor" text NOT NULL
);
CREATE INDEX "caravan_changes_table_seq" ON "caravan_changes" ("table_name", "seq");