CREATE TABLE "places_search_rowid" (
  "search_rowid" INTEGER PRIMARY KEY,
  "caravan_key" TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE "places_fts" USING fts5(
  "name_ar", "name_en", "category", "category_ar", "neighborhood", "neighborhood_en", "description_ar", "tags",
  tokenize = 'caravan_fold stem'
);
CREATE VIRTUAL TABLE "places_fuzzy" USING fts5("text", tokenize = 'trigram');
CREATE VIRTUAL TABLE "places_fuzzy_vocab" USING fts5vocab("places_fuzzy", 'row');
CREATE VIRTUAL TABLE "places_geo" USING rtree("id", "min_lat", "max_lat", "min_lng", "max_lng", +"lat", +"lng");
INSERT INTO "places_search_rowid" ("caravan_key") SELECT "id" FROM "places" ORDER BY "id";
INSERT INTO "places_fts" (rowid, "name_ar", "name_en", "category", "category_ar", "neighborhood", "neighborhood_en", "description_ar", "tags")
  SELECT k."search_rowid", p."name_ar", p."name_en", p."category", p."category_ar", p."neighborhood", p."neighborhood_en", p."description_ar", p."tags"
  FROM "places" AS p JOIN "places_search_rowid" AS k ON k."caravan_key" = p."id";
INSERT INTO "places_fuzzy" (rowid, "text")
  SELECT k."search_rowid", caravan_fold(COALESCE(p."name_ar", '') || ' ' || COALESCE(p."name_en", ''))
  FROM "places" AS p JOIN "places_search_rowid" AS k ON k."caravan_key" = p."id";
INSERT INTO "places_geo" ("id", "min_lat", "max_lat", "min_lng", "max_lng", "lat", "lng")
  SELECT k."search_rowid", p."latitude", p."latitude", p."longitude", p."longitude", p."latitude", p."longitude"
  FROM "places" AS p JOIN "places_search_rowid" AS k ON k."caravan_key" = p."id"
  WHERE p."latitude" IS NOT NULL AND p."longitude" IS NOT NULL;
CREATE TRIGGER "places_search_after_insert" AFTER INSERT ON "places" BEGIN
  INSERT INTO "places_search_rowid" ("caravan_key") VALUES (NEW."id");
  INSERT INTO "places_fts" (rowid, "name_ar", "name_en", "category", "category_ar", "neighborhood", "neighborhood_en", "description_ar", "tags")
    SELECT k."search_rowid", NEW."name_ar", NEW."name_en", NEW."category", NEW."category_ar", NEW."neighborhood", NEW."neighborhood_en", NEW."description_ar", NEW."tags"
    FROM "places_search_rowid" AS k WHERE k."caravan_key" = NEW."id";
  INSERT INTO "places_fuzzy" (rowid, "text")
    SELECT k."search_rowid", caravan_fold(COALESCE(NEW."name_ar", '') || ' ' || COALESCE(NEW."name_en", ''))
    FROM "places_search_rowid" AS k WHERE k."caravan_key" = NEW."id";
  INSERT INTO "places_geo" ("id", "min_lat", "max_lat", "min_lng", "max_lng", "lat", "lng")
    SELECT k."search_rowid", NEW."latitude", NEW."latitude", NEW."longitude", NEW."longitude", NEW."latitude", NEW."longitude"
    FROM "places_search_rowid" AS k WHERE k."caravan_key" = NEW."id" AND NEW."latitude" IS NOT NULL AND NEW."longitude" IS NOT NULL;
END;
CREATE TRIGGER "places_search_after_update" AFTER UPDATE OF "id", "name_ar", "name_en", "category", "category_ar", "neighborhood", "neighborhood_en", "description_ar", "tags", "latitude", "longitude" ON "places" BEGIN
  UPDATE "places_search_rowid" SET "caravan_key" = NEW."id" WHERE "caravan_key" = OLD."id" AND NEW."id" IS NOT OLD."id";
  UPDATE "places_fts" SET "name_ar" = NEW."name_ar", "name_en" = NEW."name_en", "category" = NEW."category", "category_ar" = NEW."category_ar",
      "neighborhood" = NEW."neighborhood", "neighborhood_en" = NEW."neighborhood_en", "description_ar" = NEW."description_ar", "tags" = NEW."tags"
    WHERE rowid = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = NEW."id");
  UPDATE "places_fuzzy" SET "text" = caravan_fold(COALESCE(NEW."name_ar", '') || ' ' || COALESCE(NEW."name_en", ''))
    WHERE rowid = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = NEW."id");
  DELETE FROM "places_geo" WHERE "id" = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = NEW."id");
  INSERT INTO "places_geo" ("id", "min_lat", "max_lat", "min_lng", "max_lng", "lat", "lng")
    SELECT k."search_rowid", NEW."latitude", NEW."latitude", NEW."longitude", NEW."longitude", NEW."latitude", NEW."longitude"
    FROM "places_search_rowid" AS k WHERE k."caravan_key" = NEW."id" AND NEW."latitude" IS NOT NULL AND NEW."longitude" IS NOT NULL;
END;
CREATE TRIGGER "places_search_after_delete" AFTER DELETE ON "places" BEGIN
  DELETE FROM "places_fts" WHERE rowid = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = OLD."id");
  DELETE FROM "places_fuzzy" WHERE rowid = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = OLD."id");
  DELETE FROM "places_geo" WHERE "id" = (SELECT "search_rowid" FROM "places_search_rowid" WHERE "caravan_key" = OLD."id");
  DELETE FROM "places_search_rowid" WHERE "caravan_key" = OLD."id";
END;