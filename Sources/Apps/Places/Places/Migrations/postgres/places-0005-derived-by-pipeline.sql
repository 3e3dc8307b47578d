-- places-0005: completeness_score and updated_at are kept by the write pipeline (PlacesBehaviours), on every write
-- path and alike on both engines; the triggers of places-0001 that kept them go.
DROP TRIGGER "places_derived" ON "places";
DROP FUNCTION "places_derived"();
DROP TRIGGER "reviews_updated_at" ON "reviews";
DROP FUNCTION "reviews_updated_at"();
