CREATE TABLE "trips" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "owner" TEXT NOT NULL CHECK (length("owner") = 36),
  "name" TEXT NOT NULL,
  "note" TEXT,
  PRIMARY KEY ("id")
);
CREATE INDEX "idx_trips_owner" ON "trips" ("owner");
