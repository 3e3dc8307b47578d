CREATE TABLE "countries" (
  "id" INTEGER NOT NULL,
  "name" TEXT NOT NULL,
  "name_ar" TEXT,
  "country_code" TEXT NOT NULL,
  "capital" TEXT,
  "continent" TEXT,
  "population" INTEGER NOT NULL DEFAULT 0,
  "search_name" TEXT NOT NULL DEFAULT '',
  "search_ar" TEXT NOT NULL DEFAULT '',
  "search_code" TEXT NOT NULL DEFAULT '',
  "search_tokens" TEXT NOT NULL DEFAULT '',
  PRIMARY KEY ("id"),
  UNIQUE ("country_code"),
  CONSTRAINT "countries_population_not_negative" CHECK ("population" >= 0),
  CONSTRAINT "countries_name_not_blank" CHECK ("name" <> '')
);
CREATE INDEX "idx_countries_search_name" ON "countries" ("search_name");
CREATE INDEX "idx_countries_search_ar" ON "countries" ("search_ar");
CREATE INDEX "idx_countries_search_code" ON "countries" ("search_code");
CREATE INDEX "idx_countries_population" ON "countries" ("population" DESC, "id");
CREATE TABLE "cities" (
  "id" INTEGER NOT NULL,
  "display_name" TEXT NOT NULL,
  "plain_name" TEXT NOT NULL,
  "name_ar" TEXT,
  "admin" TEXT,
  "country" TEXT,
  "country_id" INTEGER NOT NULL,
  "population" INTEGER NOT NULL DEFAULT 0,
  "latitude" REAL NOT NULL,
  "longitude" REAL NOT NULL,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "search_display" TEXT NOT NULL DEFAULT '',
  "search_plain" TEXT NOT NULL DEFAULT '',
  "search_ar" TEXT NOT NULL DEFAULT '',
  PRIMARY KEY ("id"),
  FOREIGN KEY ("country_id") REFERENCES "countries" ("id"),
  CONSTRAINT "cities_population_not_negative" CHECK ("population" >= 0),
  CONSTRAINT "cities_latitude_range" CHECK (("latitude" >= -90.0 AND "latitude" <= 90.0)),
  CONSTRAINT "cities_longitude_range" CHECK (("longitude" >= -180.0 AND "longitude" <= 180.0)),
  CONSTRAINT "cities_display_name_not_blank" CHECK ("display_name" <> '')
);
CREATE INDEX "idx_cities_search_display" ON "cities" ("search_display");
CREATE INDEX "idx_cities_search_plain" ON "cities" ("search_plain");
CREATE INDEX "idx_cities_search_ar" ON "cities" ("search_ar");
CREATE INDEX "idx_cities_country" ON "cities" ("country_id");
CREATE TABLE "city_name_tokens" (
  "city_id" INTEGER NOT NULL,
  "token" TEXT NOT NULL,
  PRIMARY KEY ("city_id", "token"),
  FOREIGN KEY ("city_id") REFERENCES "cities" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_city_name_tokens_token" ON "city_name_tokens" ("token");
CREATE TABLE "user_city" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "city_id" INTEGER NOT NULL,
  "visited" INTEGER NOT NULL DEFAULT 0 CHECK ("visited" IN (0, 1)),
  "rating" REAL,
  "notes" TEXT,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "city_id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("city_id") REFERENCES "cities" ("id"),
  CONSTRAINT "user_city_rating_range" CHECK (("rating" >= 0.0 AND "rating" <= 10.0)),
  CONSTRAINT "user_city_bucket_list_unrated" CHECK (("visited" IS 1 OR "rating" IS NULL))
);
CREATE INDEX "idx_user_city_city" ON "user_city" ("city_id");
CREATE TABLE "user_place" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "city_id" INTEGER NOT NULL,
  "name" TEXT NOT NULL,
  "latitude" REAL NOT NULL,
  "longitude" REAL NOT NULL,
  "category" TEXT NOT NULL,
  "liked" INTEGER CHECK ("liked" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id", "city_id") REFERENCES "user_city" ("user_id", "city_id") ON DELETE CASCADE,
  CONSTRAINT "user_place_category" CHECK ("category" IN ('hotel', 'restaurant', 'activity', 'shop')),
  CONSTRAINT "user_place_latitude_range" CHECK (("latitude" >= -90.0 AND "latitude" <= 90.0)),
  CONSTRAINT "user_place_longitude_range" CHECK (("longitude" >= -180.0 AND "longitude" <= 180.0)),
  CONSTRAINT "user_place_name_not_blank" CHECK ("name" <> '')
);
CREATE INDEX "idx_user_place_user_city" ON "user_place" ("user_id", "city_id");
