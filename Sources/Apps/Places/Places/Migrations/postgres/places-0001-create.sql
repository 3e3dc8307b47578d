CREATE TABLE "places" (
  "id" text NOT NULL,
  "name_ar" text NOT NULL,
  "name_en" text,
  "category" text NOT NULL,
  "category_ar" text NOT NULL,
  "neighborhood" text,
  "neighborhood_en" text,
  "description_ar" text,
  "google_rating" numeric(2,1) DEFAULT 0.0,
  "rating_count" int8 DEFAULT 0,
  "price_range" text,
  "latitude" numeric(10,7),
  "longitude" numeric(10,7),
  "google_maps_url" text,
  "address_ar" text,
  "phone" text,
  "website" text,
  "instagram" text,
  "hours" jsonb,
  "cover_image_url" text,
  "images" text[],
  "tags" text[],
  "perfect_for" text[],
  "audience" text[],
  "features" jsonb,
  "is_trending" boolean DEFAULT false,
  "is_new" boolean DEFAULT false,
  "is_free" boolean DEFAULT false,
  "is_verified" boolean DEFAULT false,
  "is_active" boolean DEFAULT true,
  "created_at" timestamptz DEFAULT now(),
  "updated_at" timestamptz DEFAULT now(),
  "completeness_score" numeric(3,2),
  "data_sources" text[],
  PRIMARY KEY ("id"),
  CONSTRAINT "valid_rating" CHECK (("google_rating" >= 0.0 AND "google_rating" <= 5.0)),
  CONSTRAINT "valid_coordinates" CHECK ((("latitude" IS NULL AND "longitude" IS NULL) OR (NOT ("latitude" IS NULL) AND NOT ("longitude" IS NULL) AND ("latitude" >= 24.0 AND "latitude" <= 26.0) AND ("longitude" >= 45.0 AND "longitude" <= 48.0)))),
  CONSTRAINT "valid_price_range" CHECK (("price_range" IS NULL OR "price_range" IN ('$', '$$', '$$$', '$$$$')))
);
CREATE INDEX "idx_places_category" ON "places" ("category");
CREATE INDEX "idx_places_neighborhood" ON "places" ("neighborhood");
CREATE INDEX "idx_places_rating" ON "places" ("google_rating" DESC);
CREATE INDEX "idx_places_trending" ON "places" ("is_trending") WHERE "is_trending" = TRUE;
CREATE INDEX "idx_places_new" ON "places" ("is_new") WHERE "is_new" = TRUE;
CREATE INDEX "idx_places_active" ON "places" ("is_active") WHERE "is_active" = TRUE;
CREATE INDEX "idx_places_category_rating" ON "places" ("category", "google_rating" DESC) WHERE "is_active" = TRUE;
CREATE INDEX "idx_places_neighborhood_rating" ON "places" ("neighborhood", "google_rating" DESC) WHERE "is_active" = TRUE;
CREATE INDEX "idx_places_tags" ON "places" USING gin ("tags");
CREATE INDEX "idx_places_perfect_for" ON "places" USING gin ("perfect_for");
CREATE INDEX "idx_places_updated" ON "places" ("updated_at" DESC);
CREATE TABLE "areas" (
  "id" text NOT NULL,
  "name_ar" text NOT NULL,
  "name_en" text,
  "latitude" numeric(10,7),
  "longitude" numeric(10,7),
  "places_count" int8 DEFAULT 0,
  "description_ar" text,
  "created_at" timestamptz DEFAULT now(),
  PRIMARY KEY ("id")
);
CREATE TABLE "categories" (
  "id" text NOT NULL,
  "name_ar" text NOT NULL,
  "name_en" text NOT NULL,
  "icon" text,
  "emoji" text,
  "color" text,
  "sort_order" int8 DEFAULT 0,
  "places_count" int8 DEFAULT 0,
  PRIMARY KEY ("id")
);
CREATE TABLE "favorites" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "place_id" text NOT NULL,
  "note" text,
  "created_at" timestamptz DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "place_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_favorites_user" ON "favorites" ("user_id");
CREATE INDEX "idx_favorites_place" ON "favorites" ("place_id");
CREATE TABLE "reviews" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "place_id" text NOT NULL,
  "rating" int8 NOT NULL,
  "text_ar" text,
  "visit_date" date,
  "photos" text[],
  "is_verified" boolean DEFAULT false,
  "helpful_count" int8 DEFAULT 0,
  "created_at" timestamptz DEFAULT now(),
  "updated_at" timestamptz DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "place_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_review_rating" CHECK (("rating" >= 1 AND "rating" <= 5))
);
CREATE INDEX "idx_reviews_place" ON "reviews" ("place_id");
CREATE INDEX "idx_reviews_user" ON "reviews" ("user_id");
CREATE TABLE "delivery_prices" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "place_id" text NOT NULL,
  "app_name" text NOT NULL,
  "delivery_fee" numeric(6,2),
  "minimum_order" numeric(6,2),
  "estimated_minutes" int8,
  "rating" numeric(2,1),
  "is_available" boolean DEFAULT true,
  "last_checked" timestamptz DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("place_id", "app_name"),
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_delivery_place" ON "delivery_prices" ("place_id");
CREATE INDEX "idx_delivery_app" ON "delivery_prices" ("app_name");
CREATE TABLE "menu_prices" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "place_id" text NOT NULL,
  "item_name_ar" text NOT NULL,
  "item_name_en" text,
  "price" numeric(8,2) NOT NULL,
  "category" text,
  "size" text,
  "is_available" boolean DEFAULT true,
  "last_updated" timestamptz DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE TABLE "perfumes" (
  "id" text NOT NULL,
  "name_ar" text NOT NULL,
  "name_en" text,
  "brand" text,
  "type" text,
  "price_range" text,
  "notes" jsonb,
  "alternatives" text[],
  "shops" text[],
  PRIMARY KEY ("id")
);
-- places.completeness_score (design §7.2) and updated_at are derived: kept by triggers, never by callers.
-- As on SQLite: the score is recomputed on every insert and update; updated_at is set to now on insert and on an
-- update that does not set it.
CREATE FUNCTION "places_derived"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."completeness_score" := (CASE WHEN NEW."name_ar" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."name_en" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."description_ar" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."google_rating" > 0 THEN 1 ELSE 0 END + CASE WHEN NEW."latitude" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."price_range" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."google_maps_url" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW."cover_image_url" IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN cardinality(NEW."tags") > 0 THEN 1 ELSE 0 END + CASE WHEN NEW."neighborhood" IS NOT NULL THEN 1 ELSE 0 END) / 10.0;
  IF TG_OP = 'INSERT' OR NEW."updated_at" IS NOT DISTINCT FROM OLD."updated_at" THEN
    NEW."updated_at" := now();
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "places_derived" BEFORE INSERT OR UPDATE ON "places" FOR EACH ROW EXECUTE FUNCTION "places_derived"();
CREATE FUNCTION "reviews_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."updated_at" IS NOT DISTINCT FROM OLD."updated_at" THEN
    NEW."updated_at" := now();
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "reviews_updated_at" BEFORE UPDATE ON "reviews" FOR EACH ROW EXECUTE FUNCTION "reviews_updated_at"();