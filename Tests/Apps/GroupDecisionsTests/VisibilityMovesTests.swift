import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
@testable import GroupDecisions
import Testing

/// Replication follows the policies when visibility goes through another table. A device's replica, built
/// only from delta pulls, equals a fresh snapshot by the same user after every membership change (the oracle).
@Suite("GroupDecisions: rows move with memberships")
struct VisibilityMovesTests {
    static let tables = "group_members,collections,collection_restaurants,decisions,decision_participants,votes"

    static func user(_ n: Int) -> Identity { Identity(role: .authenticated, userID: F.uuid(n)) }

    /// A group of user 1 (admin) and 2 with a collection, its restaurants and an active decision; user 3 is outside.
    static func seedGroup(_ f: F) async throws -> (group: String, collection: String) {
        let (group, collection) = try await DecisionFunctionsTests.seed(f)
        try await f.asService { tx in
            _ = try await tx.delete(from: S.groupMembers, where: try S.groupMembers.matching(["group_id": .text(group), "user_id": .text(F.uuid(3))]))
            _ = try await tx.delete(from: S.collectionRestaurants, where: try S.collectionRestaurants.matching(["collection_id": .text(collection), "restaurant_id": .text(F.uuid(1004))]))
            _ = try await tx.delete(from: S.collectionRestaurants, where: try S.collectionRestaurants.matching(["collection_id": .text(collection), "restaurant_id": .text(F.uuid(1003))]))
        }
        _ = try await DecisionFunctionsTests.create(f, "tiered", collection: collection)
        return (group, collection)
    }

    static func join(_ f: F, _ user: Int, _ group: String) async throws {
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["group_id": .text(group), "user_id": .text(F.uuid(user))])], into: S.groupMembers, conflict: nil)
        }
    }

    static func leave(_ f: F, _ user: Int, _ group: String) async throws {
        try await f.asService { tx in
            _ = try await tx.delete(from: S.groupMembers, where: try S.groupMembers.matching(["group_id": .text(group), "user_id": .text(F.uuid(user))]))
        }
    }

    @Test("joining brings the group's collection, its restaurants and the decision; removal takes them away", arguments: Engine.allCases)
    func joinAndRemoval(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let (group, _) = try await Self.seedGroup(f)
        var device = SyncReplica()
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        #expect(device.count("collections") == 0 && device.count("collection_restaurants") == 0 && device.count("decisions") == 0)

        try await Self.join(f, 3, group)
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        #expect(device.count("collections") == 1 && device.count("collection_restaurants") == 2 && device.count("decisions") == 1)
        #expect(device.count("group_members") == 3)
        #expect(device == (try await SyncReplica.snapshot(puller, as: Self.user(3), tables: Self.tables)))

        try await Self.leave(f, 3, group)
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        #expect(device.count("collections") == 0 && device.count("collection_restaurants") == 0 && device.count("decisions") == 0)
        #expect(device.count("group_members") == 0)
        #expect(device == (try await SyncReplica.snapshot(puller, as: Self.user(3), tables: Self.tables)))
    }

    @Test("a join after the group's rows changed sends each row once: the logged upserts the move sends again are left out",
          arguments: Engine.allCases)
    func joinSendsEachRowOnce(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let (group, collection) = try await Self.seedGroup(f)
        var device = SyncReplica()
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        let cursor = try #require(device.cursor)
        try await f.asService { tx in
            _ = try await tx.update(S.collections, set: RowValues(["name": .text("renamed")]), where: try S.collections.equals("id", .text(collection)))
            _ = try await tx.update(S.collectionRestaurants, set: RowValues(["added_at": .text("2026-01-02T00:00:00Z")]),
                                    where: try S.collectionRestaurants.equals("collection_id", .text(collection)))
        }
        try await Self.join(f, 3, group)
        let page = try await puller.pull(as: Self.user(3), tables: Self.tables, cursor: cursor, limit: 1_000)
        let upserts = page.changes.filter { (change: PulledChange) in change.operation == PulledChange.Operation.upsert }
        let upserted = upserts.map { (change: PulledChange) in change.table + " " + change.keyJSON }
        #expect(upserted.count == Set(upserted).count, "\(upserted)")
        #expect(upserted.filter { $0.hasPrefix("collections ") }.count == 1)
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        #expect(device == (try await SyncReplica.snapshot(puller, as: Self.user(3), tables: Self.tables)))
    }

    @Test("a caller no membership change concerns gets no moved row, and the page stays the same", arguments: Engine.allCases)
    func unconcernedCaller(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let (group, _) = try await Self.seedGroup(f)
        try await f.makeUsers([5])
        var outsider = SyncReplica()
        try await outsider.pull(puller, as: Self.user(5), tables: Self.tables)
        let cursor = try #require(outsider.cursor)
        try await Self.join(f, 3, group)
        try await Self.leave(f, 3, group)
        let page = try await puller.pull(as: Self.user(5), tables: Self.tables, cursor: cursor, limit: 1_000)
        #expect(page.changes.isEmpty)
    }

    @Test("a filtered pull (a shape): rows that stop matching leave, rows that start matching arrive; another filter must refetch",
          arguments: Engine.allCases)
    func shapes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let (_, collection) = try await Self.seedGroup(f)
        let active = [QueryString.Pair(key: "decisions.status", value: "eq.active")]
        var device = SyncReplica()
        try await device.pull(puller, as: Self.user(2), tables: "decisions", filters: active)
        #expect(device.count("decisions") == 1)
        let decision = try #require(try await f.rows(S.decisions).first?["id"]?.textValue)
        _ = try await f.call("close_decision", as: F.uuid(1), ["decision_id": .string(decision)])
        try await device.pull(puller, as: Self.user(2), tables: "decisions", filters: active)
        #expect(device.count("decisions") == 0)
        _ = try await DecisionFunctionsTests.create(f, "tiered", collection: collection)
        try await device.pull(puller, as: Self.user(2), tables: "decisions", filters: active)
        #expect(device.count("decisions") == 1)
        #expect(device == (try await SyncReplica.snapshot(puller, as: Self.user(2), tables: "decisions", filters: active)))
        // The cursor is bound to the filter.
        await #expect(throws: CaravanError.self) {
            _ = try await puller.pull(as: Self.user(2), tables: "decisions", filters: [QueryString.Pair(key: "decisions.status", value: "eq.closed")],
                                      cursor: device.cursor, limit: 100)
        }
        // A filter on a table the pull does not mirror, or with an order, is a 400 (parse error).
        for bad in [QueryString.Pair(key: "votes.user_id", value: "eq.x"), QueryString.Pair(key: "decisions.order", value: "status")] {
            do {
                _ = try await puller.pull(as: Self.user(2), tables: "decisions", filters: [bad], cursor: nil, limit: 10)
                Issue.record("\(bad) was accepted")
            } catch let error as CaravanError {
                #expect(error.code == .parseError)
            }
        }
    }

    @Test("a visibility change compacted away is a must-refetch for a cursor from before it", arguments: Engine.allCases)
    func compactedMove(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        let (group, _) = try await Self.seedGroup(f)
        var device = SyncReplica()
        try await device.pull(puller, as: Self.user(3), tables: Self.tables)
        try await Self.join(f, 3, group)
        _ = try await f.store.compactChangeLog(committedBefore: "9999-01-01T00:00:00Z")
        do {
            _ = try await puller.pull(as: Self.user(3), tables: Self.tables, cursor: device.cursor, limit: 100)
            Issue.record("a cursor from before a compacted membership change was answered")
        } catch let error as CaravanError {
            #expect(error.code == .mustRefetch)
        }
    }

    /// Model-based: random memberships (joins, removals, role changes), group rows created, edited and deleted, a
    /// filtered device beside the full ones; after every step each user's replica, built only from delta pulls since
    /// its first snapshot, equals a fresh snapshot of that user, row by row and column by column.
    @Test("random membership churn: every replica equals a fresh snapshot after every step", arguments: Engine.allCases)
    func randomChurn(engine: Engine) async throws {
        let runs = RandomRuns.fromEnvironment()
        for seed in runs.seeds {
            try await Self.churn(engine: engine, seed: seed, steps: runs.steps)
        }
    }

    static func churn(engine: Engine, seed: UInt64, steps: Int) async throws {
        let f = try await F(engine: engine)
        let puller = SyncPuller(store: f.store, catalog: f.catalog)
        var random = SplitMix64(state: seed &+ 33)
        let users = [1, 2, 3, 4]
        try await f.makeUsers(users)
        try await f.makeRestaurants([1, 2, 3])
        let groups = [F.uuid(700), F.uuid(701)]
        try await f.asService { tx in
            _ = try await tx.insert(groups.map { RowValues(["id": .text($0), "name": .text("G"), "created_by": .text(F.uuid(1))]) }, into: S.groups, conflict: nil)
            _ = try await tx.insert(groups.map { RowValues(["group_id": .text($0), "user_id": .text(F.uuid(1)), "role": .text("admin")]) }, into: S.groupMembers, conflict: nil)
        }
        let filter = [QueryString.Pair(key: "collection_restaurants.position", value: "lte.500")]
        var devices: [Int: SyncReplica] = [:]
        var filtered = SyncReplica()
        for user in users { devices[user] = SyncReplica() }
        var nextCollection = 800
        for step in 0..<steps {
            let group = groups[Int(random.next() % UInt64(groups.count))]
            let user = users[Int(random.next() % UInt64(users.count))]
            let members = try await f.rows(S.groupMembers, where: try S.groupMembers.equals("group_id", .text(group)))
            let isMember = members.contains { $0["user_id"] == .text(F.uuid(user)) }
            let collections = try await f.rows(S.collections, where: try S.collections.equals("group_id", .text(group)))
            switch random.next() % 6 {
            case 0, 1:
                if isMember, user != 1 { try await leave(f, user, group) } else if !isMember { try await join(f, user, group) }
            case 2:
                nextCollection += 1
                let id = F.uuid(nextCollection)
                try await f.asService { tx in
                    _ = try await tx.insert([RowValues(["id": .text(id), "name": .text("C\(step)"), "type": .text("group"), "owner_id": .text(F.uuid(1)),
                                                        "group_id": .text(group)])], into: S.collections, conflict: nil)
                    _ = try await tx.insert((1...3).map { RowValues(["collection_id": .text(id), "restaurant_id": .text(F.uuid(1000 + $0)),
                                                                      "position": .integer(Int64($0)), "group_id": .text(group)]) }, into: S.collectionRestaurants, conflict: nil)
                }
            case 3:
                if let id = collections.first?["id"] {
                    // Positions are unique per collection: a restaurant moves to a fresh one (in or out of the filter).
                    let restaurant = Value.text(F.uuid(1001 + Int(random.next() % 3)))
                    let position = Int64(random.next() % 2 == 0 ? 1_000 + step : 10 + step)
                    try await f.asService { tx in
                        _ = try await tx.update(S.collections, set: RowValues(["name": .text("renamed \(step)")]), where: try S.collections.equals("id", id))
                        _ = try await tx.update(S.collectionRestaurants, set: RowValues(["position": .integer(position)]),
                                                where: try S.collectionRestaurants.matching(["collection_id": id, "restaurant_id": restaurant]))
                    }
                }
            case 4:
                if let id = collections.last?["id"] {
                    try await f.asService { tx in _ = try await tx.delete(from: S.collections, where: try S.collections.equals("id", id)) }
                }
            default:
                if isMember, user != 1 {
                    let role: Value = random.next() % 2 == 0 ? .text("admin") : .text("member")
                    try await f.asService { tx in
                        _ = try await tx.update(S.groupMembers, set: RowValues(["role": role]),
                                                where: try S.groupMembers.matching(["group_id": .text(group), "user_id": .text(F.uuid(user))]))
                    }
                }
            }
            // Some devices pull after each step, others only now and then (several changes in one pull, small pages).
            for device in users where random.next() % 3 != 0 {
                try await devices[device]!.pull(puller, as: Self.user(device), tables: Self.tables, limit: 1 + Int(random.next() % 7))
                let oracle = try await SyncReplica.snapshot(puller, as: Self.user(device), tables: Self.tables)
                #expect(devices[device]! == oracle, "seed \(seed), step \(step), user \(device) (\(engine))")
                if devices[device]! != oracle { return }
            }
            try await filtered.pull(puller, as: Self.user(2), tables: "collection_restaurants", filters: filter)
            #expect(filtered == (try await SyncReplica.snapshot(puller, as: Self.user(2), tables: "collection_restaurants", filters: filter)),
                    "filtered, seed \(seed), step \(step) (\(engine))")
        }
    }
}
