import CaravanCore
import CaravanTesting
import Foundation
@testable import GroupDecisions
import Testing


/// Who acts in the matrix: the group's admin (user 1), a member (user 2, who also owns a personal collection), an
/// outsider (user 4), anonymous callers and the service role.
enum Actor: String, CaseIterable, Sendable {
    case anon, member, admin, outsider, service

    var identity: Identity {
        switch self {
        case .anon: Identity(role: .anon)
        case .member: Identity(role: .authenticated, userID: F.uuid(2))
        case .admin: Identity(role: .authenticated, userID: F.uuid(1))
        case .outsider: Identity(role: .authenticated, userID: F.uuid(4))
        case .service: .serviceRole
        }
    }
}

/// What a write did: rows affected, or the error code.
@Suite("GroupDecisions policy matrix")
struct PolicyMatrixTests {
    /// The seeded world: users 1–4 (1 admin, 2 and 3 members, 4 outside), a group collection and user 2's personal
    /// one, an active tiered decision by user 1 with user 2's vote, a notification for user 2.
    static func seed(_ f: F) async throws -> String {
        let (group, collection) = try await DecisionFunctionsTests.seed(f)
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(601)), "name": .text("Mine"), "type": .text("personal"), "owner_id": .text(F.uuid(2))])],
                              into: S.collections, conflict: nil)
        }
        let decision = try await DecisionFunctionsTests.create(f, "tiered", collection: collection)
        _ = try await f.call("submit_vote", as: F.uuid(2), ["decision_id": .string(decision), "rankings": .array([.string(F.uuid(1001))])])
        _ = group
        return decision
    }

    /// Rows of each table each actor can read.
    static let visible: [String: [Actor: Int]] = [
        "users": [.anon: 0, .member: 1, .admin: 1, .outsider: 1, .service: 4],
        "member_profiles": [.anon: 0, .member: 3, .admin: 3, .outsider: 1, .service: 4],
        "restaurants": [.anon: 0, .member: 4, .admin: 4, .outsider: 4, .service: 4],
        "groups": [.anon: 0, .member: 1, .admin: 1, .outsider: 0, .service: 1],
        "group_members": [.anon: 0, .member: 3, .admin: 3, .outsider: 0, .service: 3],
        "co_members": [.anon: 0, .member: 0, .admin: 0, .outsider: 0, .service: 6],
        "collections": [.anon: 0, .member: 2, .admin: 1, .outsider: 0, .service: 2],
        "collection_restaurants": [.anon: 0, .member: 4, .admin: 4, .outsider: 0, .service: 4],
        "decisions": [.anon: 0, .member: 1, .admin: 1, .outsider: 0, .service: 1],
        "decision_candidates": [.anon: 0, .member: 4, .admin: 4, .outsider: 0, .service: 4],
        "decision_participants": [.anon: 0, .member: 3, .admin: 3, .outsider: 0, .service: 3],
        "votes": [.anon: 0, .member: 1, .admin: 0, .outsider: 0, .service: 1],
        "notifications": [.anon: 0, .member: 2, .admin: 0, .outsider: 0, .service: 4],
        "notification_outbox": [.anon: 0, .member: 0, .admin: 0, .outsider: 0, .service: 4],
    ]

    @Test("select: every table × every actor", arguments: Engine.allCases)
    func reads(engine: Engine) async throws {
        let f = try await F(engine: engine)
        _ = try await Self.seed(f)
        #expect(Set(Self.visible.keys) == Set(S.tables.map(\.name)), "every table is in the matrix")
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        #expect(try await matrix.readMismatches(S.tables, expected: Self.visible) == [])
    }

    @Test("insert, update, delete: every table's rules for every actor (rolled back after each)", arguments: Engine.allCases)
    func writes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let decision = try await Self.seed(f)
        let denied = Outcome.refused(.permissionDenied)
        let groupID = try #require(try await f.rows(S.groups).first?["id"])
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        func expect(_ name: String, _ expected: [Actor: Outcome], _ body: @escaping @Sendable (any StoreTransaction) async throws -> WriteOutcome) async {
            let mismatches = await matrix.writeMismatches(name, expected: expected, body)
            #expect(mismatches == [])
        }
        await expect("insert a restaurant", [.anon: denied, .member: denied, .admin: denied, .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["google_place_id": .text("new"), "name": .text("New")])], into: S.restaurants, conflict: nil)
        }
        await expect("rename the group", [.anon: .rows(0), .member: .rows(0), .admin: .rows(1), .outsider: .rows(0), .service: .rows(1)]) { tx in
            try await tx.update(S.groups, set: RowValues(["name": .text("Dinner")]), where: .constant(true))
        }
        await expect("insert a group directly", [.anon: denied, .member: denied, .admin: denied, .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["name": .text("Direct")])], into: S.groups, conflict: nil)
        }
        await expect("add user 4 to the group", [.anon: denied, .member: denied, .admin: .rows(1), .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["group_id": groupID, "user_id": .text(F.uuid(4))])], into: S.groupMembers, conflict: nil)
        }
        await expect("remove user 3", [.anon: .rows(0), .member: .rows(0), .admin: .rows(1), .outsider: .rows(0), .service: .rows(1)]) { tx in
            try await tx.delete(from: S.groupMembers, where: try S.groupMembers.equals("user_id", .text(F.uuid(3))))
        }
        await expect("close the decision directly", [.anon: .rows(0), .member: .rows(0), .admin: .rows(1), .outsider: .rows(0), .service: .rows(1)]) { tx in
            try await tx.update(S.decisions, set: RowValues(["status": .text("closed")]), where: .constant(true))
        }
        await expect("vote as user 2", [.anon: denied, .member: .rows(1), .admin: denied, .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["decision_id": .text(decision), "user_id": .text(F.uuid(2)), "rankings": ColumnType.textArray([F.uuid(1002)])])],
                          into: S.votes, conflict: ConflictTarget(columns: ["decision_id", "user_id"], resolution: .merge))
        }
        // User 2 has voted: for whoever may not write that row the policy answers (42501), not the unique key.
        let duplicate = Outcome.refused(.uniqueViolation)
        await expect("a second plain vote row for user 2", [.anon: denied, .member: duplicate, .admin: denied, .outsider: denied, .service: duplicate]) { tx in
            try await tx.insert([RowValues(["decision_id": .text(decision), "user_id": .text(F.uuid(2)), "rankings": ColumnType.textArray([F.uuid(1002)])])],
                          into: S.votes, conflict: nil)
        }
        await expect("mark notifications read", [.anon: .rows(0), .member: .rows(2), .admin: .rows(0), .outsider: .rows(0), .service: .rows(4)]) { tx in
            try await tx.update(S.notifications, set: RowValues(["read": .bool(true)]), where: .constant(true))
        }
        await expect("write a notification", [.anon: denied, .member: denied, .admin: denied, .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["user_id": .text(F.uuid(2)), "type": .text("admin_alert"), "title": .text("T"), "message": .text("M")])],
                          into: S.notifications, conflict: nil)
        }
        await expect("a personal collection for user 2", [.anon: denied, .member: .rows(1), .admin: denied, .outsider: denied, .service: .rows(1)]) { tx in
            try await tx.insert([RowValues(["name": .text("Mine too"), "type": .text("personal"), "owner_id": .text(F.uuid(2))])], into: S.collections, conflict: nil)
        }
        await expect("edit your own profile row", [.anon: .rows(0), .member: .rows(1), .admin: .rows(1), .outsider: .rows(1), .service: .rows(4)]) { tx in
            try await tx.update(S.users, set: RowValues(["city": .text("Riyadh")]), where: .constant(true))
        }
    }
}
