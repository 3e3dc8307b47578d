import CaravanCore
import CaravanTesting
import Foundation
@testable import GroupDecisions
import Synchronization
import Testing


/// The RPCs of item 3 on both engines, with a hand-moved clock and a seeded random source.
@Suite("GroupDecisions RPCs")
struct DecisionFunctionsTests {
    static let seed: UInt64 = 19

    /// Users 1–4; user 1 creates a group and adds 2 and 3 (4 stays outside); a group collection holds restaurants
    /// 1–4. Returns (group id, collection id).
    static func seed(_ f: F) async throws -> (group: String, collection: String) {
        try await f.makeUsers([1, 2, 3, 4])
        try await f.makeRestaurants([1, 2, 3, 4])
        guard case .scalar(.text(let group)) = try await f.call("create_group", as: F.uuid(1), ["name": .string("Lunch")]) else {
            throw CaravanError(.internalFailure, "create_group returned no id")
        }
        for user in [2, 3] { _ = try await f.call("add_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(user))]) }
        let collection = F.uuid(600)
        try await f.asService { tx in
            _ = try await tx.insert([RowValues(["id": .text(collection), "name": .text("Spots"), "type": .text("group"), "owner_id": .text(F.uuid(1)), "group_id": .text(group)])],
                              into: S.collections, conflict: nil)
            _ = try await tx.insert((1...4).map { RowValues(["collection_id": .text(collection), "restaurant_id": .text(F.uuid(1000 + $0)),
                                                      "position": .integer(Int64($0)), "group_id": .text(group)]) }, into: S.collectionRestaurants, conflict: nil)
        }
        return (group, collection)
    }

    static func create(_ f: F, _ method: String, as user: Int = 1, collection: String, extra: [String: JSONValue] = [:]) async throws -> String {
        var arguments: [String: JSONValue] = ["collection_id": .string(collection), "method": .string(method),
                                              "deadline": .string(f.now.timestamp(in: 3600)), "visit_date": .string(f.now.timestamp(in: 7200))]
        for (key, value) in extra { arguments[key] = value }
        guard case .scalar(.text(let id)) = try await f.call("create_decision", as: F.uuid(user), arguments) else {
            throw CaravanError(.internalFailure, "create_decision returned no id")
        }
        return id
    }

    static func decision(_ f: F, _ id: String) async throws -> [String: Value] {
        try #require(try await f.rows(S.decisions, where: try S.decisions.equals("id", .text(id))).first)
    }

    static func notifications(_ f: F, type: String) async throws -> [String] {
        try await f.rows(S.notifications, where: try S.notifications.equals("type", .text(type))).compactMap { $0["user_id"]?.textValue }.sorted()
    }

    @Test("groups: the creator is admin, admins add and remove, the last admin cannot leave", arguments: Engine.allCases)
    func groups(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (group, _) = try await Self.seed(f)
        let roles = try await f.rows(S.groupMembers).map { ($0["user_id"]?.textValue ?? "", $0["role"]?.textValue ?? "") }.sorted { $0.0 < $1.0 }
        #expect(roles.map(\.1) == ["admin", "member", "member"])
        #expect(try await Self.notifications(f, type: "group_invitation") == [F.uuid(2), F.uuid(3)])
        await expectFailure(.permissionDenied, naming: "create_group") { _ = try await f.call("create_group", as: nil, ["name": .string("X")]) }
        await expectFailure(.invalidParameterValue, naming: "name") { _ = try await f.call("create_group", as: F.uuid(2), ["name": .string("  ")]) }
        await expectFailure(.permissionDenied, naming: "group_id") {
            _ = try await f.call("add_member", as: F.uuid(2), ["group_id": .string(group), "user_id": .string(F.uuid(4))])
        }
        await expectFailure(.invalidParameterValue, naming: "role") {
            _ = try await f.call("add_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(4)), "role": .string("owner")])
        }
        await expectFailure(.uniqueViolation, naming: "group_members") {
            _ = try await f.call("add_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(2))])
        }
        await expectFailure(.checkViolation, naming: "group_members.role") { _ = try await f.call("leave_group", as: F.uuid(1), ["group_id": .string(group)]) }
        _ = try await f.call("leave_group", as: F.uuid(3), ["group_id": .string(group)])
        _ = try await f.call("remove_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(2))])
        await expectFailure(.invalidParameterValue, naming: "user_id") {
            _ = try await f.call("remove_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(2))])
        }
        #expect(try await f.rows(S.groupMembers).count == 1)
    }

    /// Joins and leaves of one group run one after the other: members added at the same moment all see each other
    /// (every co-member pair exists), and two admins leaving at the same moment never leave the group without one.
    @Test("groups: members added at once all become co-members; admins leaving at once keep one admin", arguments: Engine.allCases)
    func simultaneousMembershipChanges(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeUsers([1, 2, 3, 4, 5])
        guard case .scalar(.text(let group)) = try await f.call("create_group", as: F.uuid(1), ["name": .string("Crowd")]) else {
            Issue.record("create_group returned no id"); return
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for user in 2...5 {
                tasks.addTask {
                    _ = try await f.call("add_member", as: F.uuid(1), ["group_id": .string(group), "user_id": .string(F.uuid(user)),
                                                                       "role": .string(user == 2 ? "admin" : "member")])
                }
            }
            try await tasks.waitForAll()
        }
        let pairs = try await f.rows(S.coMembers, where: try S.coMembers.equals("group_id", .text(group)))
            .map { "\($0["viewer_id"]?.textValue ?? "")>\($0["member_id"]?.textValue ?? "")" }
        let everyone = (1...5).map { F.uuid($0) }
        #expect(Set(pairs) == Set(everyone.flatMap { viewer in everyone.filter { $0 != viewer }.map { "\(viewer)>\($0)" } }))
        // The two admins leave at the same moment: they meet inside their transactions after their deletes (or give up
        // waiting when one is held back), and one is refused. Not only the group's lock holds the second back: two
        // admins are co-members, so both deletes cascade to the same `co_members` pairs, whose row locks make the
        // second wait for the first's commit — with `serialize(on:)` made a no-op this half still passes on
        // PostgreSQL (the co-member half above fails).
        let leave = try f.catalog.requireFunction("leave_group")
        let arguments = try leave.bind(["group_id": .string(group)])
        let meeting = Rendezvous(parties: 2)
        let left = try await withThrowingTaskGroup(of: Bool.self) { tasks in
            for admin in [1, 2] {
                tasks.addTask {
                    do {
                        try await f.asUser(F.uuid(admin)) { tx in
                            _ = try await leave.body(arguments, tx)
                            await meeting.arrive(waitingAtMost: .milliseconds(500))
                        }
                        return true
                    } catch let error as CaravanError where error.code == .checkViolation {
                        return false
                    }
                }
            }
            return try await tasks.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(left == 1)
        let admins = try await f.rows(S.groupMembers, where: try S.groupMembers.equals("group_id", .text(group))).filter { $0["role"] == .text("admin") }
        #expect(admins.count == 1)
    }

    @Test("create_decision validates every argument, naming it", arguments: Engine.allCases)
    func createValidation(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        let cases: [([String: JSONValue], CaravanError.Code, String)] = [
            (["method": .string("dice")], .invalidParameterValue, "method"),
            (["deadline": .string(f.now.timestamp(in: -1))], .invalidParameterValue, "deadline"),
            (["deadline": .string(f.now.timestamp(in: 9000))], .invalidParameterValue, "deadline"),
            (["candidate_ids": .array([.string(F.uuid(1001))])], .invalidParameterValue, "candidate_ids"),
            (["candidate_ids": .array([.string(F.uuid(1001)), .string(F.uuid(1099))])], .invalidParameterValue, "candidate_ids[1]"),
            (["participant_ids": .array([.string(F.uuid(4))])], .invalidParameterValue, "participant_ids[0]"),
        ]
        for (extra, code, field) in cases {
            await expectFailure(code, naming: field) { _ = try await Self.create(f, "tiered", collection: collection, extra: extra) }
        }
        await expectFailure(.invalidParameterValue, naming: "collection_id") { _ = try await Self.create(f, "tiered", as: 4, collection: collection) }
        #expect(try await f.rows(S.decisions).isEmpty)
    }

    @Test("random: completes at once with the seeded draw, weights 1/N; participants and results notified by toggle", arguments: Engine.allCases)
    func random(engine: Engine) async throws {
        let f = try await F(engine: engine, seed: Self.seed)
        let (group, collection) = try await Self.seed(f)
        try await f.asService { tx in
            _ = try await tx.update(S.users, set: RowValues(["notify_decision_started": .bool(false)]), where: try S.users.equals("id", .text(F.uuid(3))))
            _ = try await tx.update(S.users, set: RowValues(["notify_decision_completed": .bool(false)]), where: try S.users.equals("id", .text(F.uuid(2))))
        }
        let id = try await Self.create(f, "random", collection: collection)
        var reference = SplitMix64(state: Self.seed)
        let expected = (1...4).map { F.uuid(1000 + $0) }.sorted()[Int(reference.next(upperBound: UInt64(4)))]
        let row = try await Self.decision(f, id)
        #expect(row["status"] == .text("completed"))
        #expect(row["result_restaurant_id"] == .text(expected))
        guard case .json(let weights)? = row["weights"] else { Issue.record("no weights"); return }
        #expect(try members(ofJSON: weights) == Dictionary(uniqueKeysWithValues: (1...4).map { (F.uuid(1000 + $0), JSONValue.double(0.25)) }))
        #expect(try await Self.notifications(f, type: "group_decision") == [F.uuid(2)])  // not the creator; 3 turned it off
        #expect(try await Self.notifications(f, type: "decision_result") == [F.uuid(1), F.uuid(3)])  // 2 turned it off
        let result = try #require(try await f.rows(S.notifications, where: try S.notifications.equals("type", .text("decision_result"))).first)
        guard case .json(let data)? = result["data"] else { Issue.record("no data"); return }
        #expect(try members(ofJSON: data) == ["decisionId": .string(id), "groupId": .string(group), "restaurantId": .string(expected)])
    }

    @Test("tiered: participants vote, a full turnout tallies with InstantRunoff; bad ballots name the field", arguments: Engine.allCases)
    func tiered(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        let id = try await Self.create(f, "tiered", collection: collection)
        let r = { (n: Int) in JSONValue.string(F.uuid(1000 + n)) }
        let vote = { (user: Int, ranking: [JSONValue]) in
            _ = try await f.call("submit_vote", as: F.uuid(user), ["decision_id": .string(id), "rankings": .array(ranking)])
        }
        await expectFailure(.permissionDenied, naming: "decision_id") { try await vote(4, [r(1)]) }
        await expectFailure(.invalidParameterValue, naming: "rankings[1]") { try await vote(1, [r(1), r(1)]) }
        await expectFailure(.invalidParameterValue, naming: "rankings[0]") { try await vote(1, [.string(F.uuid(9999))]) }
        await expectFailure(.invalidParameterValue, naming: "rankings") { try await vote(1, []) }
        try await vote(1, [r(1), r(2)])
        try await vote(1, [r(3), r(2)])  // replaces the first ballot
        try await vote(2, [r(2), r(3)])
        #expect(try await Self.decision(f, id)["status"] == .text("active"))
        try await vote(3, [r(1), r(2)])
        let row = try await Self.decision(f, id)
        let expected = try InstantRunoff.tally(candidates: (1...4).map { F.uuid(1000 + $0) },
                                               ballots: [[F.uuid(1003), F.uuid(1002)], [F.uuid(1002), F.uuid(1003)], [F.uuid(1001), F.uuid(1002)]])
        #expect(row["status"] == .text("completed"))
        #expect(row["result_restaurant_id"] == .text(expected.winner))
        guard case .json(let weights)? = row["weights"] else { Issue.record("no weights"); return }
        #expect(try members(ofJSON: weights) == expected.weights.mapValues { JSONValue.double($0) })
        await expectFailure(.raisedException, naming: "decision_id") { try await vote(1, [r(1)]) }
    }

    /// Votes on one decision run one after the other: when the participants vote at the same moment, the last vote
    /// still sees the others and completes the decision (on PostgreSQL they would otherwise each see a partial turnout).
    @Test("tiered: participants voting at the same moment still complete the decision", arguments: Engine.allCases)
    func simultaneousVotes(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        for _ in 0..<4 {
            let id = try await Self.create(f, "tiered", collection: collection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in 1...3 {
                    group.addTask {
                        _ = try await f.call("submit_vote", as: F.uuid(user),
                                             ["decision_id": .string(id), "rankings": .array([.string(F.uuid(1000 + user)), .string(F.uuid(1004))])])
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.decision(f, id)["status"] == .text("completed"))
        }
    }

    @Test("deadlines: a passed deadline expires (or tallies) on read and through expire_decisions", arguments: Engine.allCases)
    func deadlines(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        let unvoted = try await Self.create(f, "tiered", collection: collection)
        let voted = try await Self.create(f, "tiered", collection: collection)
        let manual = try await Self.create(f, "manual", collection: collection)
        _ = try await f.call("submit_vote", as: F.uuid(2), ["decision_id": .string(voted), "rankings": .array([.string(F.uuid(1004))])])
        #expect(try await f.call("expire_decisions", as: nil, [:]).scalarInteger == 0)
        f.now.advance(seconds: 3600)
        await expectFailure(.raisedException, naming: "decision_id") {
            _ = try await f.call("submit_vote", as: F.uuid(1), ["decision_id": .string(voted), "rankings": .array([.string(F.uuid(1001))])])
        }
        #expect(try await f.call("expire_decisions", as: nil, [:]).scalarInteger == 3)
        #expect(try await Self.decision(f, unvoted)["status"] == .text("expired"))
        #expect(try await Self.decision(f, manual)["status"] == .text("expired"))
        let tallied = try await Self.decision(f, voted)
        #expect(tallied["status"] == .text("completed"))
        #expect(tallied["result_restaurant_id"] == .text(F.uuid(1004)))
        #expect(try await f.call("expire_decisions", as: nil, [:]).scalarInteger == 0)
        await expectFailure(.permissionDenied, naming: "expire_decisions") {
            _ = try await f.pipeline.run(f.catalog.access(for: Identity(role: .anon))) { tx in try await f.catalog.requireFunction("expire_decisions").body(RPCArguments([:]), tx) }
        }
    }

    @Test("finalize, pick and close: creator or admin only; manual picks a candidate", arguments: Engine.allCases)
    func creatorOrAdmin(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        let tiered = try await Self.create(f, "tiered", as: 2, collection: collection)
        await expectFailure(.raisedException, naming: "decision_id") { _ = try await f.call("finalize_decision", as: F.uuid(2), ["decision_id": .string(tiered)]) }
        _ = try await f.call("submit_vote", as: F.uuid(3), ["decision_id": .string(tiered), "rankings": .array([.string(F.uuid(1002))])])
        await expectFailure(.permissionDenied, naming: "decision_id") { _ = try await f.call("finalize_decision", as: F.uuid(3), ["decision_id": .string(tiered)]) }
        _ = try await f.call("finalize_decision", as: F.uuid(1), ["decision_id": .string(tiered)])  // the admin
        #expect(try await Self.decision(f, tiered)["result_restaurant_id"] == .text(F.uuid(1002)))
        let manual = try await Self.create(f, "manual", collection: collection)
        await expectFailure(.invalidParameterValue, naming: "restaurant_id") {
            _ = try await f.call("pick_restaurant", as: F.uuid(1), ["decision_id": .string(manual), "restaurant_id": .string(F.uuid(1099))])
        }
        await expectFailure(.permissionDenied, naming: "decision_id") {
            _ = try await f.call("pick_restaurant", as: F.uuid(2), ["decision_id": .string(manual), "restaurant_id": .string(F.uuid(1003))])
        }
        _ = try await f.call("pick_restaurant", as: F.uuid(1), ["decision_id": .string(manual), "restaurant_id": .string(F.uuid(1003))])
        let picked = try await Self.decision(f, manual)
        #expect(picked["result_restaurant_id"] == .text(F.uuid(1003)))
        #expect(picked["weights"] == .null)
        let closing = try await Self.create(f, "tiered", collection: collection)
        _ = try await f.call("close_decision", as: F.uuid(1), ["decision_id": .string(closing)])
        #expect(try await Self.decision(f, closing)["status"] == .text("closed"))
        await expectFailure(.raisedException, naming: "decision_id") { _ = try await f.call("close_decision", as: F.uuid(1), ["decision_id": .string(closing)]) }
    }

    @Test("two concurrent expire_decisions calls settle each due decision once and notify once", arguments: Engine.allCases)
    func concurrentExpiry(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await Self.seed(f)
        var tallied: [String] = []
        for _ in 0..<4 {
            let id = try await Self.create(f, "tiered", collection: collection)
            _ = try await f.call("submit_vote", as: F.uuid(2), ["decision_id": .string(id), "rankings": .array([.string(F.uuid(1001))])])
            tallied.append(id)
        }
        for _ in 0..<4 { _ = try await Self.create(f, "manual", collection: collection) }
        f.now.advance(seconds: 4000)
        let second = WritePipeline(store: f.store, publisher: ChangePublisher())  // another instance on the same database
        let function = try f.catalog.requireFunction("expire_decisions")
        let access = f.catalog.access(for: .serviceRole)
        async let a = f.pipeline.run(access) { tx in try await function.body(RPCArguments([:]), tx) }
        async let b = second.run(access) { tx in try await function.body(RPCArguments([:]), tx) }
        let counts = [try await a.scalarInteger, try await b.scalarInteger]
        #expect(counts.compactMap { $0 }.reduce(0, +) == 8, "\(counts)")
        #expect(try await Self.notifications(f, type: "decision_result").count == 4 * 3)
    }
}

extension RPCResult {
    var scalarInteger: Int64? {
        if case .scalar(.integer(let n)) = self { return n }
        return nil
    }
}
