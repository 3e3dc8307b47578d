CREATE TABLE "users" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "email" TEXT,
  "phone" TEXT,
  "app_metadata" TEXT NOT NULL DEFAULT '{}' CHECK (json_valid("app_metadata")),
  "user_metadata" TEXT NOT NULL DEFAULT '{}' CHECK (json_valid("user_metadata")),
  "is_anonymous" INTEGER NOT NULL DEFAULT 0 CHECK ("is_anonymous" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("email"),
  UNIQUE ("phone")
);