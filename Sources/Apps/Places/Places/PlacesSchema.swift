public import CaravanCore

/// The places design's tables (§3.1) with the §7.1 constraints and the §3.2 indexes.
///
/// Search (full text, trigrams, geo) is declared by `searchIndexes` and built by `places-0002-search`.
package enum PlacesSchema {
    package static let places = TableSchema(
        "places",
        columns: [
            Column("id", .text, nullable: false),
            Column("name_ar", .text, nullable: false),
            Column("name_en", .text),
            Column("category", .text, nullable: false),
            Column("category_ar", .text, nullable: false),
            Column("neighborhood", .text),
            Column("neighborhood_en", .text),
            Column("description_ar", .text),
            Column("google_rating", .decimal(precision: 2, scale: 1), default: .value(.double(0))),
            Column("rating_count", .integer, default: .value(.integer(0))),
            Column("price_range", .text),
            Column("latitude", .decimal(precision: 10, scale: 7)),
            Column("longitude", .decimal(precision: 10, scale: 7)),
            Column("google_maps_url", .text),
            Column("address_ar", .text),
            Column("phone", .text),
            Column("website", .text),
            Column("instagram", .text),
            Column("hours", .json),
            Column("cover_image_url", .text),
            Column("images", .textArray),
            Column("tags", .textArray),
            Column("perfect_for", .textArray),
            Column("audience", .textArray),
            Column("features", .json),
            Column("is_trending", .boolean, default: .value(.bool(false))),
            Column("is_new", .boolean, default: .value(.bool(false))),
            Column("is_free", .boolean, default: .value(.bool(false))),
            Column("is_verified", .boolean, default: .value(.bool(false))),
            Column("is_active", .boolean, default: .value(.bool(true))),
            Column("created_at", .timestamp, default: .now),
            Column("updated_at", .timestamp, default: .now),
            Column("completeness_score", .decimal(precision: 3, scale: 2)),
            Column("data_sources", .textArray),
        ],
        primaryKey: ["id"],
        checks: [
            CheckConstraint("valid_rating", .between("google_rating", "0", "5")),
            // The design's check passes a row with only one coordinate (its second branch is unknown, not false).
            // Its intent — both absent, or both inside the Riyadh box — is implemented.
            CheckConstraint("valid_coordinates", .or([
                .and([.isNull("latitude"), .isNull("longitude")]),
                .and([
                    .not(.isNull("latitude")), .not(.isNull("longitude")),
                    .between("latitude", "24.0", "26.0"), .between("longitude", "45.0", "48.0"),
                ]),
            ])),
            // The design writes `price_range IN ('$', …, NULL)`, which accepts every value (x IN (…, NULL) is
            // never false). Its intent — NULL or one of the four — is implemented.
            CheckConstraint("valid_price_range", .or([.isNull("price_range"), .oneOf("price_range", ["$", "$$", "$$$", "$$$$"])])),
        ],
        indexes: [
            Index("idx_places_category", [IndexKey("category")]),
            Index("idx_places_neighborhood", [IndexKey("neighborhood")]),
            Index("idx_places_rating", [IndexKey("google_rating", descending: true)]),
            Index("idx_places_trending", [IndexKey("is_trending")], where: .column("is_trending", .eq, "true")),
            Index("idx_places_new", [IndexKey("is_new")], where: .column("is_new", .eq, "true")),
            Index("idx_places_active", [IndexKey("is_active")], where: .column("is_active", .eq, "true")),
            Index("idx_places_category_rating", [IndexKey("category"), IndexKey("google_rating", descending: true)], where: .column("is_active", .eq, "true")),
            Index("idx_places_neighborhood_rating", [IndexKey("neighborhood"), IndexKey("google_rating", descending: true)], where: .column("is_active", .eq, "true")),
            Index("idx_places_tags", [IndexKey("tags")], kind: .arrayMembership),
            Index("idx_places_perfect_for", [IndexKey("perfect_for")], kind: .arrayMembership),
            Index("idx_places_updated", [IndexKey("updated_at", descending: true)]),
        ],
        search: searchIndexes,
        synced: true
    )

    /// The search indexes of `places` (migration `places-0002-search`): full text over the names (Arabic and English),
    /// categories, neighborhoods, description and tags, weighted for bm25 (a name counts most); trigrams over the
    /// names for the typo fallback; the coordinates for nearby search.
    package static let searchIndexes = SearchIndexes(
        fullText: [
            ("name_ar", 10), ("name_en", 10), ("category", 2), ("category_ar", 2),
            ("neighborhood", 3), ("neighborhood_en", 3), ("description_ar", 1), ("tags", 2),
        ],
        fuzzy: ["name_ar", "name_en"],
        geo: .init(latitude: "latitude", longitude: "longitude")
    )

    package static let areas = TableSchema(
        "areas",
        columns: [
            Column("id", .text, nullable: false),
            Column("name_ar", .text, nullable: false),
            Column("name_en", .text),
            Column("latitude", .decimal(precision: 10, scale: 7)),
            Column("longitude", .decimal(precision: 10, scale: 7)),
            Column("places_count", .integer, default: .value(.integer(0))),
            Column("description_ar", .text),
            Column("created_at", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        synced: true
    )

    package static let categories = TableSchema(
        "categories",
        columns: [
            Column("id", .text, nullable: false),
            Column("name_ar", .text, nullable: false),
            Column("name_en", .text, nullable: false),
            Column("icon", .text),
            Column("emoji", .text),
            Column("color", .text),
            Column("sort_order", .integer, default: .value(.integer(0))),
            Column("places_count", .integer, default: .value(.integer(0))),
        ],
        primaryKey: ["id"],
        synced: true
    )

    package static let favorites = TableSchema(
        "favorites",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("place_id", .text, nullable: false),
            Column("note", .text),
            Column("created_at", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["user_id", "place_id"]],
        foreignKeys: [
            ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade),
            ForeignKey(["place_id"], references: "places", ["id"], onDelete: .cascade),
        ],
        indexes: [
            Index("idx_favorites_user", [IndexKey("user_id")]),
            Index("idx_favorites_place", [IndexKey("place_id")]),
        ],
        synced: true,
        owner: "user_id"
    )

    package static let reviews = TableSchema(
        "reviews",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("place_id", .text, nullable: false),
            Column("rating", .integer, nullable: false),
            Column("text_ar", .text),
            Column("visit_date", .date),
            Column("photos", .textArray),
            Column("is_verified", .boolean, default: .value(.bool(false))),
            Column("helpful_count", .integer, default: .value(.integer(0))),
            Column("created_at", .timestamp, default: .now),
            Column("updated_at", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["user_id", "place_id"]],
        foreignKeys: [
            ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade),
            ForeignKey(["place_id"], references: "places", ["id"], onDelete: .cascade),
        ],
        checks: [CheckConstraint("valid_review_rating", .between("rating", "1", "5"))],
        indexes: [
            Index("idx_reviews_place", [IndexKey("place_id")]),
            Index("idx_reviews_user", [IndexKey("user_id")]),
        ],
        synced: true,
        owner: "user_id"
    )

    package static let deliveryPrices = TableSchema(
        "delivery_prices",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("place_id", .text, nullable: false),
            Column("app_name", .text, nullable: false),
            Column("delivery_fee", .decimal(precision: 6, scale: 2)),
            Column("minimum_order", .decimal(precision: 6, scale: 2)),
            Column("estimated_minutes", .integer),
            Column("rating", .decimal(precision: 2, scale: 1)),
            Column("is_available", .boolean, default: .value(.bool(true))),
            Column("last_checked", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["place_id", "app_name"]],
        foreignKeys: [ForeignKey(["place_id"], references: "places", ["id"], onDelete: .cascade)],
        indexes: [
            Index("idx_delivery_place", [IndexKey("place_id")]),
            Index("idx_delivery_app", [IndexKey("app_name")]),
        ],
        synced: true
    )

    package static let menuPrices = TableSchema(
        "menu_prices",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("place_id", .text, nullable: false),
            Column("item_name_ar", .text, nullable: false),
            Column("item_name_en", .text),
            Column("price", .decimal(precision: 8, scale: 2), nullable: false),
            Column("category", .text),
            Column("size", .text),
            Column("is_available", .boolean, default: .value(.bool(true))),
            Column("last_updated", .timestamp, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["place_id"], references: "places", ["id"], onDelete: .cascade)],
        synced: true
    )

    package static let perfumes = TableSchema(
        "perfumes",
        columns: [
            Column("id", .text, nullable: false),
            Column("name_ar", .text, nullable: false),
            Column("name_en", .text),
            Column("brand", .text),
            Column("type", .text),
            Column("price_range", .text),
            Column("notes", .json),
            Column("alternatives", .textArray),
            Column("shops", .textArray),
        ],
        primaryKey: ["id"],
        synced: true
    )

    package static let tables = [places, areas, categories, favorites, reviews, deliveryPrices, menuPrices, perfumes]
}

/// The places app as a module of Caravan. Public for client apps: a device opens its local store from these table
/// declarations (`Examples/PlacesKit`), the same the server serves.
public enum PlacesModule {
    public static let module = AppModule(
        name: "places",
        tables: PlacesSchema.tables,
        migrations: PlacesMigrations.all,
        policies: PlacesPolicies.all,
        functions: PlacesFunctions.all,
        behaviours: PlacesBehaviours.all,
        buckets: [PlacesBuckets.photos]
    )
}
