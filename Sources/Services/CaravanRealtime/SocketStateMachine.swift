package import CaravanCore

/// The Phoenix protocol of one socket as an I/O-free state machine: inbound messages, verified identities and
/// clock ticks go in; `SocketAction`s come out, which the driver performs in order (wire-protocol §4).
///
/// Joins and `access_token` messages need a verified token: the driver verifies it (asynchronously) and passes
/// the outcome to `join(_:identity:now:)` / `refresh(_:identity:now:)`; everything else goes to `receive(_:now:)`.
/// Time is seconds on any monotonic clock, except token expiry, which compares JWT `exp` with `epochSeconds`.
package struct SocketStateMachine: Sendable {
    struct Channel: Sendable {
        var joinRef: String?
        var request: ChannelRequest
        var expiresAt: Int64?
    }

    package let version: ProtocolVersion
    let catalog: Catalog
    let limits: RealtimeLimits
    /// Makes a presence key for a channel whose client sent none.
    let makeKey: @Sendable () -> String
    var channels: [String: Channel] = [:]
    var lastSeen: Double
    var joinBucket: RateBucket
    var eventBucket: RateBucket

    package init(version: ProtocolVersion, catalog: Catalog, limits: RealtimeLimits, now: Double, makeKey: @escaping @Sendable () -> String) {
        self.version = version
        self.catalog = catalog
        self.limits = limits
        self.makeKey = makeKey
        self.lastSeen = now
        self.joinBucket = RateBucket(perSecond: limits.joinsPerSecond, now: now)
        self.eventBucket = RateBucket(perSecond: limits.eventsPerSecond, now: now)
    }

    /// The joined topics.
    package var joinedTopics: [String] { channels.keys.sorted() }

    /// The token a join or refresh should be verified with: the message's `access_token`, else nil (use the apikey).
    package static func accessToken(of message: PhoenixMessage) -> String? {
        if case .string(let token)? = message.payload["access_token"], !token.isEmpty { return token }
        return nil
    }

    // MARK: Inbound

    /// Any message but `phx_join` and `access_token`.
    /// `rawPayload` is the raw (encoding 0) payload of a binary user-broadcast push, whose `message` is the
    /// broadcast without it.
    package mutating func receive(_ message: PhoenixMessage, rawPayload: [UInt8]? = nil, now: Double) -> [SocketAction] {
        lastSeen = now
        if message.topic == "phoenix" && message.event == "heartbeat" {
            return [.send(reply(to: message, joinRef: nil, status: "ok", response: .object([])))]
        }
        guard let channel = channels[message.topic] else {
            guard message.ref != nil else { return [] }
            return [.send(reply(to: message, joinRef: message.joinRef, status: "error", response: .object([("reason", .string("unmatched topic"))])))]
        }
        switch message.event {
        case "phx_leave":
            channels[message.topic] = nil
            return [
                .unregister(topic: message.topic),
                .send(reply(to: message, joinRef: channel.joinRef, status: "ok", response: .object([]))),
                .send(OutboundFrame(joinRef: channel.joinRef, ref: channel.joinRef, topic: message.topic, event: "phx_close", payload: .object([]))),
            ]
        case "broadcast", "presence":
            guard eventBucket.take(now: now) else {
                return [.send(systemPush(channel, SystemPayload.error("Too many messages per second", channel: channel.request.channelName)))]
            }
            return message.event == "broadcast" ? broadcast(message, channel: channel, rawPayload: rawPayload) : presence(message, channel: channel)
        default:
            guard message.ref != nil else { return [] }
            return [.send(reply(to: message, joinRef: channel.joinRef, status: "error", response: .object([("reason", .string("unknown event"))])))]
        }
    }

    private func broadcast(_ message: PhoenixMessage, channel: Channel, rawPayload: [UInt8]?) -> [SocketAction] {
        let payload: BroadcastPayload
        if let rawPayload {
            payload = .bytes(rawPayload)
        } else {
            payload = .json(message.payload["payload"] ?? .object([]))
        }
        var ack: OutboundFrame?
        var payloadIsObject = false
        if case .object? = message.payload["payload"] { payloadIsObject = true }
        if message.ref != nil, rawPayload != nil || payloadIsObject {
            ack = reply(to: message, joinRef: channel.joinRef, status: "ok", response: .object([]))
        }
        guard case .string(let event)? = message.payload["event"] else { return ack.map { [.send($0)] } ?? [] }
        let broadcast = Broadcast(topic: message.topic, event: event, payload: payload, isPrivate: channel.request.isPrivate)
        return [.broadcast(broadcast, includeSelf: channel.request.broadcastSelf, ack: ack)]
    }

    private func presence(_ message: PhoenixMessage, channel: Channel) -> [SocketAction] {
        var actions: [SocketAction] = []
        switch message.payload["event"] {
        case .string("track")?:
            let ack = message.ref == nil ? nil : reply(to: message, joinRef: channel.joinRef, status: "ok", response: .object([]))
            return [.track(topic: message.topic, meta: message.payload["payload"] ?? .object([]), ack: ack)]
        case .string("untrack")?:
            actions.append(.untrack(topic: message.topic))
        default:
            if message.ref != nil {
                return [.send(reply(to: message, joinRef: channel.joinRef, status: "error", response: .object([("reason", .string("unknown presence event"))])))]
            }
            return []
        }
        if message.ref != nil { actions.append(.send(reply(to: message, joinRef: channel.joinRef, status: "ok", response: .object([])))) }
        return actions
    }

    /// A `phx_join`, with the outcome of verifying its token.
    package mutating func join(_ message: PhoenixMessage, identity: Result<Identity, RealtimeError>, now: Double) -> [SocketAction] {
        lastSeen = now
        let joinRef = message.joinRef ?? message.ref
        func refuse(_ reason: String) -> [SocketAction] {
            [.send(reply(to: message, joinRef: joinRef, status: "error", response: .object([("reason", .string(reason))])))]
        }
        guard message.topic.hasPrefix("realtime:") else { return refuse("topic must start with realtime:") }
        guard joinBucket.take(now: now) else { return refuse("Too many joins per second") }
        var actions: [SocketAction] = []
        if channels[message.topic] != nil {
            channels[message.topic] = nil
            actions.append(.unregister(topic: message.topic))
        }
        guard channels.count < limits.maxChannelsPerSocket else { return actions + refuse("Too many channels") }
        let verified: Identity
        switch identity {
        case .success(let value): verified = value
        case .failure(let error): return actions + refuse(error.message)
        }
        let request: ChannelRequest
        do {
            request = try makeRequest(message, joinRef: joinRef, identity: verified)
        } catch {
            return actions + refuse(error.message)
        }
        channels[message.topic] = Channel(joinRef: joinRef, request: request, expiresAt: Self.expiry(of: verified))
        var frames = [reply(to: message, joinRef: joinRef, status: "ok",
                            response: .object([("postgres_changes", .array(request.bindings.map(\.echo)))]))]
        if !request.bindings.isEmpty {
            frames.append(OutboundFrame(joinRef: joinRef, ref: nil, topic: message.topic, event: "system",
                                        payload: SystemPayload.ok("Subscribed to PostgreSQL", extension: "postgres_changes", channel: request.channelName)))
        }
        actions.append(.register(request, frames: frames))
        return actions
    }

    private func makeRequest(_ message: PhoenixMessage, joinRef: String?, identity: Identity) throws(RealtimeError) -> ChannelRequest {
        let config = message.payload["config"] ?? .object([])
        let bindings = try BindingParser.parse(config["postgres_changes"], catalog: catalog, firstID: 1, limits: limits.filters)
        var broadcastSelf = false
        if case .bool(true)? = config["broadcast"]?["self"] { broadcastSelf = true }
        var key = ""
        if case .string(let given)? = config["presence"]?["key"] { key = given }
        var presenceEnabled = false
        if case .bool(true)? = config["presence"]?["enabled"] { presenceEnabled = true }
        var request = ChannelRequest(topic: message.topic, joinRef: joinRef, identity: identity, bindings: bindings, broadcastSelf: broadcastSelf,
                                     presenceKey: key.isEmpty ? makeKey() : key, presenceEnabled: presenceEnabled)
        if case .bool(true)? = config["private"] { request.isPrivate = true }
        return request
    }

    /// An `access_token` message, with the outcome of verifying the new token: re-registers the channel with the
    /// new identity (visibility is re-evaluated), or closes it with a `system` error.
    package mutating func refresh(_ message: PhoenixMessage, identity: Result<Identity, RealtimeError>, now: Double) -> [SocketAction] {
        lastSeen = now
        guard var channel = channels[message.topic] else { return [] }
        switch identity {
        case .failure(let error):
            return closeChannel(message.topic, channel, reason: error.message)
        case .success(let verified):
            let old = channel.request
            channel.request = ChannelRequest(topic: old.topic, joinRef: old.joinRef, identity: verified, bindings: old.bindings,
                                             broadcastSelf: old.broadcastSelf, presenceKey: old.presenceKey, presenceEnabled: old.presenceEnabled,
                                             isPrivate: old.isPrivate)
            channel.expiresAt = Self.expiry(of: verified)
            channels[message.topic] = channel
            return [.register(channel.request, frames: [])]
        }
    }

    /// Checks heartbeats and token expiry.
    package mutating func tick(now: Double, epochSeconds: Int64) -> [SocketAction] {
        if now - lastSeen > limits.heartbeatTimeout.seconds {
            return [.close(reason: "heartbeat timeout")]
        }
        // Most ticks find no expired token: only then are the channels sorted (the ticker ticks every socket each second).
        guard channels.values.contains(where: { channel in channel.expiresAt.map { epochSeconds >= $0 } ?? false }) else { return [] }
        var actions: [SocketAction] = []
        for (topic, channel) in channels.sorted(by: { $0.key < $1.key }) {
            guard let expiresAt = channel.expiresAt, epochSeconds >= expiresAt else { continue }
            actions += closeChannel(topic, channel, reason: "Token has expired \(epochSeconds - expiresAt) seconds ago")
        }
        return actions
    }

    /// The hub closed the channel (overflow): forget it, so that later messages to it are unmatched.
    package mutating func serverClosed(_ topic: String) {
        channels[topic] = nil
    }

    private mutating func closeChannel(_ topic: String, _ channel: Channel, reason: String) -> [SocketAction] {
        channels[topic] = nil
        return [
            .unregister(topic: topic),
            .send(systemPush(channel, SystemPayload.error(reason, channel: channel.request.channelName))),
            .send(OutboundFrame(joinRef: channel.joinRef, ref: channel.joinRef, topic: topic, event: "phx_close", payload: .object([]))),
        ]
    }

    // MARK: Frames

    private func reply(to message: PhoenixMessage, joinRef: String?, status: String, response: JSONValue) -> OutboundFrame {
        OutboundFrame(joinRef: joinRef, ref: message.ref, topic: message.topic, event: "phx_reply",
                      payload: .object([("status", .string(status)), ("response", response)]))
    }

    private func systemPush(_ channel: Channel, _ payload: JSONValue) -> OutboundFrame {
        OutboundFrame(joinRef: channel.joinRef, ref: nil, topic: channel.request.topic, event: "system", payload: payload)
    }

    /// The token's `exp` claim.
    static func expiry(of identity: Identity) -> Int64? {
        switch identity.claims["exp"] {
        case .integer(let exp)?: exp
        case .double(let exp)?: Int64(exp)
        default: nil
        }
    }
}
