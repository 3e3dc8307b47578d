ALTER TABLE "trips" RENAME COLUMN "name" TO "title";
ALTER TABLE "trips" ADD COLUMN "rating" INTEGER NOT NULL DEFAULT 0;
CREATE INDEX "idx_trips_owner_rating" ON "trips" ("owner", "rating" DESC);
CREATE TABLE "stops" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "trip_id" TEXT NOT NULL CHECK (length("trip_id") = 36),
  "label" TEXT NOT NULL,
  "arrives_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("trip_id") REFERENCES "trips" ("id") ON DELETE CASCADE,
  CONSTRAINT "stops_label_not_blank" CHECK ("label" <> '')
);
CREATE INDEX "idx_stops_trip" ON "stops" ("trip_id");
