import CaravanCore
import CaravanRealtime
import Testing

@Suite struct HubTests {
    let favorites = [binding(table: "favorites")]

    @Test func theReplyIsQueuedBeforeAnyEvent() async throws {
        let hub = makeHub()
        let outbox = try subscribe(hub, socket: 1, identity: alice, bindings: favorites)
        await hub.dispatch([change(.insert, table: "favorites", record: favorite("f1", user: alice), old: nil)])
        let events = await drain(outbox).map(\.event)
        #expect(events == ["phx_reply", "system", "postgres_changes"])
    }

    @Test func eachUserSeesOnlyTheirOwnRows() async throws {
        let hub = makeHub()
        let aliceBox = try subscribe(hub, socket: 1, identity: alice, bindings: favorites)
        let bobBox = try subscribe(hub, socket: 2, identity: bob, bindings: favorites)
        let anonBox = try subscribe(hub, socket: 3, identity: anon, bindings: favorites)
        for box in [aliceBox, bobBox, anonBox] { _ = await drain(box) }
        await hub.dispatch([
            change(.insert, table: "favorites", record: favorite("a1", user: alice), old: nil),
            change(.insert, table: "favorites", record: favorite("b1", user: bob), old: nil),
        ])
        #expect(changes(await drain(aliceBox)).map { $0["record"]?["id"] } == [.string("a1")])
        #expect(changes(await drain(bobBox)).map { $0["record"]?["id"] } == [.string("b1")])
        #expect(await drain(anonBox).isEmpty)
    }

    @Test func deletesReachOnlyThoseWhoSawTheRowAndCarryOnlyTheKey() async throws {
        let hub = makeHub()
        let aliceBox = try subscribe(hub, socket: 1, identity: alice, bindings: favorites)
        let bobBox = try subscribe(hub, socket: 2, identity: bob, bindings: favorites)
        _ = await drain(aliceBox)
        _ = await drain(bobBox)
        await hub.dispatch([change(.delete, table: "favorites", record: nil, old: favorite("a1", user: alice, note: "secret"))])
        #expect(await drain(bobBox).isEmpty)
        let data = try #require(changes(await drain(aliceBox)).first)
        #expect(data["type"] == .string("DELETE"))
        #expect(data["old_record"] == .object([("id", .string("a1"))]))
        #expect(data["record"] == nil)
        #expect(data["columns"] == .array([.object([("name", .string("id")), ("type", .string("uuid"))])]))
        #expect(data["errors"] == .null)
        #expect(data["commit_timestamp"] == .string("2026-01-01T12:00:00.123Z"))
    }

    @Test func movesBecomeDeletesAndInserts() async throws {
        let hub = makeHub()
        let anonBox = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")])
        _ = await drain(anonBox)
        await hub.dispatch([
            change(.update, table: "places", record: place("p1", active: false), old: place("p1", active: true)),
            change(.update, table: "places", record: place("p1", active: true), old: place("p1", active: false)),
            change(.update, table: "places", record: place("p2", active: false), old: place("p2", active: false)),
        ])
        let data = changes(await drain(anonBox))
        #expect(data.map { $0["type"] } == [.string("DELETE"), .string("INSERT")])
        #expect(data[0]["old_record"] == .object([("id", .string("p1"))]))
    }

    @Test func bindingsFilterByEventAndFilterAndShareTheFrame() async throws {
        let hub = makeHub()
        let box = try subscribe(hub, socket: 1, identity: anon, bindings: [
            binding("INSERT", table: "places", filter: "rating_count=eq.7"), binding("UPDATE", table: "places"), binding("*", table: "places"),
        ])
        _ = await drain(box)
        await hub.dispatch([
            change(.insert, table: "places", record: place("p1", active: true, count: 7), old: nil),
            change(.insert, table: "places", record: place("p2", active: true, count: 8), old: nil),
        ])
        let ids = await drain(box).map { $0.payload["ids"] }
        #expect(ids == [.array([.integer(1), .integer(3)]), .array([.integer(3)])])
    }

    @Test func selectLimitsColumnsToThePrimaryKeyAndTheNamedOnes() async throws {
        let hub = makeHub()
        let select = JSONValue.object([("event", .string("*")), ("schema", .string("public")), ("table", .string("places")),
                                       ("select", .array([.string("name_ar")]))])
        let box = try subscribe(hub, socket: 1, identity: anon, bindings: [select])
        _ = await drain(box)
        await hub.dispatch([change(.insert, table: "places", record: place("p1", active: true), old: nil)])
        let data = try #require(changes(await drain(box)).first)
        #expect(data["record"] == .object([("id", .string("p1")), ("name_ar", .string("Café"))]))
    }

    @Test func oversizedRecordsAreSentKeyOnly() async throws {
        var limits = RealtimeLimits()
        limits.recordSizeLimit = 64
        let hub = makeHub(limits: limits)
        let box = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")])
        _ = await drain(box)
        await hub.dispatch([change(.insert, table: "places", record: place("p1", active: true, name: String(repeating: "x", count: 200)), old: nil)])
        #expect(changes(await drain(box)).first?["record"] == .object([("id", .string("p1"))]))
    }

    @Test func aRunPastTheBoundIsRefusedWholeWithTheResyncSignal() async throws {
        let hub = makeHub()
        let small = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")], bound: 50)
        let large = try subscribe(hub, socket: 2, identity: anon, bindings: [binding(table: "places")], bound: 1_000)
        _ = await drain(small)
        _ = await drain(large)
        let run = (0..<100).map { change(.insert, table: "places", record: place("p\($0)", active: true), old: nil) }
        await hub.dispatch(run)
        let signalled = await drain(small)
        #expect(signalled.map(\.event) == ["system", "phx_close"])
        #expect(signalled[0].payload["message"] == .string("Too many pending changes: resync"))
        let whole = changes(await drain(large))
        #expect(whole.map { $0["seq"] } == run.map { JSONValue.integer($0.seq) })
        #expect(small.takeClosedTopics() == ["realtime:test"])
        #expect(hub.metrics.snapshot.resyncs == 1 && hub.metrics.snapshot.eventsDroppedByResync == 100)
        await hub.dispatch([change(.insert, table: "places", record: place("late", active: true), old: nil)])
        #expect(await drain(small).isEmpty)
    }

    @Test func eventsCarryTheirTransactionAndHowManyOfItTheSocketGetsAfterPolicy() async throws {
        let hub = makeHub()
        // Alice's socket: two channels (favorites, places) on one outbox; Bob's: favorites.
        let aliceBox = SocketOutbox(version: .v1, bound: 10_000)
        for (topic, table) in [("realtime:favorites", "favorites"), ("realtime:places", "places")] {
            var socketMachine = machine()
            try perform(socketMachine.join(joinMessage(topic: topic, bindings: [binding(table: table)]), identity: .success(alice), now: 0),
                        hub: hub, socket: 1, outbox: aliceBox)
        }
        let bobBox = try subscribe(hub, socket: 2, identity: bob, bindings: favorites)
        _ = await drain(aliceBox)
        _ = await drain(bobBox)
        await hub.dispatch([
            change(.insert, table: "favorites", record: favorite("a1", user: alice), old: nil, seq: 500, transaction: 500),
            change(.insert, table: "favorites", record: favorite("b1", user: bob), old: nil, seq: 501, transaction: 500),
            change(.insert, table: "places", record: place("p1", active: true), old: nil, seq: 502, transaction: 500),
            change(.insert, table: "places", record: place("p2", active: true), old: nil, seq: 503, transaction: 503),
        ])
        let marks = { (data: [JSONValue]) in data.map { [$0["seq"], $0["tx"], $0["tx_events"]] } }
        #expect(marks(changes(await drain(aliceBox))) == [[.integer(500), .integer(500), .integer(2)], [.integer(502), .integer(500), .integer(2)],
                                                          [.integer(503), .integer(503), .integer(1)]],
                "Bob's row of transaction 500 is not counted for Alice; her two channels' events are")
        #expect(marks(changes(await drain(bobBox))) == [[.integer(501), .integer(500), .integer(1)]])
    }

    @Test func aStalledSocketIsDetectedWhileOthersKeepReceiving() async throws {
        let clock = TestClock()
        let hub = makeHub(clock: clock)
        let stalled = try subscribe(hub, socket: 1, identity: anon, bindings: [binding(table: "places")])
        let healthy = try subscribe(hub, socket: 2, identity: anon, bindings: [binding(table: "places")])
        _ = await drain(healthy)
        for index in 0..<3 {
            clock.advance(5)
            await hub.dispatch([change(.insert, table: "places", record: place("s\(index)", active: true), old: nil)])
            #expect(changes(await drain(healthy)).count == 1)
        }
        #expect(stalled.isStalled(now: clock.now(), timeout: 10))
        #expect(!healthy.isStalled(now: clock.now(), timeout: 10))
    }

    @Test func broadcastSkipsTheSenderUnlessSelf() async throws {
        let hub = makeHub()
        let sender = try subscribe(hub, socket: 1, identity: anon, bindings: [], topic: "realtime:room")
        let other = try subscribe(hub, socket: 2, identity: anon, bindings: [], topic: "realtime:room", version: .v2)
        _ = await drain(sender)
        _ = await drain(other)
        await hub.broadcast(topic: "realtime:room", event: "typing", payload: .object([("user", .string("a"))]),
                            sender: ChannelID(socket: 1, topic: "realtime:room"), includeSelf: false)
        #expect(await drain(sender).isEmpty)
        let received = await drain(other)
        #expect(received.map(\.event) == ["broadcast"])
        #expect(received[0].joinRef == nil && received[0].ref == nil)
        #expect(received[0].payload["payload"]?["user"] == .string("a"))
    }

    @Test func presenceTracksAndLeaves() async throws {
        let hub = makeHub()
        let first = try subscribe(hub, socket: 1, identity: anon, bindings: [], topic: "realtime:room")
        let second = try subscribe(hub, socket: 2, identity: anon, bindings: [], topic: "realtime:room")
        _ = await drain(first)
        _ = await drain(second)
        hub.track(ChannelID(socket: 1, topic: "realtime:room"), meta: .object([("online_at", .string("now"))]))
        let diff = try #require(await drain(second).first)
        #expect(diff.event == "presence_diff")
        guard case .object(let joins)? = diff.payload["joins"], let entry = joins.first else { Issue.record("no joins"); return }
        #expect(entry.value["metas"].map { if case .array(let metas) = $0 { metas.count } else { 0 } } == 1)
        hub.unregister(ChannelID(socket: 1, topic: "realtime:room"))
        let leave = try #require(await drain(second).first)
        guard case .object(let leaves)? = leave.payload["leaves"] else { Issue.record("no leaves"); return }
        #expect(leaves.map(\.key) == [entry.key])
    }

    @Test func groupsAreSharedByIdentitiesThePolicyTreatsAlike() throws {
        let hub = makeHub()
        for socket in 0..<10 { _ = try subscribe(hub, socket: socket, identity: socket % 2 == 0 ? alice : bob, bindings: favorites) }
        for socket in 10..<15 { _ = try subscribe(hub, socket: socket, identity: anon, bindings: [binding(table: "places")]) }
        #expect(hub.groupCount(table: "favorites") == 2)
        #expect(hub.groupCount(table: "places") == 1)
    }
}
