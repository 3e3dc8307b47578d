package import CaravanCore

/// The tables of Fork in the Road. Every rule a row can carry alone is a declared CHECK, UNIQUE or
/// FOREIGN KEY; the rules that span rows (a group keeps an admin, deadline ≤ visit date against the stored row, a
/// final status stays final, rankings name candidates) are the `GroupDecisionsBehaviours` hooks, so REST writes
/// cannot break them either.
package enum GroupDecisionsSchema {
    static func notBlank(_ table: String, _ column: String) -> CheckConstraint {
        CheckConstraint("\(table)_\(column)_not_blank", .column(column, .neq, ""))
    }

    static func timestamps() -> [Column] {
        [Column("created_at", .timestamp, nullable: false, default: .now), Column("updated_at", .timestamp, nullable: false, default: .now)]
    }

    static func flag(_ name: String, _ value: Bool) -> Column {
        Column(name, .boolean, nullable: false, default: .value(.bool(value)))
    }

    /// `users`: the app's profile of an auth user (`id` = the auth user's id) with the design's notification toggles.
    package static let users = TableSchema(
        "users",
        columns: [
            Column("id", .uuid, nullable: false), Column("name", .text, nullable: false), Column("username", .text),
            Column("email", .text), Column("phone", .text), Column("picture", .text), Column("city", .text),
            Column("state", .text), Column("default_location", .text), flag("sms_opt_in", false),
            flag("notify_sms", true), flag("notify_email", true), flag("notify_push", true),
            flag("notify_decision_started", true), flag("notify_decision_completed", true),
            flag("notify_friend_requests", true), flag("notify_group_invites", true),
        ] + timestamps(),
        primaryKey: ["id"],
        uniques: [["username"]],
        foreignKeys: [ForeignKey(["id"], references: SystemModule.users.name, ["id"], onDelete: .cascade)],
        checks: [notBlank("users", "name"), notBlank("users", "username")],
        owner: "id"
    )

    /// `member_profiles`: the public card of a user (id, name, username, picture), kept in step with `users` by a hook
    /// and readable by co-members; `users` itself is readable by its owner only. Created as `profiles` by
    /// group-decisions-0001 and renamed by 0002, so that LangMatcher's `profiles` can be served beside it.
    package static let memberProfiles = TableSchema(
        "member_profiles",
        columns: [Column("id", .uuid, nullable: false), Column("name", .text, nullable: false), Column("username", .text), Column("picture", .text)],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["id"], references: "users", ["id"], onDelete: .cascade)]
    )

    /// `member_profiles` as group-decisions-0001 declared it (the frozen migration's declaration).
    static let profilesAt0001 = TableSchema("profiles", columns: memberProfiles.columns, primaryKey: memberProfiles.primaryKey,
                                            foreignKeys: memberProfiles.foreignKeys)

    package static let restaurants = TableSchema(
        "restaurants",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("google_place_id", .text, nullable: false),
            Column("name", .text, nullable: false), Column("address", .text), Column("cuisine", .text),
            Column("lat", .double), Column("lng", .double), Column("rating", .decimal(precision: 2, scale: 1)),
            Column("price_range", .text), Column("time_to_pick_up", .integer), Column("photos", .textArray),
            Column("phone", .text), Column("website", .text), Column("hours", .json),
            Column("cached_at", .timestamp, nullable: false, default: .now), Column("last_updated", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["google_place_id"]],
        checks: [
            notBlank("restaurants", "name"), notBlank("restaurants", "google_place_id"),
            CheckConstraint("restaurants_rating_range", .between("rating", "0", "5")),
            CheckConstraint("restaurants_price_range", .oneOf("price_range", ["$", "$$", "$$$", "$$$$"])),
            CheckConstraint("restaurants_time_to_pick_up", .column("time_to_pick_up", .gte, "0")),
            CheckConstraint("restaurants_coordinates", .or([
                .and([.isNull("lat"), .isNull("lng")]),
                .and([.not(.isNull("lat")), .not(.isNull("lng")), .between("lat", "-90", "90"), .between("lng", "-180", "180")]),
            ])),
        ],
        indexes: [Index("idx_restaurants_cuisine", [IndexKey("cuisine")])]
    )

    package static let groups = TableSchema(
        "groups",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("name", .text, nullable: false),
            Column("description", .text), Column("created_by", .uuid),
        ] + timestamps(),
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["created_by"], references: "users", ["id"], onDelete: .setNull)],
        checks: [notBlank("groups", "name")]
    )

    package static let groupMembers = TableSchema(
        "group_members",
        columns: [
            Column("group_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false),
            Column("role", .text, nullable: false, default: .value(.text("member"))),
            Column("joined_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["group_id", "user_id"],
        foreignKeys: [
            ForeignKey(["group_id"], references: "groups", ["id"], onDelete: .cascade),
            ForeignKey(["user_id"], references: "users", ["id"], onDelete: .cascade),
        ],
        checks: [CheckConstraint("group_members_role", .oneOf("role", ["admin", "member"]))],
        indexes: [Index("idx_group_members_user", [IndexKey("user_id")])],
        synced: true,
        owner: "user_id"
    )

    /// `co_members`: one row per ordered pair of members of a group (kept by the `group_members` hook), so a policy
    /// can ask "do the caller and this user share a group" with one membership subquery. Service role only.
    package static let coMembers = TableSchema(
        "co_members",
        columns: [Column("group_id", .uuid, nullable: false), Column("viewer_id", .uuid, nullable: false), Column("member_id", .uuid, nullable: false)],
        primaryKey: ["group_id", "viewer_id", "member_id"],
        foreignKeys: [
            ForeignKey(["group_id", "viewer_id"], references: "group_members", ["group_id", "user_id"], onDelete: .cascade),
            ForeignKey(["group_id", "member_id"], references: "group_members", ["group_id", "user_id"], onDelete: .cascade),
        ],
        indexes: [Index("idx_co_members_viewer", [IndexKey("viewer_id"), IndexKey("member_id")])]
    )

    package static let collections = TableSchema(
        "collections",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("name", .text, nullable: false),
            Column("description", .text), Column("type", .text, nullable: false), Column("owner_id", .uuid, nullable: false),
            Column("group_id", .uuid),
        ] + timestamps(),
        primaryKey: ["id"],
        uniques: [["id", "owner_id"], ["id", "group_id"]],
        foreignKeys: [
            ForeignKey(["owner_id"], references: "users", ["id"], onDelete: .cascade),
            ForeignKey(["group_id"], references: "groups", ["id"], onDelete: .cascade),
        ],
        checks: [
            notBlank("collections", "name"),
            CheckConstraint("collections_type", .or([
                .and([.column("type", .eq, "personal"), .isNull("group_id")]),
                .and([.column("type", .eq, "group"), .not(.isNull("group_id"))]),
            ])),
        ],
        indexes: [Index("idx_collections_owner", [IndexKey("owner_id")]), Index("idx_collections_group", [IndexKey("group_id")])],
        synced: true,
        owner: "owner_id"
    )

    /// The ordered restaurants of a collection. `group_id` repeats the collection's group (filled by the pipeline from
    /// the collection, a `CopiedColumn`, and checked by a foreign key on `(collection_id, group_id)`), so the
    /// group-members policy needs one subquery.
    package static let collectionRestaurants = TableSchema(
        "collection_restaurants",
        columns: [
            Column("collection_id", .uuid, nullable: false), Column("restaurant_id", .uuid, nullable: false),
            Column("position", .integer, nullable: false), Column("group_id", .uuid),
            Column("added_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["collection_id", "restaurant_id"],
        uniques: [["collection_id", "position"]],
        foreignKeys: [
            ForeignKey(["collection_id"], references: "collections", ["id"], onDelete: .cascade),
            ForeignKey(["collection_id", "group_id"], references: "collections", ["id", "group_id"], onDelete: .cascade),
            ForeignKey(["restaurant_id"], references: "restaurants", ["id"], onDelete: .cascade),
        ],
        checks: [CheckConstraint("collection_restaurants_position", .column("position", .gte, "0"))],
        synced: true
    )

    package static let tables = [users, memberProfiles, restaurants, groups, groupMembers, coMembers, collections, collectionRestaurants]
        + GroupDecisionsSchema.decisionTables
}
