package import CaravanCore

/// The Safar design's four tables, with their types and rules made precise.
///
/// `countries` and `cities` carry search columns the pipeline derives from the names (`TravelLogSearchColumns`):
/// each name folded (`TextFolding.fold`), indexed for exact and prefix lookups, and the folded tokens of every name
/// (` tok1 tok2 …`: one column on `countries`, the `city_name_tokens` table for the 34k cities) for token-prefix
/// matches. `user_place` references its `user_city` row by
/// `(user_id, city_id)` with ON DELETE CASCADE, so a place is deleted with its city row and can only point at a city
/// row of the same user.
package enum TravelLogSchema {
    package static let countries = TableSchema(
        "countries",
        columns: [
            Column("id", .integer, nullable: false),
            Column("name", .text, nullable: false),
            Column("name_ar", .text),
            Column("country_code", .text, nullable: false),
            Column("capital", .text),
            Column("continent", .text),
            Column("population", .integer, nullable: false, default: .value(.integer(0))),
            Column("search_name", .text, nullable: false, default: .value(.text(""))),
            Column("search_ar", .text, nullable: false, default: .value(.text(""))),
            Column("search_code", .text, nullable: false, default: .value(.text(""))),
            Column("search_tokens", .text, nullable: false, default: .value(.text(""))),
        ],
        primaryKey: ["id"],
        uniques: [["country_code"]],
        checks: [
            CheckConstraint("countries_population_not_negative", .column("population", .gte, "0")),
            CheckConstraint("countries_name_not_blank", .column("name", .neq, "")),
        ],
        indexes: [
            Index("idx_countries_search_name", [IndexKey("search_name")], kind: .textPrefix),
            Index("idx_countries_search_ar", [IndexKey("search_ar")], kind: .textPrefix),
            Index("idx_countries_search_code", [IndexKey("search_code")], kind: .textPrefix),
            Index("idx_countries_population", [IndexKey("population", descending: true), IndexKey("id")]),
        ]
    )

    package static let cities = TableSchema(
        "cities",
        columns: [
            Column("id", .integer, nullable: false),
            Column("display_name", .text, nullable: false),
            Column("plain_name", .text, nullable: false),
            Column("name_ar", .text),
            Column("admin", .text),
            Column("country", .text),
            Column("country_id", .integer, nullable: false),
            Column("population", .integer, nullable: false, default: .value(.integer(0))),
            Column("latitude", .double, nullable: false),
            Column("longitude", .double, nullable: false),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("search_display", .text, nullable: false, default: .value(.text(""))),
            Column("search_plain", .text, nullable: false, default: .value(.text(""))),
            Column("search_ar", .text, nullable: false, default: .value(.text(""))),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["country_id"], references: "countries", ["id"])],
        checks: [
            CheckConstraint("cities_population_not_negative", .column("population", .gte, "0")),
            CheckConstraint("cities_latitude_range", .between("latitude", "-90", "90")),
            CheckConstraint("cities_longitude_range", .between("longitude", "-180", "180")),
            CheckConstraint("cities_display_name_not_blank", .column("display_name", .neq, "")),
        ],
        indexes: [
            Index("idx_cities_search_display", [IndexKey("search_display")], kind: .textPrefix),
            Index("idx_cities_search_plain", [IndexKey("search_plain")], kind: .textPrefix),
            Index("idx_cities_search_ar", [IndexKey("search_ar")], kind: .textPrefix),
            // No index on population: with one, PostgreSQL walks it for a prefix rank (ORDER BY population LIMIT n,
            // rows filtered one by one: 25 ms for "ri" over the 34k cities) where the prefix indexes and a top-n sort
            // take 1 ms.
            Index("idx_cities_country", [IndexKey("country_id")]),
        ]
    )

    /// The distinct folded tokens of each city's names, one row per (city, token), kept by the pipeline
    /// (`TravelLogSearchColumns.keepCityNameTokens`): a token-prefix match is an index range here, where a pattern
    /// over a column of all the tokens would scan every city. Internal, never change-logged: it is derived data.
    package static let cityNameTokens = TableSchema(
        "city_name_tokens",
        columns: [
            Column("city_id", .integer, nullable: false),
            Column("token", .text, nullable: false),
        ],
        primaryKey: ["city_id", "token"],
        foreignKeys: [ForeignKey(["city_id"], references: "cities", ["id"], onDelete: .cascade)],
        indexes: [Index("idx_city_name_tokens_token", [IndexKey("token")], kind: .textPrefix)],
        exposure: .secret
    )

    package static let userCity = TableSchema(
        "user_city",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("city_id", .integer, nullable: false),
            Column("visited", .boolean, nullable: false, default: .value(.bool(false))),
            Column("rating", .double),
            Column("notes", .text),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["user_id", "city_id"]],
        foreignKeys: [
            ForeignKey(["user_id"], references: SystemModule.users.name, ["id"], onDelete: .cascade),
            ForeignKey(["city_id"], references: "cities", ["id"]),
        ],
        checks: [
            CheckConstraint("user_city_rating_range", .between("rating", "0", "10")),
            // A bucket-list row (not visited yet) has no rating.
            CheckConstraint("user_city_bucket_list_unrated", .or([.isTrue("visited"), .isNull("rating")])),
        ],
        indexes: [Index("idx_user_city_city", [IndexKey("city_id")])],
        synced: true,
        owner: "user_id"
    )

    /// The categories of `user_place.category`, in the order places are grouped.
    package static let placeCategories = ["hotel", "restaurant", "activity", "shop"]

    package static let userPlace = TableSchema(
        "user_place",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("user_id", .uuid, nullable: false),
            Column("city_id", .integer, nullable: false),
            Column("name", .text, nullable: false),
            Column("latitude", .double, nullable: false),
            Column("longitude", .double, nullable: false),
            Column("category", .text, nullable: false),
            Column("liked", .boolean),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["user_id", "city_id"], references: "user_city", ["user_id", "city_id"], onDelete: .cascade)],
        checks: [
            CheckConstraint("user_place_category", .oneOf("category", placeCategories)),
            CheckConstraint("user_place_latitude_range", .between("latitude", "-90", "90")),
            CheckConstraint("user_place_longitude_range", .between("longitude", "-180", "180")),
            CheckConstraint("user_place_name_not_blank", .column("name", .neq, "")),
        ],
        indexes: [Index("idx_user_place_user_city", [IndexKey("user_id"), IndexKey("city_id")])],
        synced: true,
        owner: "user_id"
    )

    package static let tables = [countries, cities, cityNameTokens, userCity, userPlace]
}

/// The TravelLog (Safar) app as a module of Caravan.
package enum TravelLogModule {
    package static let module = AppModule(
        name: "travel_log",
        tables: TravelLogSchema.tables,
        migrations: TravelLogMigrations.all,
        policies: TravelLogPolicies.all,
        functions: TravelLogSearch.all + TravelLogFunctions.all,
        behaviours: TravelLogSearchColumns.behaviours
    )
}
