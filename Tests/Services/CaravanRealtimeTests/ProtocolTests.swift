import CaravanCore
import CaravanRealtime
import Testing

@Suite struct CodecTests {
    @Test func v1FramesAlwaysCarryRefAndNoJoinRef() throws {
        let frame = OutboundFrame(joinRef: "3", ref: nil, topic: "realtime:a", event: "system", payload: .object([]))
        let text = PhoenixCodec.encode(frame, version: .v1)
        let decoded = try JSONParser.parse(text)
        #expect(decoded["ref"] == .null)
        #expect(decoded["join_ref"] == nil)
        #expect(decoded["topic"] == .string("realtime:a"))
        #expect(decoded["payload"] == .object([]))
    }

    @Test func v2FramesAreFiveElementArrays() throws {
        let frame = OutboundFrame(joinRef: "1", ref: nil, topic: "realtime:a", event: "system", payload: .object([("x", .integer(1))]))
        #expect(PhoenixCodec.encode(frame, version: .v2) == #"["1",null,"realtime:a","system",{"x":1}]"#)
        let message = try PhoenixCodec.decode(#"[null,"5","phoenix","heartbeat",{}]"#, version: .v2)
        #expect(message == PhoenixMessage(joinRef: nil, ref: "5", topic: "phoenix", event: "heartbeat", payload: .object([])))
    }

    @Test func malformedFramesAreErrors() {
        #expect(throws: RealtimeError.self) { try PhoenixCodec.decode("{}", version: .v1) }
        #expect(throws: RealtimeError.self) { try PhoenixCodec.decode(#"{"topic":"a","event":"b"}"#, version: .v2) }
        #expect(throws: RealtimeError.self) { try PhoenixCodec.decode("not json", version: .v1) }
    }

    @Test func versionsComeFromVsn() {
        #expect(ProtocolVersion(vsn: nil) == .v1)
        #expect(ProtocolVersion(vsn: "2.0.0") == .v2)
        #expect(ProtocolVersion(vsn: "3.0.0") == nil)
    }
}

@Suite struct StateMachineTests {
    @Test func heartbeatIsAnsweredAtOnceWithItsRef() {
        var socket = machine(.v2)
        let sent = frames(socket.receive(PhoenixMessage(joinRef: nil, ref: "7", topic: "phoenix", event: "heartbeat", payload: .object([])), now: 1))
        #expect(PhoenixCodec.encode(sent[0], version: .v2) == #"[null,"7","phoenix","phx_reply",{"status":"ok","response":{}}]"#)
    }

    @Test func joinEchoesBindingsInOrderWithIDsThenPushesSystemWithTheJoinRef() throws {
        var socket = machine(.v2)
        let bindings = [binding("INSERT", table: "places", filter: "rating_count=eq.7"), binding("*", table: "categories")]
        let actions = socket.join(joinMessage(ref: "4", bindings: bindings, extra: [("unknown_key", .bool(true))]), identity: .success(anon), now: 0)
        let sent = frames(actions)
        #expect(sent.count == 2)
        #expect(sent[0].event == "phx_reply" && sent[0].ref == "4" && sent[0].joinRef == "4")
        let reply = try JSONParser.parse(sent[0].payload)
        #expect(reply["status"] == .string("ok"))
        guard case .array(let echoed)? = reply["response"]?["postgres_changes"] else { Issue.record("no postgres_changes"); return }
        #expect(echoed.map { $0["table"] } == [.string("places"), .string("categories")])
        #expect(echoed.map { $0["filter"] } == [.string("rating_count=eq.7"), nil])
        let ids = echoed.compactMap { if case .integer(let id)? = $0["id"] { id } else { nil } }
        #expect(ids.count == 2 && Set(ids).count == 2)
        #expect(sent[1].event == "system" && sent[1].joinRef == "4" && sent[1].ref == nil)
        #expect(try JSONParser.parse(sent[1].payload)["message"] == .string("Subscribed to PostgreSQL"))
    }

    @Test(arguments: [
        binding(table: "places", filter: "nope=eq.1"),
        binding(table: "places", filter: "rating_count=eq.notanumber"),
        binding(table: "places", filter: "garbage"),
        binding(table: "caravan_changes"),
        binding(table: "no_such_table"),
        JSONValue.object([("event", .string("SOMETIMES")), ("schema", .string("public")), ("table", .string("places"))]),
        JSONValue.object([("event", .string("*")), ("schema", .string("public")), ("table", .string("places")), ("select", .string("id,name_ar"))]),
    ])
    func badBindingsAreJoinErrors(_ bad: JSONValue) throws {
        var socket = machine()
        let sent = frames(socket.join(joinMessage(bindings: [bad]), identity: .success(anon), now: 0))
        #expect(sent.count == 1)
        #expect(try JSONParser.parse(sent[0].payload)["status"] == .string("error"))
        #expect(socket.joinedTopics.isEmpty)
    }

    @Test func aJoinWithABadTokenFails() throws {
        var socket = machine()
        let sent = frames(socket.join(joinMessage(bindings: []), identity: .failure(RealtimeError(.invalidToken, "Invalid token")), now: 0))
        #expect(try JSONParser.parse(sent[0].payload)["response"]?["reason"] == .string("Invalid token"))
    }

    @Test func leaveRepliesThenCloses() throws {
        var socket = machine()
        _ = socket.join(joinMessage(ref: "1", bindings: []), identity: .success(anon), now: 0)
        let actions = socket.receive(PhoenixMessage(joinRef: "1", ref: "2", topic: "realtime:test", event: "phx_leave", payload: .object([])), now: 1)
        guard case .unregister(let topic) = actions.first else { Issue.record("expected unregister first"); return }
        #expect(topic == "realtime:test")
        let sent = frames(actions)
        #expect(sent.map(\.event) == ["phx_reply", "phx_close"])
        #expect(sent[1].ref == "1" && sent[1].joinRef == "1")
        #expect(socket.joinedTopics.isEmpty)
    }

    @Test func silentSocketsAreDropped() {
        var socket = machine()
        #expect(socket.tick(now: 59, epochSeconds: 0).isEmpty)
        guard case .close? = socket.tick(now: 61, epochSeconds: 0).first else { Issue.record("expected close"); return }
    }

    @Test func expiredTokensCloseTheChannelWithASystemError() throws {
        var socket = machine()
        _ = socket.join(joinMessage(bindings: [binding(table: "favorites")]), identity: .success(alice), now: 0)
        #expect(socket.tick(now: 1, epochSeconds: 1_999).isEmpty)
        let sent = frames(socket.tick(now: 2, epochSeconds: 2_000))
        #expect(sent.map(\.event) == ["system", "phx_close"])
        let payload = try JSONParser.parse(sent[0].payload)
        #expect(payload["status"] == .string("error") && payload["extension"] == .string("system") && payload["channel"] == .string("test"))
        if case .string(let message)? = payload["message"] { #expect(message.hasPrefix("Token has expired")) }
        #expect(socket.joinedTopics.isEmpty)
    }

    @Test func refreshReRegistersOrCloses() {
        var socket = machine()
        _ = socket.join(joinMessage(bindings: [binding(table: "favorites")]), identity: .success(alice), now: 0)
        let message = PhoenixMessage(joinRef: nil, ref: nil, topic: "realtime:test", event: "access_token", payload: .object([("access_token", .string("t"))]))
        guard case .register(let request, let sent)? = socket.refresh(message, identity: .success(bob), now: 1).first else {
            Issue.record("expected a re-registration"); return
        }
        #expect(request.identity == bob && sent.isEmpty)
        let closing = frames(socket.refresh(message, identity: .failure(RealtimeError(.invalidToken, "Invalid token")), now: 2))
        #expect(closing.map(\.event) == ["system", "phx_close"])
    }

    @Test func channelsPerSocketAndJoinsPerSecondAreLimited() throws {
        var limits = RealtimeLimits()
        limits.maxChannelsPerSocket = 2
        limits.joinsPerSecond = 3
        var socket = machine(limits: limits)
        var statuses: [JSONValue?] = []
        for index in 0..<4 {
            let sent = frames(socket.join(joinMessage(topic: "realtime:t\(index)", bindings: []), identity: .success(anon), now: 0))
            statuses.append(try JSONParser.parse(sent[0].payload)["status"])
        }
        #expect(statuses == [.string("ok"), .string("ok"), .string("error"), .string("error")])
    }

    @Test func broadcastsRelayAndAckOnlyWhenJoined() {
        var socket = machine()
        let stray = socket.receive(PhoenixMessage(joinRef: nil, ref: "9", topic: "realtime:x", event: "broadcast",
                                                  payload: .object([("type", .string("broadcast")), ("event", .string("e")), ("payload", .object([]))])), now: 0)
        #expect(frames(stray).first.map { $0.payload.contains("unmatched topic") } == true)
        _ = socket.join(joinMessage(topic: "realtime:x", bindings: []), identity: .success(anon), now: 0)
        let actions = socket.receive(PhoenixMessage(joinRef: "1", ref: "10", topic: "realtime:x", event: "broadcast",
                                                    payload: .object([("type", .string("broadcast")), ("event", .string("typing")), ("payload", .object([]))])), now: 0)
        guard case .broadcast(let broadcast, let includeSelf, let ack)? = actions.first else { Issue.record("expected broadcast"); return }
        #expect(broadcast.topic == "realtime:x" && broadcast.event == "typing" && !broadcast.isPrivate && !includeSelf)
        #expect(ack?.ref == "10" && ack?.event == "phx_reply")
    }
}

@Suite struct FilterTests {
    @Test func filtersParseAndEvaluate() throws {
        let table = try #require(testCatalog.table(named: "places"))
        let row = try ChangeRow(json: place("p1", active: true, count: 7, name: "a,b").jsonText, table: table)
        func check(_ filter: String) throws -> Bool? { try RealtimeFilter.parse(filter, table: table).evaluate(row.value) }
        #expect(try check("rating_count=eq.7") == true)
        #expect(try check("rating_count=neq.7") == false)
        #expect(try check("rating_count=in.(1,7,9)") == true)
        #expect(try check("rating_count=in.(1,9)") == false)
        #expect(try check("name_ar=eq.\"a,b\"") == true)
        #expect(try check("name_ar=in.(\"a,b\",c)") == true)
        #expect(try check("rating_count=gt.5,is_active=is.true") == true)
        #expect(try check("rating_count=gt.5,is_active=is.false") == false)
        #expect(try check("name_ar=not.eq.\"a,b\"") == false)
    }
}
