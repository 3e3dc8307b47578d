import CaravanCore
import CaravanRealtime
import GroupDecisions
import Logging
import Testing

/// A subscriber whose policy reads another table is told to pull when a change there concerns it,
/// and is told no row.
@Suite struct VisibilityNoticeTests {
    static let catalog = Catalog(modules: [SystemModule.module, GroupDecisionsModule.module])
    static let group = "00000000-0000-4000-8000-0000000000a1"

    static func subscribe(_ hub: RealtimeHub, socket: Int, identity: Identity) throws -> SocketOutbox {
        var socketMachine = SocketStateMachine(version: .v1, catalog: catalog, limits: RealtimeLimits(), now: 0, makeKey: { "key" })
        let outbox = SocketOutbox(version: .v1, bound: 100)
        try perform(socketMachine.join(joinMessage(topic: "realtime:collections", bindings: [binding(table: "collections")]), identity: .success(identity), now: 0),
                    hub: hub, socket: socket, outbox: outbox)
        return outbox
    }

    static func membership(_ user: Identity) -> JSONValue {
        .object([("group_id", .string(group)), ("user_id", .string(user.userID ?? "")), ("role", .string("member")), ("joined_at", .string("2026-01-01T00:00:00+00:00"))])
    }

    @Test func aMembershipChangeTellsOnlyTheMemberToPullAndCarriesNoRow() async throws {
        let hub = RealtimeHub(catalog: Self.catalog, limits: RealtimeLimits(), logger: Logger(label: "test"), now: TestClock().now)
        let aliceBox = try Self.subscribe(hub, socket: 1, identity: alice)
        let bobBox = try Self.subscribe(hub, socket: 2, identity: bob)
        _ = await drain(aliceBox)
        _ = await drain(bobBox)
        await hub.dispatch([change(.insert, table: "group_members", record: Self.membership(alice), old: nil, seq: 77)])
        let notices = await drain(aliceBox)
        #expect(notices.map(\.event) == ["system"])
        let payload = try #require(notices.first?.payload)
        #expect(payload["status"] == .string("ok") && payload["pull"] == .array([.string("collections")]) && payload["seq"] == .integer(77))
        #expect(payload["record"] == nil && payload["data"] == nil)
        // Bob's membership is not Alice's; Alice's is not Bob's.
        #expect(await drain(bobBox).isEmpty)
        await hub.dispatch([change(.delete, table: "group_members", record: nil, old: Self.membership(bob), seq: 78)])
        #expect(await drain(aliceBox).isEmpty)
        #expect(await drain(bobBox).map(\.event) == ["system"])
        // A role change that keeps Alice in the group moves nothing.
        var promoted = Self.membership(alice)
        if case .object(var pairs) = promoted { pairs[2] = ("role", .string("admin")); promoted = .object(pairs) }
        await hub.dispatch([change(.update, table: "group_members", record: promoted, old: Self.membership(alice), seq: 79)])
        #expect(await drain(aliceBox).isEmpty)
    }
}
