package import CaravanCore

/// Row-level security of Fork in the Road. Closed by default: `co_members` has no policy
/// (service role only), and writes that must go through an RPC (creating a group or a decision, notifications)
/// have no insert policy.
package enum GroupDecisionsPolicies {
    static let signedIn: Set<Role> = [.authenticated]

    /// The caller is a member of the group in `column` of the guarded row.
    static func memberOf(groupIn column: String) -> PolicyRule {
        .exists(table: "group_members", where: [.matchesOuter(inner: "group_id", outer: column), .equals(inner: "user_id", .authUID)])
    }

    /// The caller is an admin of the group in `column` of the guarded row.
    static func adminOf(groupIn column: String) -> PolicyRule {
        .exists(table: "group_members", where: [
            .matchesOuter(inner: "group_id", outer: column), .equals(inner: "user_id", .authUID),
            .equals(inner: "role", .literal(.text("admin"))),
        ])
    }

    /// The caller participates in the decision in `column` of the guarded row.
    static func participantOf(decisionIn column: String) -> PolicyRule {
        .exists(table: "decision_participants", where: [.matchesOuter(inner: "decision_id", outer: column), .equals(inner: "user_id", .authUID)])
    }

    /// The decision in `column` has one of `statuses`.
    static func decision(in column: String, statusIn statuses: [String]) -> PolicyRule {
        .or(statuses.map { status in
            .exists(table: "decisions", where: [.matchesOuter(inner: "id", outer: column), .equals(inner: "status", .literal(.text(status)))])
        })
    }

    static let personal = PolicyRule.compare(.column("type"), .eq, .literal(.text("personal")))

    static let users: [TablePolicy] = [
        TablePolicy("users_own", for: [.select, .insert, .update], to: signedIn, using: .ownedBy("id")),
    ]

    static let memberProfiles: [TablePolicy] = [
        TablePolicy("profiles_own_or_co_member", for: [.select], to: signedIn, using: .or([
            .ownedBy("id"),
            .exists(table: "co_members", where: [.matchesOuter(inner: "member_id", outer: "id"), .equals(inner: "viewer_id", .authUID)]),
        ])),
    ]

    static let collections: [TablePolicy] = [
        TablePolicy("collections_personal_owner", for: TablePolicy.allCommands, to: signedIn, using: .and([personal, .ownedBy("owner_id")])),
        TablePolicy("collections_group_read", for: [.select], to: signedIn, using: memberOf(groupIn: "group_id")),
        TablePolicy("collections_group_admin", for: [.insert, .update, .delete], to: signedIn,
                    using: adminOf(groupIn: "group_id"),
                    check: .and([adminOf(groupIn: "group_id"), .compare(.column("type"), .eq, .literal(.text("group")))])),
    ]

    static let ownPersonalCollection = PolicyRule.exists(table: "collections", where: [
        .matchesOuter(inner: "id", outer: "collection_id"), .equals(inner: "owner_id", .authUID),
        .equals(inner: "type", .literal(.text("personal"))),
    ])

    static let collectionRestaurants: [TablePolicy] = [
        TablePolicy("collection_restaurants_personal", for: TablePolicy.allCommands, to: signedIn,
                    using: .and([.isNull(.column("group_id")), ownPersonalCollection])),
        TablePolicy("collection_restaurants_group_read", for: [.select], to: signedIn, using: memberOf(groupIn: "group_id")),
        TablePolicy("collection_restaurants_group_admin", for: [.insert, .update, .delete], to: signedIn, using: adminOf(groupIn: "group_id")),
    ]

    static let groups: [TablePolicy] = [
        TablePolicy("groups_members_read", for: [.select], to: signedIn, using: memberOf(groupIn: "id")),
        TablePolicy("groups_admins_manage", for: [.update, .delete], to: signedIn, using: adminOf(groupIn: "id")),
    ]

    static let groupMembers: [TablePolicy] = [
        TablePolicy("group_members_read", for: [.select], to: signedIn, using: memberOf(groupIn: "group_id")),
        TablePolicy("group_members_admins_manage", for: [.insert, .update, .delete], to: signedIn, using: adminOf(groupIn: "group_id")),
        TablePolicy("group_members_leave", for: [.delete], to: signedIn, using: .ownedBy("user_id")),
    ]

    static let decisions: [TablePolicy] = [
        TablePolicy("decisions_participants_and_members_read", for: [.select], to: signedIn,
                    using: .or([participantOf(decisionIn: "id"), memberOf(groupIn: "group_id"), .ownedBy("created_by")])),
        TablePolicy("decisions_creator_or_admin_update", for: [.update], to: signedIn,
                    using: .or([.ownedBy("created_by"), adminOf(groupIn: "group_id")])),
    ]

    static let snapshots: [TablePolicy] = [TablePolicy("read_by_participants", for: [.select], to: signedIn, using: participantOf(decisionIn: "decision_id"))]

    static let votes: [TablePolicy] = [
        TablePolicy("votes_own", for: [.select], to: signedIn, using: .ownedBy("user_id")),
        TablePolicy("votes_all_after_close", for: [.select], to: signedIn, using: .and([
            participantOf(decisionIn: "decision_id"), decision(in: "decision_id", statusIn: ["completed", "expired", "closed"]),
        ])),
        TablePolicy("votes_own_while_active", for: [.insert, .update], to: signedIn,
                    using: .and([.ownedBy("user_id"), decision(in: "decision_id", statusIn: ["active"])])),
    ]

    static let notifications: [TablePolicy] = [
        TablePolicy("notifications_owner_read", for: [.select, .update], to: signedIn, using: .ownedBy("user_id")),
    ]

    package static let all: [String: [TablePolicy]] = [
        "users": users, "member_profiles": memberProfiles, "restaurants": [TablePolicy("restaurants_signed_in_read", for: [.select], to: signedIn)],
        "collections": collections, "collection_restaurants": collectionRestaurants, "groups": groups,
        "group_members": groupMembers, "decisions": decisions, "decision_candidates": snapshots,
        "decision_participants": snapshots, "votes": votes, "notifications": notifications,
        RealtimeMessages.table: groupChannels,
    ]

    /// A group's private realtime channel, named by the group's id: its members receive and send broadcasts (votes
    /// being cast, "who is choosing") and presence; nobody else joins it.
    static let groupChannels: [TablePolicy] = [
        TablePolicy("group_channel_members", for: [.select, .insert], to: signedIn, using: memberOf(groupIn: "topic")),
    ]
}
