CREATE TABLE "notes" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "owner" uuid NOT NULL,
  "title" text NOT NULL,
  "body" text,
  "pinned" boolean NOT NULL DEFAULT false,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  CONSTRAINT "notes_title_not_blank" CHECK ("title" <> '')
);
CREATE INDEX "idx_notes_owner_created" ON "notes" ("owner", "created_at" DESC);
