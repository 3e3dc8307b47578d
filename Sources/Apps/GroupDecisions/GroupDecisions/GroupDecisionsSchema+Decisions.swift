package import CaravanCore

extension GroupDecisionsSchema {
    /// The design's decision methods, statuses and notification types, as stored.
    package static let methods = ["random", "tiered", "manual"]
    package static let statuses = ["active", "completed", "expired", "closed"]
    package static let notificationTypes = ["group_decision", "friend_request", "group_invitation", "decision_result", "admin_alert"]

    package static let decisions = TableSchema(
        "decisions",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("type", .text, nullable: false),
            Column("collection_id", .uuid, nullable: false), Column("group_id", .uuid), Column("created_by", .uuid),
            Column("method", .text, nullable: false), Column("status", .text, nullable: false, default: .value(.text("active"))),
            Column("deadline", .timestamp), Column("visit_date", .timestamp, nullable: false),
            Column("result_restaurant_id", .uuid), Column("selected_at", .timestamp), Column("reasoning", .text),
            Column("weights", .json),
        ] + timestamps(),
        primaryKey: ["id"],
        foreignKeys: [
            ForeignKey(["collection_id"], references: "collections", ["id"], onDelete: .cascade),
            ForeignKey(["group_id"], references: "groups", ["id"], onDelete: .cascade),
            ForeignKey(["created_by"], references: "users", ["id"], onDelete: .setNull),
            ForeignKey(["result_restaurant_id"], references: "restaurants", ["id"], onDelete: .restrict),
        ],
        checks: [
            CheckConstraint("decisions_type", .or([
                .and([.column("type", .eq, "personal"), .isNull("group_id")]),
                .and([.column("type", .eq, "group"), .not(.isNull("group_id"))]),
            ])),
            CheckConstraint("decisions_method", .oneOf("method", methods)),
            CheckConstraint("decisions_status", .oneOf("status", statuses)),
            // completed ⇔ a result (with its time); no result on any other status.
            CheckConstraint("decisions_result", .or([
                .and([.column("status", .eq, "completed"), .not(.isNull("result_restaurant_id")), .not(.isNull("selected_at"))]),
                .and([.column("status", .neq, "completed"), .isNull("result_restaurant_id"), .isNull("selected_at")]),
            ])),
            CheckConstraint("decisions_manual_weights", .or([.column("method", .neq, "manual"), .isNull("weights")])),
        ],
        indexes: [
            Index("idx_decisions_group", [IndexKey("group_id")]),
            Index("idx_decisions_active_deadline", [IndexKey("deadline")], where: .column("status", .eq, "active")),
        ],
        synced: true,
        owner: "created_by"
    )

    /// The candidates of a decision, snapshotted from its collection (or the caller's list) at creation.
    package static let decisionCandidates = TableSchema(
        "decision_candidates",
        columns: [Column("decision_id", .uuid, nullable: false), Column("restaurant_id", .uuid, nullable: false)],
        primaryKey: ["decision_id", "restaurant_id"],
        foreignKeys: [
            ForeignKey(["decision_id"], references: "decisions", ["id"], onDelete: .cascade),
            ForeignKey(["restaurant_id"], references: "restaurants", ["id"], onDelete: .restrict),
        ],
        synced: true
    )

    /// The participants of a decision, snapshotted at creation.
    package static let decisionParticipants = TableSchema(
        "decision_participants",
        columns: [Column("decision_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false)],
        primaryKey: ["decision_id", "user_id"],
        foreignKeys: [
            ForeignKey(["decision_id"], references: "decisions", ["id"], onDelete: .cascade),
            ForeignKey(["user_id"], references: "users", ["id"], onDelete: .cascade),
        ],
        indexes: [Index("idx_decision_participants_user", [IndexKey("user_id")])],
        synced: true,
        owner: "user_id"
    )

    /// One vote per participant and decision (the foreign key to `decision_participants` makes "participants only"
    /// a declared rule): a ranking of candidate ids, best first, replaced while the decision is active.
    package static let votes = TableSchema(
        "votes",
        columns: [
            Column("decision_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false),
            Column("rankings", .textArray, nullable: false),
            Column("submitted_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["decision_id", "user_id"],
        foreignKeys: [ForeignKey(["decision_id", "user_id"], references: "decision_participants", ["decision_id", "user_id"], onDelete: .cascade)],
        synced: true,
        owner: "user_id"
    )

    package static let notifications = TableSchema(
        "notifications",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("user_id", .uuid, nullable: false),
            Column("type", .text, nullable: false), Column("title", .text, nullable: false),
            Column("message", .text, nullable: false), Column("data", .json),
            Column("read", .boolean, nullable: false, default: .value(.bool(false))),
        ] + timestamps(),
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["user_id"], references: "users", ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("notifications_type", .oneOf("type", notificationTypes)), notBlank("notifications", "title")],
        indexes: [Index("idx_notifications_user_unread", [IndexKey("user_id"), IndexKey("created_at", descending: true)])],
        synced: true,
        owner: "user_id"
    )

    static let decisionTables = [decisions, decisionCandidates, decisionParticipants, votes, notifications, notificationOutbox]
}
