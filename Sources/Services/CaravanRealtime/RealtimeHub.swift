package import CaravanCore
package import Logging
import Synchronization

/// Identifies one joined channel: the socket and the topic.
package struct ChannelID: Hashable, Sendable {
    package let socket: Int
    package let topic: String

    package init(socket: Int, topic: String) {
        self.socket = socket
        self.topic = topic
    }
}

/// Relays broadcasts to the other instances of a deployment (PostgreSQL `NOTIFY`).
package protocol BroadcastRelay: Sendable {
    /// Sends a broadcast that originated on this instance to the others.
    func publish(_ broadcast: Broadcast) async throws
}

/// The broker between the change feed, the sockets' channels, broadcast and presence.
///
/// Subscribers are grouped per table by their resolved select policy (the `BoundPredicate` a policy becomes for one
/// identity: every identity a policy treats alike gives the same predicate), so a change is checked against a policy
/// once per group, then against each member's binding filters. Thread-safe: registration and fan-out take one lock,
/// and a join's reply is queued inside the registration, so a subscription is live before its reply and no event
/// reaches a socket before the reply that gives its ids.
package final class RealtimeHub: Sendable {
    struct Member: Sendable {
        let id: ChannelID
        let outbox: SocketOutbox
        /// The channel's bindings that cover this table.
        let bindings: [PostgresChangesBinding]
    }

    struct Presence: Sendable {
        let key: String
        let ref: String
        let meta: JSONValue
    }

    struct Channel: Sendable {
        let request: ChannelRequest
        let outbox: SocketOutbox
        /// The select rule per subscribed table (the group key).
        let rules: [String: BoundPredicate]
        /// What the channel may receive and send (everything unless private).
        let permissions: ChannelPermissions

        /// The key of the channel's topic in `State.topics` and `State.presences`.
        var scope: String { RealtimeHub.scope(request.topic, isPrivate: request.isPrivate) }
    }

    struct State: Sendable {
        var groups: [String: [BoundPredicate: [ChannelID: Member]]] = [:]
        /// What each group's rule reads of other tables (rules with a subquery only), worked out once when the group forms.
        var dependencies: [String: [BoundPredicate: [PolicyDependency]]] = [:]
        var channels: [ChannelID: Channel] = [:]
        /// The channels of each topic, private ones apart (`RealtimeHub.scope`).
        var topics: [String: Set<ChannelID>] = [:]
        var presences: [String: [ChannelID: Presence]] = [:]
        var nextPresenceRef = 0
    }

    let catalog: Catalog
    let limits: RealtimeLimits
    package let metrics: RealtimeMetrics
    let membership: (any MembershipReader)?
    let relay: (any BroadcastRelay)?
    let payloads: ChangePayloadBuilder
    let logger: Logger
    /// Seconds on a monotonic clock (outbox progress).
    let now: @Sendable () -> Double
    let state = Mutex(State())

    package init(catalog: Catalog, limits: RealtimeLimits, metrics: RealtimeMetrics = RealtimeMetrics(), membership: (any MembershipReader)? = nil,
                relay: (any BroadcastRelay)? = nil, logger: Logger, now: @escaping @Sendable () -> Double) {
        self.catalog = catalog
        self.limits = limits
        self.metrics = metrics
        self.membership = membership
        self.relay = relay
        self.payloads = ChangePayloadBuilder(recordSizeLimit: limits.recordSizeLimit)
        self.logger = logger
        self.now = now
    }

    // MARK: Channels

    /// Registers (or replaces) a channel, then queues `frames` (the join reply first) in one step.
    /// Throws when a select policy cannot be resolved for the identity (the join then fails).
    package func register(socket: Int, request: ChannelRequest, outbox: SocketOutbox, frames: [OutboundFrame],
                          permissions: ChannelPermissions = .all) throws(RealtimeError) {
        var rules: [String: BoundPredicate] = [:]
        for binding in request.bindings {
            for name in binding.tables where rules[name] == nil {
                guard let table = catalog.table(named: name) else { continue }
                do {
                    rules[name] = try catalog.policies.rule(.select, on: table, for: request.identity, catalog: catalog)
                } catch {
                    logger.error("realtime: a select policy does not resolve", metadata: ["table": "\(name)", "error": "\(error)"])
                    throw RealtimeError(.invalidJoin, "Unable to subscribe to changes with given parameters")
                }
            }
        }
        let id = ChannelID(socket: socket, topic: request.topic)
        let channel = Channel(request: request, outbox: outbox, rules: rules, permissions: permissions)
        let clock = now()
        state.withLock { state in
            let old = Self.removeSubscriptions(id, from: &state)
            if old == nil { metrics.channels.add(1, ordering: .relaxed) }
            if let old, old.scope != channel.scope { Self.leaveScope(id, old.scope, state: &state, now: clock) }
            state.channels[id] = channel
            state.topics[channel.scope, default: []].insert(id)
            for (table, rule) in rules {
                let bindings = request.bindings.filter { $0.tables.contains(table) }
                state.groups[table, default: [:]][rule, default: [:]][id] = Member(id: id, outbox: outbox, bindings: bindings)
                if rule.containsSubquery, state.dependencies[table]?[rule] == nil { state.dependencies[table, default: [:]][rule] = PolicyDependency.of(rule) }
            }
            var queued = frames
            if request.presenceEnabled, permissions.readPresence, !frames.isEmpty {
                queued.append(OutboundFrame(joinRef: request.joinRef, ref: nil, topic: request.topic, event: "presence_state",
                                            payload: Self.presenceState(state.presences[channel.scope] ?? [:])))
            }
            outbox.push(queued, now: clock)
        }
    }

    /// Removes a channel: its subscriptions, its topic membership and its presence (the others get the leave).
    package func unregister(_ id: ChannelID) {
        let clock = now()
        state.withLock { state in
            guard let old = Self.removeSubscriptions(id, from: &state) else { return }
            state.channels[id] = nil
            Self.leaveScope(id, old.scope, state: &state, now: clock)
            metrics.channels.subtract(1, ordering: .relaxed)
        }
    }

    /// Takes `id` out of a topic's channels and presence (the others get the leave).
    static func leaveScope(_ id: ChannelID, _ scope: String, state: inout State, now: Double) {
        state.topics[scope]?.remove(id)
        if state.topics[scope]?.isEmpty == true { state.topics[scope] = nil }
        if let presence = state.presences[scope]?.removeValue(forKey: id) {
            sendPresenceDiff(joins: [], leaves: [presence], scope: scope, state: state, now: now)
        }
    }

    /// The key of a topic's channels: private channels of a topic never share broadcasts or presence with its
    /// public ones (as in Supabase Realtime). Client topics start with `realtime:`, so the two never collide.
    static func scope(_ topic: String, isPrivate: Bool) -> String {
        isPrivate ? "private\u{0}" + topic : topic
    }

    /// Removes `id` from the change groups; returns the channel it had, if any.
    @discardableResult
    static func removeSubscriptions(_ id: ChannelID, from state: inout State) -> Channel? {
        guard let old = state.channels[id] else { return nil }
        for (table, rule) in old.rules {
            state.groups[table]?[rule]?[id] = nil
            if state.groups[table]?[rule]?.isEmpty == true {
                state.groups[table]?[rule] = nil
                state.dependencies[table]?[rule] = nil
            }
            if state.groups[table]?.isEmpty == true { state.groups[table] = nil }
        }
        return old
    }

    /// Closes a channel whose queue passed its bound: the resync signal, then `phx_close` (wire-protocol §4.4).
    func closeForResync(_ id: ChannelID, refused: Int) {
        let channel = state.withLock { $0.channels[id] }
        guard let channel else { return }
        unregister(id)
        metrics.resyncs.add(1, ordering: .relaxed)
        metrics.eventsDroppedByResync.add(refused, ordering: .relaxed)
        let request = channel.request
        channel.outbox.noteClosed(id.topic)
        channel.outbox.push([
            OutboundFrame(joinRef: request.joinRef, ref: nil, topic: id.topic, event: "system",
                          payload: SystemPayload.error("Too many pending changes: resync", extension: "postgres_changes", channel: request.channelName)),
            OutboundFrame(joinRef: request.joinRef, ref: request.joinRef, topic: id.topic, event: "phx_close", payload: .object([])),
        ], now: now())
        logger.info("realtime: channel closed for resync", metadata: ["realtime.topic": "\(id.topic)", "realtime.refused": "\(refused)"])
    }

    /// The number of channels registered now.
    package var channelCount: Int { state.withLock { $0.channels.count } }

    // MARK: Broadcast

    /// Sends a broadcast to the topic's channels (the private ones for a private broadcast, the public ones
    /// otherwise; those that may read it): not to `sender` unless `includeSelf`; relayed to the other instances when
    /// it originated here (`sender` or the REST endpoint) and a relay is configured. False, and nothing sent, when
    /// `sender` may not send on its channel.
    @discardableResult
    package func broadcast(_ message: Broadcast, sender: ChannelID?, includeSelf: Bool, relayed: Bool = false) async -> Bool {
        if let sender {
            guard state.withLock({ $0.channels[sender]?.permissions.writeBroadcast }) == true else { return false }
        }
        deliverBroadcast(message, sender: sender, includeSelf: includeSelf)
        guard !relayed, let relay else { return true }
        do {
            try await relay.publish(message)
        } catch {
            logger.error("realtime: relaying a broadcast failed", metadata: ["realtime.topic": "\(message.topic)", "error": "\(error)"])
        }
        return true
    }

    /// A public JSON broadcast.
    package func broadcast(topic: String, event: String, payload: JSONValue, sender: ChannelID?, includeSelf: Bool, relayed: Bool = false) async {
        await broadcast(Broadcast(topic: topic, event: event, payload: .json(payload)), sender: sender, includeSelf: includeSelf, relayed: relayed)
    }

    func deliverBroadcast(_ message: Broadcast, sender: ChannelID?, includeSelf: Bool) {
        let scope = Self.scope(message.topic, isPrivate: message.isPrivate)
        let targets = state.withLock { state -> [(ChannelID, SocketOutbox)] in
            (state.topics[scope] ?? []).compactMap { id in
                if id == sender && !includeSelf { return nil }
                guard let channel = state.channels[id], channel.permissions.readBroadcast else { return nil }
                return (id, channel.outbox)
            }
        }
        var encoded: [ProtocolVersion: SocketFrame?] = [:]
        let clock = now()
        for (id, outbox) in targets {
            let frame = encoded[outbox.version] ?? Self.frame(of: message, version: outbox.version)
            encoded[outbox.version] = frame
            guard let frame else { continue }
            if outbox.offer(frames: [frame], now: clock) {
                metrics.eventsSent.add(1, ordering: .relaxed)
            } else {
                closeForResync(id, refused: 1)
            }
        }
    }

    /// A broadcast as a socket of `version` receives it: a text `broadcast` push for a JSON payload, a kind 4 binary
    /// frame for raw bytes — to vsn 2.0.0 sockets only (nil for the others, which cannot carry bytes).
    static func frame(of message: Broadcast, version: ProtocolVersion) -> SocketFrame? {
        switch message.payload {
        case .json(let payload):
            let body = JSONValue.object([("type", .string("broadcast")), ("event", .string(message.event)), ("payload", payload)]).jsonText
            return .text(PhoenixCodec.encode(OutboundFrame(joinRef: nil, ref: nil, topic: message.topic, event: "broadcast", payload: body), version: version))
        case .bytes(let bytes):
            guard version == .v2 else { return nil }
            return UserBroadcastFrame.encode(topic: message.topic, event: message.event, bytes: bytes).map(SocketFrame.binary)
        }
    }

    // MARK: Presence

    /// Tracks (or re-tracks) a channel's presence: every channel of the topic that may read presence gets the diff.
    /// False, and nothing tracked, when the channel may not track presence.
    @discardableResult
    package func track(_ id: ChannelID, meta: JSONValue) -> Bool {
        let clock = now()
        return state.withLock { state in
            guard let channel = state.channels[id], channel.permissions.writePresence else { return false }
            state.nextPresenceRef += 1
            let presence = Presence(key: channel.request.presenceKey, ref: String(state.nextPresenceRef), meta: meta)
            let previous = state.presences[channel.scope, default: [:]].updateValue(presence, forKey: id)
            Self.sendPresenceDiff(joins: [presence], leaves: previous.map { [$0] } ?? [], scope: channel.scope, state: state, now: clock)
            return true
        }
    }

    /// Untracks a channel's presence.
    package func untrack(_ id: ChannelID) {
        let clock = now()
        state.withLock { state in
            guard let scope = state.channels[id]?.scope, let presence = state.presences[scope]?.removeValue(forKey: id) else { return }
            Self.sendPresenceDiff(joins: [], leaves: [presence], scope: scope, state: state, now: clock)
        }
    }

    static func presenceEntries(_ presences: [Presence]) -> JSONValue {
        var byKey: [(key: String, value: [JSONValue])] = []
        for presence in presences.sorted(by: { $0.ref.count == $1.ref.count ? $0.ref < $1.ref : $0.ref.count < $1.ref.count }) {
            var meta: [(key: String, value: JSONValue)] = [("phx_ref", .string(presence.ref))]
            if case .object(let members) = presence.meta { meta += members.filter { $0.key != "phx_ref" } }
            if let index = byKey.firstIndex(where: { $0.key == presence.key }) {
                byKey[index].value.append(.object(meta))
            } else {
                byKey.append((presence.key, [.object(meta)]))
            }
        }
        return .object(byKey.map { (key: $0.key, value: JSONValue.object([("metas", .array($0.value))])) })
    }

    static func presenceState(_ presences: [ChannelID: Presence]) -> JSONValue {
        presenceEntries(Array(presences.values))
    }

    static func sendPresenceDiff(joins: [Presence], leaves: [Presence], scope: String, state: State, now: Double) {
        let payload = JSONValue.object([("joins", presenceEntries(joins)), ("leaves", presenceEntries(leaves))])
        for id in state.topics[scope] ?? [] {
            guard let channel = state.channels[id], channel.permissions.readPresence else { continue }
            channel.outbox.push([OutboundFrame(joinRef: channel.request.joinRef, ref: nil, topic: id.topic, event: "presence_diff", payload: payload)], now: now)
        }
    }
}

extension RealtimeHub {
    /// How many policy groups subscribe to `table` (each is evaluated once per change).
    package func groupCount(table: String) -> Int {
        state.withLock { $0.groups[table]?.count ?? 0 }
    }
}
