import CaravanCore
import CaravanTesting
import Foundation
@testable import GroupDecisions
import Testing


/// Every rule of item 1, written through the pipeline as the service role (policies off), on both engines: the
/// declared checks, uniques and foreign keys, and the hooks for the rules that span rows.
@Suite("GroupDecisions schema rules")
struct SchemaRulesTests {
    /// A group `uuid(500)` with user 1 as admin and user 2 as member, a group collection `uuid(600)` holding
    /// restaurants 1 and 2.
    static func seedGroup(_ f: F) async throws {
        try await f.makeUsers([1, 2, 3])
        try await f.makeRestaurants([1, 2, 3])
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(500)), "name": .text("Lunch"), "created_by": .text(F.uuid(1))])], into: S.groups, conflict: nil)
            _ = try await tx.insert([RowValues(["group_id": .text(F.uuid(500)), "user_id": .text(F.uuid(1)), "role": .text("admin")]),
                               RowValues(["group_id": .text(F.uuid(500)), "user_id": .text(F.uuid(2)), "role": .text("member")])],
                              into: S.groupMembers, conflict: nil)
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(600)), "name": .text("Spots"), "type": .text("group"),
                                          "owner_id": .text(F.uuid(1)), "group_id": .text(F.uuid(500))])], into: S.collections, conflict: nil)
        }
    }

    static func decision(_ f: F, id: Int, extra: KeyValuePairs<String, Value> = [:]) -> RowValues {
        var row = RowValues(["id": .text(F.uuid(id)), "type": .text("group"), "collection_id": .text(F.uuid(600)),
                             "group_id": .text(F.uuid(500)), "created_by": .text(F.uuid(1)), "method": .text("tiered"),
                             "deadline": .text(f.now.timestamp(in: 3600)), "visit_date": .text(f.now.timestamp(in: 7200))])
        for (column, value) in extra { row.set(column, value) }
        return row
    }

    @Test("restaurant checks and uniques", arguments: Engine.allCases)
    func restaurants(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeRestaurants([1])
        let cases: [(KeyValuePairs<String, Value>, CaravanError.Code, String)] = [
            (["rating": .double(5.5)], .checkViolation, "restaurants_rating_range"),
            (["price_range": .text("$$$$$")], .checkViolation, "restaurants_price_range"),
            (["time_to_pick_up": .integer(-1)], .checkViolation, "restaurants_time_to_pick_up"),
            (["lat": .double(24.7)], .checkViolation, "restaurants_coordinates"),
            (["google_place_id": .text("place-1")], .uniqueViolation, "google_place_id"),
        ]
        for (index, (values, code, field)) in cases.enumerated() {
            var built = RowValues(["google_place_id": .text("other-\(index)"), "name": .text("X")])
            for (column, value) in values { built.set(column, value) }
            let row = built
            await expectFailure(code, naming: field) { try await f.asService { tx in _ = try await tx.insert([row], into: S.restaurants, conflict: nil) } }
        }
        // NULL rating and price pass (nothing invented); the four price levels pass.
        try await f.asService { tx in
            _ = try await tx.insert(["$", "$$", "$$$", "$$$$"].enumerated().map {
                RowValues(["google_place_id": .text("ok-\($0.offset)"), "name": .text("Y"), "price_range": .text($0.element), "rating": .double(4.5)])
            }, into: S.restaurants, conflict: nil)
        }
        #expect(try await f.rows(S.restaurants).count == 5)
    }

    @Test("users: unique username, profile mirrored, id must be an auth user", arguments: Engine.allCases)
    func users(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeUsers([1, 2])
        await expectFailure(.uniqueViolation, naming: "username") {
            try await f.asService { tx in _ = try await tx.update(S.users, set: RowValues(["username": .text("user1")]), where: try S.users.equals("id", .text(F.uuid(2)))) }
        }
        await expectFailure(.foreignKeyViolation, naming: "users") {
            try await f.asService { tx in _ = try await tx.insert([RowValues(["id": .text(F.uuid(9)), "name": .text("Ghost")])], into: S.users, conflict: nil) }
        }
        try await f.asService { tx in _ = try await tx.update(S.users, set: RowValues(["name": .text("Renamed")]), where: try S.users.equals("id", .text(F.uuid(1)))) }
        let profile = try await f.rows(S.memberProfiles, where: try S.memberProfiles.equals("id", .text(F.uuid(1))))
        #expect(profile.first?["name"] == .text("Renamed"))
        #expect(profile.first?["username"] == .text("user1"))
    }

    @Test("collections: personal has no group, group has one; positions unique and ≥ 0", arguments: Engine.allCases)
    func collections(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedGroup(f)
        for (type, group) in [("personal", Value.text(F.uuid(500))), ("group", .null), ("shared", .null)] {
            await expectFailure(.checkViolation, naming: "collections_type") {
                try await f.asService { tx in
                    _ = try await tx.insert([RowValues(["name": .text("C"), "type": .text(type), "owner_id": .text(F.uuid(1)), "group_id": group])], into: S.collections, conflict: nil)
                }
            }
        }
        let item: @Sendable (Int, Int64, Value) -> RowValues = { restaurant, position, group in
            RowValues(["collection_id": .text(F.uuid(600)), "restaurant_id": .text(F.uuid(1000 + restaurant)), "position": .integer(position), "group_id": group])
        }
        try await f.asService { tx in _ = try await tx.insert([item(1, 0, .text(F.uuid(500))), item(2, 1, .text(F.uuid(500)))], into: S.collectionRestaurants, conflict: nil) }
        await expectFailure(.uniqueViolation, naming: "collection_restaurants") {
            try await f.asService { tx in _ = try await tx.insert([item(3, 1, .text(F.uuid(500)))], into: S.collectionRestaurants, conflict: nil) }
        }
        await expectFailure(.checkViolation, naming: "collection_restaurants_position") {
            try await f.asService { tx in _ = try await tx.insert([item(3, -1, .text(F.uuid(500)))], into: S.collectionRestaurants, conflict: nil) }
        }
        // An item claiming another group than its collection's is refused naming the column.
        try await f.asService { tx in _ = try await tx.insert([RowValues(["id": .text(F.uuid(501)), "name": .text("Other")])], into: S.groups, conflict: nil) }
        await expectFailure(.checkViolation, naming: "collection_restaurants.group_id") {
            try await f.asService { tx in _ = try await tx.insert([item(3, 2, .text(F.uuid(501)))], into: S.collectionRestaurants, conflict: nil) }
        }
    }

    @Test("collection items: the server fills group_id from the collection; a wrong one is refused by name, and tells an outsider nothing",
          arguments: Engine.allCases)
    func collectionItemsTakeTheirCollectionsGroup(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedGroup(f)
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["id": .text(F.uuid(601)), "name": .text("Mine"), "type": .text("personal"), "owner_id": .text(F.uuid(1))])],
                                    into: S.collections, conflict: nil)
        }
        let item: @Sendable (Int, Int, Int64) -> RowValues = { collection, restaurant, position in
            RowValues(["collection_id": .text(F.uuid(collection)), "restaurant_id": .text(F.uuid(1000 + restaurant)), "position": .integer(position)])
        }
        // The group's admin adds to the group collection without repeating its group; the answer carries it.
        let added = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([item(600, 1, 0)], into: S.collectionRestaurants, conflict: nil) }
        #expect(added.rows.first?[S.collectionRestaurants.position(of: "group_id")!] == .text(F.uuid(500)))
        // A personal collection's items have no group.
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([item(601, 1, 0)], into: S.collectionRestaurants, conflict: nil) }
        let personal = try await f.rows(S.collectionRestaurants, where: try S.collectionRestaurants.equals("collection_id", .text(F.uuid(601))))
        #expect(personal.first?["group_id"] == .null)
        // A member who is not an admin is still refused by the policy; the right group sent is accepted as it is.
        await expectFailure(.permissionDenied, naming: "collection_restaurants") {
            _ = try await f.asUser(F.uuid(2)) { tx in try await tx.insert([item(600, 2, 1)], into: S.collectionRestaurants, conflict: nil) }
        }
        var right = item(600, 2, 1)
        right.set("group_id", .text(F.uuid(500)))
        let sent = right
        _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([sent], into: S.collectionRestaurants, conflict: nil) }
        // Another group, or a group on a personal item: refused naming the column.
        try await f.asService { tx in _ = try await tx.insert([RowValues(["id": .text(F.uuid(501)), "name": .text("Other")])], into: S.groups, conflict: nil) }
        for (collection, group) in [(600, Value.text(F.uuid(501))), (601, .text(F.uuid(500)))] {
            var claimed = item(collection, 3, 2)
            claimed.set("group_id", group)
            let wrong = claimed
            await expectFailure(.checkViolation, naming: "collection_restaurants.group_id") {
                _ = try await f.asUser(F.uuid(1)) { tx in try await tx.insert([wrong], into: S.collectionRestaurants, conflict: nil) }
            }
        }
        // An outsider who cannot read the collection learns nothing from the group it sends.
        var guess = item(600, 3, 2)
        guess.set("group_id", .text(F.uuid(501)))
        let probe = guess
        await expectFailure(.permissionDenied, naming: "collection_restaurants") {
            _ = try await f.asUser(F.uuid(3)) { tx in try await tx.insert([probe], into: S.collectionRestaurants, conflict: nil) }
        }
        // Moving an item to the personal collection takes that collection's (absent) group; setting the group alone
        // to another is refused.
        let first = try S.collectionRestaurants.matching(["collection_id": .text(F.uuid(600)), "restaurant_id": .text(F.uuid(1002))])
        await expectFailure(.checkViolation, naming: "collection_restaurants.group_id") {
            _ = try await f.asService { tx in try await tx.update(S.collectionRestaurants, set: RowValues(["group_id": .text(F.uuid(501))]), where: first) }
        }
        _ = try await f.asService { tx in
            try await tx.update(S.collectionRestaurants, set: RowValues(["collection_id": .text(F.uuid(601)), "position": .integer(5)]), where: first)
        }
        let moved = try await f.rows(S.collectionRestaurants, where: try S.collectionRestaurants.equals("restaurant_id", .text(F.uuid(1002))))
        #expect(moved.first?["collection_id"] == .text(F.uuid(601)))
        #expect(moved.first?["group_id"] == .null)
    }

    @Test("a group keeps at least one admin; co-member pairs follow membership", arguments: Engine.allCases)
    func lastAdmin(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedGroup(f)
        #expect(try await f.rows(S.coMembers).count == 2)
        let admin = try S.groupMembers.matching(["group_id": .text(F.uuid(500)), "user_id": .text(F.uuid(1))])
        await expectFailure(.checkViolation, naming: "group_members.role") {
            try await f.asService { tx in _ = try await tx.delete(from: S.groupMembers, where: admin) }
        }
        await expectFailure(.checkViolation, naming: "group_members.role") {
            try await f.asService { tx in _ = try await tx.update(S.groupMembers, set: RowValues(["role": .text("member")]), where: admin) }
        }
        await expectFailure(.checkViolation, naming: "group_members_role") {
            try await f.asService { tx in _ = try await tx.update(S.groupMembers, set: RowValues(["role": .text("owner")]), where: admin) }
        }
        // With a second admin, the first may step down; deleting the whole group is fine.
        let member = try S.groupMembers.matching(["group_id": .text(F.uuid(500)), "user_id": .text(F.uuid(2))])
        try await f.asService { tx in
            _ = try await tx.update(S.groupMembers, set: RowValues(["role": .text("admin")]), where: member)
            _ = try await tx.delete(from: S.groupMembers, where: admin)
        }
        #expect(try await f.rows(S.coMembers).isEmpty)
        try await f.asService { tx in _ = try await tx.delete(from: S.groups, where: try S.groups.equals("id", .text(F.uuid(500)))) }
        #expect(try await f.rows(S.groupMembers).isEmpty)
    }

    @Test("decisions: completed ⇔ result, deadline ≤ visit date, final statuses stay final", arguments: Engine.allCases)
    func decisions(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedGroup(f)
        let laterDeadline = Self.decision(f, id: 700, extra: ["deadline": .text(f.now.timestamp(in: 9000))])
        await expectFailure(.checkViolation, naming: "decisions.deadline") {
            try await f.asService { tx in _ = try await tx.insert([laterDeadline], into: S.decisions, conflict: nil) }
        }
        let completedWithoutResult = Self.decision(f, id: 700, extra: ["status": .text("completed")])
        await expectFailure(.checkViolation, naming: "decisions_result") {
            try await f.asService { tx in _ = try await tx.insert([completedWithoutResult], into: S.decisions, conflict: nil) }
        }
        let activeWithResult = Self.decision(f, id: 700, extra: ["result_restaurant_id": .text(F.uuid(1001)), "selected_at": .text(f.now.timestamp(in: 0))])
        await expectFailure(.checkViolation, naming: "decisions_result") {
            try await f.asService { tx in _ = try await tx.insert([activeWithResult], into: S.decisions, conflict: nil) }
        }
        for (column, value) in [("method", "dice"), ("status", "paused")] {
            var built = Self.decision(f, id: 700)
            built.set(column, .text(value))
            let row = built
            await expectFailure(.checkViolation, naming: "decisions_\(column)") {
                try await f.asService { tx in _ = try await tx.insert([row], into: S.decisions, conflict: nil) }
            }
        }
        try await f.asService { tx in _ = try await tx.insert([Self.decision(f, id: 700)], into: S.decisions, conflict: nil) }
        let this = try S.decisions.equals("id", .text(F.uuid(700)))
        try await f.asService { tx in _ = try await tx.update(S.decisions, set: RowValues(["status": .text("closed")]), where: this) }
        await expectFailure(.checkViolation, naming: "decisions.status") {
            try await f.asService { tx in _ = try await tx.update(S.decisions, set: RowValues(["status": .text("active")]), where: this) }
        }
    }

    @Test("votes: participants only, candidates only, once each, while active and before the deadline", arguments: Engine.allCases)
    func votes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedGroup(f)
        try await f.asService { tx in
            _ = try await tx.insert([Self.decision(f, id: 700)], into: S.decisions, conflict: nil)
            _ = try await tx.insert([1, 2].map { RowValues(["decision_id": .text(F.uuid(700)), "restaurant_id": .text(F.uuid(1000 + $0))]) }, into: S.decisionCandidates, conflict: nil)
            _ = try await tx.insert([1, 2].map { RowValues(["decision_id": .text(F.uuid(700)), "user_id": .text(F.uuid($0))]) }, into: S.decisionParticipants, conflict: nil)
        }
        let vote: @Sendable (Int, [String]) -> RowValues = { user, ranking in
            RowValues(["decision_id": .text(F.uuid(700)), "user_id": .text(F.uuid(user)), "rankings": ColumnType.textArray(ranking)])
        }
        await expectFailure(.foreignKeyViolation, naming: "votes") {
            try await f.asService { tx in _ = try await tx.insert([vote(3, [F.uuid(1001)])], into: S.votes, conflict: nil) }
        }
        for (ranking, field) in [([F.uuid(1003)], "votes.rankings[0]"), ([F.uuid(1001), F.uuid(1001)], "votes.rankings[1]"), ([], "votes.rankings")] {
            await expectFailure(.checkViolation, naming: field) {
                try await f.asService { tx in _ = try await tx.insert([vote(1, ranking)], into: S.votes, conflict: nil) }
            }
        }
        try await f.asService { tx in _ = try await tx.insert([vote(1, [F.uuid(1002), F.uuid(1001)])], into: S.votes, conflict: nil) }
        f.now.advance(seconds: 3600)
        await expectFailure(.checkViolation, naming: "votes.decision_id") {
            try await f.asService { tx in _ = try await tx.insert([vote(2, [F.uuid(1001)])], into: S.votes, conflict: nil) }
        }
    }

    @Test("notifications: the type is one of the five; only read changes", arguments: Engine.allCases)
    func notifications(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeUsers([1])
        let row: @Sendable (String) -> RowValues = { type in
            RowValues(["id": .text(F.uuid(800)), "user_id": .text(F.uuid(1)), "type": .text(type), "title": .text("T"), "message": .text("M")])
        }
        await expectFailure(.checkViolation, naming: "notifications_type") {
            try await f.asService { tx in _ = try await tx.insert([row("poke")], into: S.notifications, conflict: nil) }
        }
        try await f.asService { tx in _ = try await tx.insert([row("admin_alert")], into: S.notifications, conflict: nil) }
        let this = try S.notifications.equals("id", .text(F.uuid(800)))
        try await f.asService { tx in _ = try await tx.update(S.notifications, set: RowValues(["read": .bool(true)]), where: this) }
        await expectFailure(.checkViolation, naming: "notifications.title") {
            try await f.asService { tx in _ = try await tx.update(S.notifications, set: RowValues(["title": .text("Changed")]), where: this) }
        }
    }
}
