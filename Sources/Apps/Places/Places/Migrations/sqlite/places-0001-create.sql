CREATE TABLE "places" (
  "id" TEXT NOT NULL,
  "name_ar" TEXT NOT NULL,
  "name_en" TEXT,
  "category" TEXT NOT NULL,
  "category_ar" TEXT NOT NULL,
  "neighborhood" TEXT,
  "neighborhood_en" TEXT,
  "description_ar" TEXT,
  "google_rating" REAL DEFAULT 0.0,
  "rating_count" INTEGER DEFAULT 0,
  "price_range" TEXT,
  "latitude" REAL,
  "longitude" REAL,
  "google_maps_url" TEXT,
  "address_ar" TEXT,
  "phone" TEXT,
  "website" TEXT,
  "instagram" TEXT,
  "hours" TEXT CHECK ("hours" IS NULL OR json_valid("hours")),
  "cover_image_url" TEXT,
  "images" TEXT CHECK ("images" IS NULL OR (json_valid("images") AND json_type("images") = 'array')),
  "tags" TEXT CHECK ("tags" IS NULL OR (json_valid("tags") AND json_type("tags") = 'array')),
  "perfect_for" TEXT CHECK ("perfect_for" IS NULL OR (json_valid("perfect_for") AND json_type("perfect_for") = 'array')),
  "audience" TEXT CHECK ("audience" IS NULL OR (json_valid("audience") AND json_type("audience") = 'array')),
  "features" TEXT CHECK ("features" IS NULL OR json_valid("features")),
  "is_trending" INTEGER DEFAULT 0 CHECK ("is_trending" IN (0, 1)),
  "is_new" INTEGER DEFAULT 0 CHECK ("is_new" IN (0, 1)),
  "is_free" INTEGER DEFAULT 0 CHECK ("is_free" IN (0, 1)),
  "is_verified" INTEGER DEFAULT 0 CHECK ("is_verified" IN (0, 1)),
  "is_active" INTEGER DEFAULT 1 CHECK ("is_active" IN (0, 1)),
  "created_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "completeness_score" REAL,
  "data_sources" TEXT CHECK ("data_sources" IS NULL OR (json_valid("data_sources") AND json_type("data_sources") = 'array')),
  PRIMARY KEY ("id"),
  CONSTRAINT "valid_rating" CHECK (("google_rating" >= 0.0 AND "google_rating" <= 5.0)),
  CONSTRAINT "valid_coordinates" CHECK ((("latitude" IS NULL AND "longitude" IS NULL) OR (NOT ("latitude" IS NULL) AND NOT ("longitude" IS NULL) AND ("latitude" >= 24.0 AND "latitude" <= 26.0) AND ("longitude" >= 45.0 AND "longitude" <= 48.0)))),
  CONSTRAINT "valid_price_range" CHECK (("price_range" IS NULL OR "price_range" IN ('$', '$$', '$$$', '$$$$')))
);
CREATE INDEX "idx_places_category" ON "places" ("category");
CREATE INDEX "idx_places_neighborhood" ON "places" ("neighborhood");
CREATE INDEX "idx_places_rating" ON "places" ("google_rating" DESC);
CREATE INDEX "idx_places_trending" ON "places" ("is_trending") WHERE "is_trending" = 1;
CREATE INDEX "idx_places_new" ON "places" ("is_new") WHERE "is_new" = 1;
CREATE INDEX "idx_places_active" ON "places" ("is_active") WHERE "is_active" = 1;
CREATE INDEX "idx_places_category_rating" ON "places" ("category", "google_rating" DESC) WHERE "is_active" = 1;
CREATE INDEX "idx_places_neighborhood_rating" ON "places" ("neighborhood", "google_rating" DESC) WHERE "is_active" = 1;
CREATE INDEX "idx_places_updated" ON "places" ("updated_at" DESC);
CREATE TABLE "areas" (
  "id" TEXT NOT NULL,
  "name_ar" TEXT NOT NULL,
  "name_en" TEXT,
  "latitude" REAL,
  "longitude" REAL,
  "places_count" INTEGER DEFAULT 0,
  "description_ar" TEXT,
  "created_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id")
);
CREATE TABLE "categories" (
  "id" TEXT NOT NULL,
  "name_ar" TEXT NOT NULL,
  "name_en" TEXT NOT NULL,
  "icon" TEXT,
  "emoji" TEXT,
  "color" TEXT,
  "sort_order" INTEGER DEFAULT 0,
  "places_count" INTEGER DEFAULT 0,
  PRIMARY KEY ("id")
);
CREATE TABLE "favorites" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "place_id" TEXT NOT NULL,
  "note" TEXT,
  "created_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "place_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_favorites_user" ON "favorites" ("user_id");
CREATE INDEX "idx_favorites_place" ON "favorites" ("place_id");
CREATE TABLE "reviews" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "place_id" TEXT NOT NULL,
  "rating" INTEGER NOT NULL,
  "text_ar" TEXT,
  "visit_date" TEXT,
  "photos" TEXT CHECK ("photos" IS NULL OR (json_valid("photos") AND json_type("photos") = 'array')),
  "is_verified" INTEGER DEFAULT 0 CHECK ("is_verified" IN (0, 1)),
  "helpful_count" INTEGER DEFAULT 0,
  "created_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "place_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_review_rating" CHECK (("rating" >= 1 AND "rating" <= 5))
);
CREATE INDEX "idx_reviews_place" ON "reviews" ("place_id");
CREATE INDEX "idx_reviews_user" ON "reviews" ("user_id");
CREATE TABLE "delivery_prices" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "place_id" TEXT NOT NULL,
  "app_name" TEXT NOT NULL,
  "delivery_fee" REAL,
  "minimum_order" REAL,
  "estimated_minutes" INTEGER,
  "rating" REAL,
  "is_available" INTEGER DEFAULT 1 CHECK ("is_available" IN (0, 1)),
  "last_checked" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("place_id", "app_name"),
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_delivery_place" ON "delivery_prices" ("place_id");
CREATE INDEX "idx_delivery_app" ON "delivery_prices" ("app_name");
CREATE TABLE "menu_prices" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "place_id" TEXT NOT NULL,
  "item_name_ar" TEXT NOT NULL,
  "item_name_en" TEXT,
  "price" REAL NOT NULL,
  "category" TEXT,
  "size" TEXT,
  "is_available" INTEGER DEFAULT 1 CHECK ("is_available" IN (0, 1)),
  "last_updated" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("place_id") REFERENCES "places" ("id") ON DELETE CASCADE
);
CREATE TABLE "perfumes" (
  "id" TEXT NOT NULL,
  "name_ar" TEXT NOT NULL,
  "name_en" TEXT,
  "brand" TEXT,
  "type" TEXT,
  "price_range" TEXT,
  "notes" TEXT CHECK ("notes" IS NULL OR json_valid("notes")),
  "alternatives" TEXT CHECK ("alternatives" IS NULL OR (json_valid("alternatives") AND json_type("alternatives") = 'array')),
  "shops" TEXT CHECK ("shops" IS NULL OR (json_valid("shops") AND json_type("shops") = 'array')),
  PRIMARY KEY ("id")
);
-- places.completeness_score (design §7.2) and updated_at are derived: kept by triggers, never by callers.
CREATE TRIGGER "places_derived_after_insert" AFTER INSERT ON "places" BEGIN
  UPDATE "places" SET "completeness_score" = (CASE WHEN NEW.name_ar IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.name_en IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.description_ar IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.google_rating > 0 THEN 1 ELSE 0 END + CASE WHEN NEW.latitude IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.price_range IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.google_maps_url IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.cover_image_url IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN json_array_length(NEW.tags) > 0 THEN 1 ELSE 0 END + CASE WHEN NEW.neighborhood IS NOT NULL THEN 1 ELSE 0 END) / 10.0 WHERE "id" = NEW."id";
END;
CREATE TRIGGER "places_derived_after_update" AFTER UPDATE ON "places" BEGIN
  UPDATE "places" SET "completeness_score" = (CASE WHEN NEW.name_ar IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.name_en IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.description_ar IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.google_rating > 0 THEN 1 ELSE 0 END + CASE WHEN NEW.latitude IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.price_range IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.google_maps_url IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN NEW.cover_image_url IS NOT NULL THEN 1 ELSE 0 END + CASE WHEN json_array_length(NEW.tags) > 0 THEN 1 ELSE 0 END + CASE WHEN NEW.neighborhood IS NOT NULL THEN 1 ELSE 0 END) / 10.0,
    "updated_at" = CASE WHEN NEW."updated_at" IS OLD."updated_at" THEN (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z') ELSE NEW."updated_at" END
  WHERE "id" = NEW."id";
END;
CREATE TRIGGER "reviews_updated_at" AFTER UPDATE ON "reviews" WHEN NEW."updated_at" IS OLD."updated_at" BEGIN
  UPDATE "reviews" SET "updated_at" = (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z') WHERE "id" = NEW."id";
END;