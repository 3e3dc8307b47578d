import CaravanCore
@testable import CaravanRealtime
import Logging
import Testing

/// Private channels (`config.private: true`), authorized by policies on `realtime.messages` as Supabase's Realtime
/// Authorization is: members of a room read it and broadcast on it; the lobby is readable by any signed-in user and
/// writable by nobody; presence may be read by members but tracked by nobody.
@Suite struct PrivateChannelTests {
    static let roomMembers = TableSchema("room_members", columns: [Column("room", .text, nullable: false), Column("user_id", .uuid, nullable: false)],
                                         primaryKey: ["room", "user_id"])
    static let member = PolicyRule.exists(table: "room_members", where: [.matchesOuter(inner: "room", outer: "topic"), .equals(inner: "user_id", .authUID)])
    static let rooms = AppModule(name: "rooms", tables: [roomMembers], migrations: [], policies: [
        RealtimeMessages.table: [
            TablePolicy("members read", for: [.select], to: [.authenticated], using: member),
            TablePolicy("the lobby is open to read", for: [.select], to: [.authenticated], using: .compare(.column("topic"), .eq, .literal(.text("lobby")))),
            TablePolicy("members broadcast", for: [.insert], to: [.authenticated],
                        check: .and([member, .compare(.column("extension"), .eq, .literal(.text("broadcast")))])),
        ],
    ])
    static let catalog = Catalog(modules: [SystemModule.module, rooms])

    /// Room memberships, answered in memory by evaluating the subquery's predicate on each row.
    struct Memberships: MembershipReader {
        let rows: [[String: Value]]
        func exists(in table: TableSchema, where predicate: BoundPredicate) async throws -> Bool {
            table.name == "room_members" && rows.contains { row in predicate.evaluate { row[$0] ?? .null } == true }
        }
    }

    /// Tokens are the users' names.
    struct NamedUsers: TokenAuthenticator {
        func identity(for token: String) async throws -> Identity {
            switch token {
            case "alice": alice
            case "bob": bob
            default: anon
            }
        }
    }

    static func service(memberships: [(String, Identity)]) -> RealtimeService {
        let rows = memberships.map { ["room": Value.text($0.0), "user_id": Value.text($0.1.userID ?? "")] }
        let clock = RealtimeClock(monotonic: { 0 }, epochSeconds: { 1_000 })
        let hub = RealtimeHub(catalog: catalog, limits: RealtimeLimits(), membership: Memberships(rows: rows), logger: Logger(label: "test"),
                              now: clock.monotonic)
        return RealtimeService(hub: hub, catalog: catalog, limits: RealtimeLimits(), authenticator: NamedUsers(), clock: clock, logger: Logger(label: "test"))
    }

    /// A vsn 2.0.0 join (`[join_ref, ref, topic, "phx_join", payload]`), as supabase-swift sends it.
    static func join(_ topic: String, token: String, isPrivate: Bool, ref: String = "1") -> SocketFrame {
        let config = JSONValue.object([
            ("broadcast", .object([("ack", .bool(true)), ("self", .bool(false))])), ("presence", .object([("key", .string("")), ("enabled", .bool(true))])),
            ("postgres_changes", .array([])), ("private", .bool(isPrivate)),
        ])
        return .text(JSONValue.array([.string(ref), .string(ref), .string("realtime:" + topic), .string("phx_join"),
                                      .object([("config", config), ("access_token", .string(token))])]).jsonText)
    }

    static func send(_ topic: String, event: String, ref: String, joinRef: String = "1") -> SocketFrame {
        .text(JSONValue.array([.string(joinRef), .string(ref), .string("realtime:" + topic), .string("broadcast"),
                               .object([("type", .string("broadcast")), ("event", .string(event)), ("payload", .object([("n", .integer(1))]))])]).jsonText)
    }

    static func frames(_ session: RealtimeSession) async -> [SocketFrame] {
        guard session.outbox.pending > 0 else { return [] }
        let frames = session.outbox.take() ?? []
        session.outbox.written(frames.count, now: 0)
        return frames
    }

    static func messages(_ session: RealtimeSession) async -> [PhoenixMessage] {
        await frames(session).compactMap { frame in
            guard case .text(let text) = frame else { return nil }
            return try? PhoenixCodec.decode(text, version: .v2)
        }
    }

    static func reply(_ messages: [PhoenixMessage], ref: String) -> JSONValue? {
        messages.first { $0.event == "phx_reply" && $0.ref == ref }?.payload
    }

    @Test func onlyMembersJoinARoomAndARefusalIsTheJoinErrorSupabaseSends() async throws {
        let realtime = Self.service(memberships: [("room-1", alice)])
        let member = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let outsider = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let anonymous = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        await member.handle(Self.join("room-1", token: "alice", isPrivate: true))
        await outsider.handle(Self.join("room-1", token: "bob", isPrivate: true))
        await anonymous.handle(Self.join("room-1", token: "anon", isPrivate: true))
        #expect(Self.reply(await Self.messages(member), ref: "1")?["status"] == .string("ok"))
        for refused in [outsider, anonymous] {
            let answer = Self.reply(await Self.messages(refused), ref: "1")
            #expect(answer?["status"] == .string("error"))
            #expect(answer?["response"]?["reason"] == .string("Unauthorized: You do not have permissions to read from this Channel topic: room-1"))
        }
        #expect(realtime.hub.channelCount == 1)
        // The refused socket may join again once it may (the state machine forgot the channel) — and a public
        // channel of the same name needs no policy.
        await outsider.handle(Self.join("room-1", token: "bob", isPrivate: false, ref: "2"))
        #expect(Self.reply(await Self.messages(outsider), ref: "2")?["status"] == .string("ok"))
    }

    @Test func privateAndPublicChannelsOfOneTopicNeverSeeEachOthersBroadcasts() async throws {
        let realtime = Self.service(memberships: [("room-1", alice), ("room-1", bob)])
        let alicePrivate = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let bobPrivate = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let bobPublic = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        await alicePrivate.handle(Self.join("room-1", token: "alice", isPrivate: true))
        await bobPrivate.handle(Self.join("room-1", token: "bob", isPrivate: true))
        await bobPublic.handle(Self.join("room-1", token: "bob", isPrivate: false))
        for session in [alicePrivate, bobPrivate, bobPublic] { _ = await Self.messages(session) }

        await alicePrivate.handle(Self.send("room-1", event: "secret", ref: "5"))
        #expect(Self.reply(await Self.messages(alicePrivate), ref: "5")?["status"] == .string("ok"))
        #expect(await Self.messages(bobPrivate).map(\.payload["event"]) == [.string("secret")])
        let heard = await Self.messages(bobPublic)
        #expect(heard.isEmpty, "\(heard)")

        await bobPublic.handle(Self.send("room-1", event: "open", ref: "6"))
        #expect(Self.reply(await Self.messages(bobPublic), ref: "6")?["status"] == .string("ok"))
        #expect(await Self.messages(alicePrivate).isEmpty)
        #expect(await Self.messages(bobPrivate).isEmpty)

        // The REST endpoint's private messages reach the private channels only.
        await realtime.hub.broadcast(Broadcast(topic: "realtime:room-1", event: "from-server", payload: .json(.object([])), isPrivate: true),
                                     sender: nil, includeSelf: true)
        #expect(await Self.messages(bobPrivate).map(\.payload["event"]) == [.string("from-server")])
        #expect(await Self.messages(bobPublic).isEmpty)
    }

    @Test func aReaderWhoMayNotWriteGetsAnErrorAckAndNothingIsSent() async throws {
        let realtime = Self.service(memberships: [("room-1", alice)])
        let reader = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let listener = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        await reader.handle(Self.join("lobby", token: "bob", isPrivate: true))
        await listener.handle(Self.join("lobby", token: "alice", isPrivate: true))
        #expect(Self.reply(await Self.messages(reader), ref: "1")?["status"] == .string("ok"))
        _ = await Self.messages(listener)

        await reader.handle(Self.send("lobby", event: "shout", ref: "7"))
        let answer = Self.reply(await Self.messages(reader), ref: "7")
        #expect(answer?["status"] == .string("error"))
        #expect(answer?["response"]?["reason"] == .string("Unauthorized: You do not have permissions to write to this Channel topic: lobby"))
        #expect(await Self.messages(listener).isEmpty)
        #expect(await realtime.hub.maySendPrivately(to: "lobby", identity: alice) == false)
        #expect(await realtime.hub.maySendPrivately(to: "room-1", identity: alice) == true)
        #expect(await realtime.hub.maySendPrivately(to: "room-1", identity: bob) == false)
    }

    @Test func membersSeePresenceButNobodyMayTrackWhereTheInsertPolicyIsForBroadcastOnly() async throws {
        let realtime = Self.service(memberships: [("room-1", alice)])
        let session = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        await session.handle(Self.join("room-1", token: "alice", isPrivate: true))
        let joined = await Self.messages(session)
        #expect(joined.contains { $0.event == "presence_state" })
        let track = JSONValue.array([.string("1"), .string("8"), .string("realtime:room-1"), .string("presence"),
                                     .object([("type", .string("presence")), ("event", .string("track")), ("payload", .object([("at", .integer(1))]))])])
        await session.handle(.text(track.jsonText))
        let after = await Self.messages(session)
        #expect(Self.reply(after, ref: "8")?["status"] == .string("error"))
        #expect(!after.contains { $0.event == "presence_diff" })
    }

    @Test func aTopicThatIsNoValidKeyOfTheMembershipColumnMatchesNothing() async throws {
        let groups = TableSchema("group_members", columns: [Column("group_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false)],
                                 primaryKey: ["group_id", "user_id"])
        let rule = PolicyRule.exists(table: "group_members", where: [.matchesOuter(inner: "group_id", outer: "topic")])
        let module = AppModule(name: "groups", tables: [groups], migrations: [], policies: [:])
        let bound = try rule.resolve(for: alice, table: RealtimeMessages.schema, catalog: Catalog(modules: [module]))
        var asked: [BoundPredicate] = []
        _ = bound.evaluate(RealtimeMessages.row(channel: "not-a-uuid", extension: .broadcast)) { _, predicate in
            asked.append(predicate)
            return nil
        }
        let groupID = try #require(groups.column(named: "group_id"))
        #expect(asked == [.and([.compare(groupID, .eq, .null)])])
    }
}

/// Raw (encoding 0) broadcasts of the vsn 2.0.0 serializer: delivered as kind 4 frames to vsn 2.0.0 sockets, never
/// to vsn 1.0.0 ones (JSON cannot carry them), and acknowledged.
@Suite struct RawBroadcastTests {
    @Test func rawBytesReachVersion2SocketsAsKind4FramesAndSkipVersion1() async throws {
        let realtime = PrivateChannelTests.service(memberships: [])
        let sender = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let v2 = try #require(realtime.openSession(version: .v2, apikey: "anon"))
        let v1 = try #require(realtime.openSession(version: .v1, apikey: "anon"))
        await sender.handle(PrivateChannelTests.join("cursor", token: "alice", isPrivate: false))
        await v2.handle(PrivateChannelTests.join("cursor", token: "bob", isPrivate: false))
        await v1.handle(.text(#"{"topic":"realtime:cursor","event":"phx_join","ref":"1","payload":{"config":{}}}"#))
        for session in [sender, v2, v1] { _ = await PrivateChannelTests.frames(session) }

        let push = UserBroadcastPushTests.frame(joinRef: "1", ref: "9", topic: "realtime:cursor", event: "move", encoding: 0, payload: [0, 7, 255])
        await sender.handle(.binary(push))
        let received = await PrivateChannelTests.frames(v2)
        guard case .binary(let bytes)? = received.first, received.count == 1 else { Issue.record("expected one binary frame: \(received)"); return }
        let decoded = try #require(UserBroadcastPushTests.decodeKind4(bytes))
        #expect(decoded.topic == "realtime:cursor" && decoded.event == "move" && decoded.encoding == 0 && decoded.payload == [0, 7, 255])
        #expect(await PrivateChannelTests.frames(v1).isEmpty)
        let ack = await PrivateChannelTests.messages(sender)
        #expect(PrivateChannelTests.reply(ack, ref: "9")?["status"] == .string("ok"))
    }
}
