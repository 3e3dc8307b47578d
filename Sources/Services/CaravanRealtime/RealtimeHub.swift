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
    func publish(topic: String, event: String, payload: JSONValue) async throws
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
    }

    struct State: Sendable {
        var groups: [String: [BoundPredicate: [ChannelID: Member]]] = [:]
        /// What each group's rule reads of other tables (rules with a subquery only), worked out once when the group forms.
        var dependencies: [String: [BoundPredicate: [PolicyDependency]]] = [:]
        var channels: [ChannelID: Channel] = [:]
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
    package func register(socket: Int, request: ChannelRequest, outbox: SocketOutbox, frames: [OutboundFrame]) throws(RealtimeError) {
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
        let channel = Channel(request: request, outbox: outbox, rules: rules)
        let clock = now()
        state.withLock { state in
            let isNew = Self.removeSubscriptions(id, from: &state) == nil
            if isNew { metrics.channels.add(1, ordering: .relaxed) }
            state.channels[id] = channel
            state.topics[request.topic, default: []].insert(id)
            for (table, rule) in rules {
                let bindings = request.bindings.filter { $0.tables.contains(table) }
                state.groups[table, default: [:]][rule, default: [:]][id] = Member(id: id, outbox: outbox, bindings: bindings)
                if rule.containsSubquery, state.dependencies[table]?[rule] == nil { state.dependencies[table, default: [:]][rule] = PolicyDependency.of(rule) }
            }
            var queued = frames
            if request.presenceEnabled, !frames.isEmpty {
                queued.append(OutboundFrame(joinRef: request.joinRef, ref: nil, topic: request.topic, event: "presence_state",
                                            payload: Self.presenceState(state.presences[request.topic] ?? [:])))
            }
            outbox.push(queued, now: clock)
        }
    }

    /// Removes a channel: its subscriptions, its topic membership and its presence (the others get the leave).
    package func unregister(_ id: ChannelID) {
        let clock = now()
        state.withLock { state in
            guard Self.removeSubscriptions(id, from: &state) != nil else { return }
            state.channels[id] = nil
            state.topics[id.topic]?.remove(id)
            if state.topics[id.topic]?.isEmpty == true { state.topics[id.topic] = nil }
            metrics.channels.subtract(1, ordering: .relaxed)
            if let presence = state.presences[id.topic]?.removeValue(forKey: id) {
                Self.sendPresenceDiff(joins: [], leaves: [presence], topic: id.topic, state: state, now: clock)
            }
        }
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

    /// Sends a broadcast to the topic's channels: not to `sender` unless `includeSelf`; relayed to the other
    /// instances when it originated here (`sender` or the REST endpoint) and a relay is configured.
    package func broadcast(topic: String, event: String, payload: JSONValue, sender: ChannelID?, includeSelf: Bool, relayed: Bool = false) async {
        deliverBroadcast(topic: topic, event: event, payload: payload, sender: sender, includeSelf: includeSelf)
        guard !relayed, let relay else { return }
        do {
            try await relay.publish(topic: topic, event: event, payload: payload)
        } catch {
            logger.error("realtime: relaying a broadcast failed", metadata: ["realtime.topic": "\(topic)", "error": "\(error)"])
        }
    }

    func deliverBroadcast(topic: String, event: String, payload: JSONValue, sender: ChannelID?, includeSelf: Bool) {
        let body = JSONValue.object([("type", .string("broadcast")), ("event", .string(event)), ("payload", payload)]).jsonText
        let frame = OutboundFrame(joinRef: nil, ref: nil, topic: topic, event: "broadcast", payload: body)
        let targets = state.withLock { state -> [(ChannelID, SocketOutbox)] in
            (state.topics[topic] ?? []).compactMap { id in
                if id == sender && !includeSelf { return nil }
                return state.channels[id].map { (id, $0.outbox) }
            }
        }
        var encoded: [ProtocolVersion: String] = [:]
        let clock = now()
        for (id, outbox) in targets {
            let text = encoded[outbox.version] ?? PhoenixCodec.encode(frame, version: outbox.version)
            encoded[outbox.version] = text
            if outbox.offer([text], now: clock) {
                metrics.eventsSent.add(1, ordering: .relaxed)
            } else {
                closeForResync(id, refused: 1)
            }
        }
    }

    // MARK: Presence

    /// Tracks (or re-tracks) a channel's presence: every channel of the topic gets the diff.
    package func track(_ id: ChannelID, meta: JSONValue) {
        let clock = now()
        state.withLock { state in
            guard let channel = state.channels[id] else { return }
            state.nextPresenceRef += 1
            let presence = Presence(key: channel.request.presenceKey, ref: String(state.nextPresenceRef), meta: meta)
            let previous = state.presences[id.topic, default: [:]].updateValue(presence, forKey: id)
            Self.sendPresenceDiff(joins: [presence], leaves: previous.map { [$0] } ?? [], topic: id.topic, state: state, now: clock)
        }
    }

    /// Untracks a channel's presence.
    package func untrack(_ id: ChannelID) {
        let clock = now()
        state.withLock { state in
            guard let presence = state.presences[id.topic]?.removeValue(forKey: id) else { return }
            Self.sendPresenceDiff(joins: [], leaves: [presence], topic: id.topic, state: state, now: clock)
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

    static func sendPresenceDiff(joins: [Presence], leaves: [Presence], topic: String, state: State, now: Double) {
        let payload = JSONValue.object([("joins", presenceEntries(joins)), ("leaves", presenceEntries(leaves))])
        for id in state.topics[topic] ?? [] {
            guard let channel = state.channels[id] else { continue }
            channel.outbox.push([OutboundFrame(joinRef: channel.request.joinRef, ref: nil, topic: topic, event: "presence_diff", payload: payload)], now: now)
        }
    }
}

extension RealtimeHub {
    /// How many policy groups subscribe to `table` (each is evaluated once per change).
    package func groupCount(table: String) -> Int {
        state.withLock { $0.groups[table]?.count ?? 0 }
    }
}
