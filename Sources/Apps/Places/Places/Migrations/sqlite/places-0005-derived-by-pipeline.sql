-- places-0005: completeness_score and updated_at are kept by the write pipeline (PlacesBehaviours), on every write
-- path and alike on both engines; the triggers of places-0001 that kept them go.
DROP TRIGGER "places_derived_after_insert";
DROP TRIGGER "places_derived_after_update";
DROP TRIGGER "reviews_updated_at";
