CREATE TABLE "countries" (
  "id" int8 NOT NULL,
  "name" text NOT NULL,
  "name_ar" text,
  "country_code" text NOT NULL,
  "capital" text,
  "continent" text,
  "population" int8 NOT NULL DEFAULT 0,
  "search_name" text NOT NULL DEFAULT '',
  "search_ar" text NOT NULL DEFAULT '',
  "search_code" text NOT NULL DEFAULT '',
  "search_tokens" text NOT NULL DEFAULT '',
  PRIMARY KEY ("id"),
  UNIQUE ("country_code"),
  CONSTRAINT "countries_population_not_negative" CHECK ("population" >= 0),
  CONSTRAINT "countries_name_not_blank" CHECK ("name" <> '')
);
CREATE INDEX "idx_countries_search_name" ON "countries" ("search_name" text_pattern_ops);
CREATE INDEX "idx_countries_search_ar" ON "countries" ("search_ar" text_pattern_ops);
CREATE INDEX "idx_countries_search_code" ON "countries" ("search_code" text_pattern_ops);
CREATE INDEX "idx_countries_population" ON "countries" ("population" DESC, "id");
CREATE TABLE "cities" (
  "id" int8 NOT NULL,
  "display_name" text NOT NULL,
  "plain_name" text NOT NULL,
  "name_ar" text,
  "admin" text,
  "country" text,
  "country_id" int8 NOT NULL,
  "population" int8 NOT NULL DEFAULT 0,
  "latitude" float8 NOT NULL,
  "longitude" float8 NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "search_display" text NOT NULL DEFAULT '',
  "search_plain" text NOT NULL DEFAULT '',
  "search_ar" text NOT NULL DEFAULT '',
  PRIMARY KEY ("id"),
  FOREIGN KEY ("country_id") REFERENCES "countries" ("id"),
  CONSTRAINT "cities_population_not_negative" CHECK ("population" >= 0),
  CONSTRAINT "cities_latitude_range" CHECK (("latitude" >= -90.0 AND "latitude" <= 90.0)),
  CONSTRAINT "cities_longitude_range" CHECK (("longitude" >= -180.0 AND "longitude" <= 180.0)),
  CONSTRAINT "cities_display_name_not_blank" CHECK ("display_name" <> '')
);
CREATE INDEX "idx_cities_search_display" ON "cities" ("search_display" text_pattern_ops);
CREATE INDEX "idx_cities_search_plain" ON "cities" ("search_plain" text_pattern_ops);
CREATE INDEX "idx_cities_search_ar" ON "cities" ("search_ar" text_pattern_ops);
CREATE INDEX "idx_cities_country" ON "cities" ("country_id");
CREATE TABLE "city_name_tokens" (
  "city_id" int8 NOT NULL,
  "token" text NOT NULL,
  PRIMARY KEY ("city_id", "token"),
  FOREIGN KEY ("city_id") REFERENCES "cities" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_city_name_tokens_token" ON "city_name_tokens" ("token" text_pattern_ops);
CREATE TABLE "user_city" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "city_id" int8 NOT NULL,
  "visited" boolean NOT NULL DEFAULT false,
  "rating" float8,
  "notes" text,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "city_id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("city_id") REFERENCES "cities" ("id"),
  CONSTRAINT "user_city_rating_range" CHECK (("rating" >= 0.0 AND "rating" <= 10.0)),
  CONSTRAINT "user_city_bucket_list_unrated" CHECK (("visited" IS TRUE OR "rating" IS NULL))
);
CREATE INDEX "idx_user_city_city" ON "user_city" ("city_id");
CREATE TABLE "user_place" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "city_id" int8 NOT NULL,
  "name" text NOT NULL,
  "latitude" float8 NOT NULL,
  "longitude" float8 NOT NULL,
  "category" text NOT NULL,
  "liked" boolean,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id", "city_id") REFERENCES "user_city" ("user_id", "city_id") ON DELETE CASCADE,
  CONSTRAINT "user_place_category" CHECK ("category" IN ('hotel', 'restaurant', 'activity', 'shop')),
  CONSTRAINT "user_place_latitude_range" CHECK (("latitude" >= -90.0 AND "latitude" <= 90.0)),
  CONSTRAINT "user_place_longitude_range" CHECK (("longitude" >= -180.0 AND "longitude" <= 180.0)),
  CONSTRAINT "user_place_name_not_blank" CHECK ("name" <> '')
);
CREATE INDEX "idx_user_place_user_city" ON "user_place" ("user_id", "city_id");
