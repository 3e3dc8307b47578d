import CaravanCore
import CaravanTesting
@testable import GroupDecisions
import Testing

/// Item 5's gating: a notification row only when the kind's toggle is on (`admin_alert` always); a push, e-mail or
/// SMS delivery in the development outbox only when its channel's toggle is on and the user has somewhere to send it
/// (an e-mail address; for SMS also `sms_opt_in` and a phone number). And item 3's expiry on read.
@Suite("GroupDecisions notification delivery and expiry on read")
struct NotificationDeliveryTests {
    /// Users 1–5, each with a different mix of toggles and addresses.
    static func seedUsers(_ f: F) async throws {
        try await f.makeUsers([1, 2, 3, 4, 5])
        let settings: [Int: [String: Value]] = [
            1: ["email": .text("one@example.com"), "phone": .text("+15550001"), "sms_opt_in": .bool(true)],
            2: ["email": .text("two@example.com"), "phone": .text("+15550002"), "notify_push": .bool(false), "notify_email": .bool(false)],
            3: ["phone": .text("+15550003"), "sms_opt_in": .bool(true), "notify_sms": .bool(false)],
            4: ["email": .text("four@example.com"), "notify_decision_started": .bool(false), "notify_friend_requests": .bool(false),
                "notify_group_invites": .bool(false), "notify_decision_completed": .bool(false)],
            5: ["email": .text(""), "phone": .text(""), "sms_opt_in": .bool(true)],
        ]
        try await f.asService { tx in
            for (user, values) in settings {
                _ = try await tx.update(S.users, set: RowValues(columns: values.keys.sorted(), values: values.keys.sorted().compactMap { values[$0] }), where: try S.users.equals("id", .text(F.uuid(user))))
            }
        }
    }

    /// The outbox as (user number, channel, recipient) triples, sorted.
    static func deliveries(_ f: F) async throws -> [String] {
        try await f.rows(S.notificationOutbox).map { row in
            let user = (1...5).first { F.uuid($0) == row["user_id"]?.textValue } ?? 0
            return "\(user) \(row["channel"]?.textValue ?? "?") \(row["recipient"]?.textValue ?? "?")"
        }.sorted()
    }

    static func notify(_ f: F, _ kind: NotificationKind) async throws -> Int {
        try await f.asService { tx in
            try await Notifier().notify(kind, users: (1...5).map(F.uuid), title: "t", message: "m", data: ["k": "v"], in: tx)
        }
    }

    @Test("each channel is gated by its toggle and needs an address; SMS also needs the opt-in", arguments: Engine.allCases)
    func channelsAreGated(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedUsers(f)
        #expect(try await Self.notify(f, .groupDecision) == 4)  // user 4 turned decision-started off
        #expect(try await Self.deliveries(f) == [
            "1 email one@example.com", "1 push \(F.uuid(1))", "1 sms +15550001",  // every channel on, with addresses
            // 2: push and e-mail off, SMS without the opt-in; 3: no e-mail address, SMS off; 5: empty addresses
            "3 push \(F.uuid(3))", "5 push \(F.uuid(5))",
        ])
        // Each delivery points at its committed notification row of the same user.
        let notifications = try await f.rows(S.notifications)
        for delivery in try await f.rows(S.notificationOutbox) {
            let parent = notifications.first { $0["id"] == delivery["notification_id"] }
            #expect(parent?["user_id"] == delivery["user_id"])
            #expect(delivery["sent_at"] == .null)
        }
    }

    @Test("admin_alert ignores the kind toggles but not the channel toggles", arguments: Engine.allCases)
    func adminAlertsAlwaysArrive(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await Self.seedUsers(f)
        #expect(try await Self.notify(f, .friendRequest) == 4)
        #expect(try await Self.notify(f, .adminAlert) == 5)
        let alerts = try await DecisionFunctionsTests.notifications(f, type: "admin_alert")
        #expect(alerts == (1...5).map(F.uuid).sorted())
        let fourth = try await Self.deliveries(f).filter { $0.hasPrefix("4 ") }
        #expect(fourth == ["4 email four@example.com", "4 push \(F.uuid(4))"])  // admin_alert only: 4 refused friend requests
    }

    @Test("a read of decisions or votes first settles the decisions whose deadline passed", arguments: Engine.allCases)
    func readsSettleOverdueDecisions(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await DecisionFunctionsTests.seed(f)
        let manual = try await DecisionFunctionsTests.create(f, "manual", collection: collection)
        let tiered = try await DecisionFunctionsTests.create(f, "tiered", collection: collection)
        _ = try await f.call("submit_vote", as: F.uuid(2), ["decision_id": .string(tiered),
                                                            "rankings": .array([.string(F.uuid(1002)), .string(F.uuid(1001))])])
        // Nothing is due yet: the hook writes nothing.
        let before = try await f.store.changeLogState().head
        try await f.pipeline.prepareRead(of: ["decisions", "votes"], catalog: f.catalog)
        #expect(try await f.store.changeLogState().head == before)
        #expect(try await DecisionFunctionsTests.decision(f, manual)["status"] == .text("active"))

        f.now.advance(seconds: 3601)
        try await f.pipeline.prepareRead(of: ["votes"], catalog: f.catalog)
        #expect(try await DecisionFunctionsTests.decision(f, manual)["status"] == .text("expired"))
        let settled = try await DecisionFunctionsTests.decision(f, tiered)
        #expect(settled["status"] == .text("completed"))  // a tiered decision with votes is tallied instead
        #expect(settled["result_restaurant_id"] == .text(F.uuid(1002)))
        // A table without a hook, and an unknown name, are passed over.
        try await f.pipeline.prepareRead(of: ["groups", "no_such_table"], catalog: f.catalog)
    }
}
