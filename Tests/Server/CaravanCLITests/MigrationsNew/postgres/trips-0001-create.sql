CREATE TABLE "trips" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "owner" uuid NOT NULL,
  "name" text NOT NULL,
  "note" text,
  PRIMARY KEY ("id")
);
CREATE INDEX "idx_trips_owner" ON "trips" ("owner");
