ALTER TABLE "trips" RENAME COLUMN "name" TO "title";
ALTER TABLE "trips" ADD COLUMN "rating" int8 NOT NULL DEFAULT 0;
CREATE INDEX "idx_trips_owner_rating" ON "trips" ("owner", "rating" DESC);
CREATE TABLE "stops" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "trip_id" uuid NOT NULL,
  "label" text NOT NULL,
  "arrives_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("trip_id") REFERENCES "trips" ("id") ON DELETE CASCADE,
  CONSTRAINT "stops_label_not_blank" CHECK ("label" <> '')
);
CREATE INDEX "idx_stops_trip" ON "stops" ("trip_id");
