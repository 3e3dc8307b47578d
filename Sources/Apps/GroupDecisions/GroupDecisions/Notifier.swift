package import CaravanCore

/// The design's five notification types.
package enum NotificationKind: String, Sendable, CaseIterable {
    case groupDecision = "group_decision"
    case friendRequest = "friend_request"
    case groupInvitation = "group_invitation"
    case decisionResult = "decision_result"
    case adminAlert = "admin_alert"

    /// The user toggle that gates this kind (nil: always sent, as `admin_alert`).
    var toggle: String? {
        switch self {
        case .groupDecision: "notify_decision_started"
        case .friendRequest: "notify_friend_requests"
        case .groupInvitation: "notify_group_invites"
        case .decisionResult: "notify_decision_completed"
        case .adminAlert: nil
        }
    }
}

/// Delivery channels beyond the in-app row.
package enum NotificationChannel: String, Sendable, CaseIterable {
    case push, email, sms
}

extension GroupDecisionsSchema {
    /// The development outbox of push, e-mail and SMS deliveries, written in the notification's transaction (so a
    /// delivery exists exactly when its notification committed). Service role only.
    package static let notificationOutbox = TableSchema(
        "notification_outbox",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("notification_id", .uuid, nullable: false),
            Column("user_id", .uuid, nullable: false), Column("channel", .text, nullable: false),
            Column("recipient", .text, nullable: false), Column("created_at", .timestamp, nullable: false, default: .now),
            Column("sent_at", .timestamp),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["notification_id"], references: "notifications", ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("notification_outbox_channel", .oneOf("channel", NotificationChannel.allCases.map(\.rawValue)))],
        indexes: [Index("idx_notification_outbox_pending", [IndexKey("created_at")], where: .isNull("sent_at"))]
    )
}

/// Writes notifications (and their deliveries) in the caller's transaction, as the service role, gated by each
/// recipient's toggles: the kind's toggle for the row; `notify_push`, `notify_email` (and an e-mail address),
/// `notify_sms` (and `sms_opt_in` and a phone number) for each delivery.
package struct Notifier: Sendable {
    package init() {}

    static let toggleColumns = ["id", "email", "phone", "sms_opt_in", "notify_push", "notify_email", "notify_sms"]
        + NotificationKind.allCases.compactMap(\.toggle)

    /// Notifies `users`; returns how many notification rows were written.
    @discardableResult
    package func notify(_ kind: NotificationKind, users: [String], title: String, message: String, data: [String: String],
                       in transaction: any StoreTransaction) async throws -> Int {
        guard !users.isEmpty else { return 0 }
        let table = GroupDecisionsSchema.users
        let column = try table.requireColumn("id")
        let payload = JSONValue.object(data.keys.sorted().map { ($0, .string(data[$0] ?? "")) }).jsonText
        return try await transaction.asServiceRole { tx in
            let profiles = try await tx.rows(table, Self.toggleColumns, where: .inList(column, users.map(Value.text)))
            var written = 0
            for profile in profiles {
                let row = Dictionary(uniqueKeysWithValues: zip(Self.toggleColumns, profile))
                if let toggle = kind.toggle, row[toggle] != .bool(true) { continue }
                let inserted = try await tx.insert([RowValues(["user_id": row["id"] ?? .null, "type": .text(kind.rawValue), "title": .text(title),
                                                         "message": .text(message), "data": .json(payload)])],
                                             into: GroupDecisionsSchema.notifications, conflict: nil)
                written += 1
                guard let id = inserted.rows.first?[GroupDecisionsSchema.notifications.position(of: "id") ?? 0] else { continue }
                let deliveries = Self.deliveries(for: row).map { channel, recipient in
                    RowValues(["notification_id": id, "user_id": row["id"] ?? .null, "channel": .text(channel.rawValue), "recipient": .text(recipient)])
                }
                if !deliveries.isEmpty { _ = try await tx.insert(deliveries, into: GroupDecisionsSchema.notificationOutbox, conflict: nil) }
            }
            return written
        }
    }

    /// The channels a user's toggles allow, with the recipient address of each.
    static func deliveries(for user: [String: Value]) -> [(NotificationChannel, String)] {
        var result: [(NotificationChannel, String)] = []
        if user["notify_push"] == .bool(true), let id = user["id"]?.textValue { result.append((.push, id)) }
        if user["notify_email"] == .bool(true), let email = user["email"]?.textValue, !email.isEmpty { result.append((.email, email)) }
        if user["notify_sms"] == .bool(true), user["sms_opt_in"] == .bool(true), let phone = user["phone"]?.textValue, !phone.isEmpty {
            result.append((.sms, phone))
        }
        return result
    }
}
