CREATE TABLE "notes" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "owner" TEXT NOT NULL CHECK (length("owner") = 36),
  "title" TEXT NOT NULL,
  "body" TEXT,
  "pinned" INTEGER NOT NULL DEFAULT 0 CHECK ("pinned" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  CONSTRAINT "notes_title_not_blank" CHECK ("title" <> '')
);
CREATE INDEX "idx_notes_owner_created" ON "notes" ("owner", "created_at" DESC);
