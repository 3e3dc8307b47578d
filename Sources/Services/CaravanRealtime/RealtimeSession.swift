package import CaravanCore
package import Logging
import Synchronization

/// Verifies access tokens (the server adapts CaravanAuth's `TokenVerifier`).
package protocol TokenAuthenticator: Sendable {
    func identity(for token: String) async throws -> Identity
}

/// The clocks realtime reads: monotonic seconds (heartbeats, stalls) and Unix seconds (token expiry).
package struct RealtimeClock: Sendable {
    package let monotonic: @Sendable () -> Double
    package let epochSeconds: @Sendable () -> Int64

    package init(monotonic: @escaping @Sendable () -> Double, epochSeconds: @escaping @Sendable () -> Int64) {
        self.monotonic = monotonic
        self.epochSeconds = epochSeconds
    }
}

/// Everything sockets share: the hub, the catalog, the limits, token verification and the clocks.
package final class RealtimeService: Sendable {
    package let hub: RealtimeHub
    let catalog: Catalog
    package let limits: RealtimeLimits
    let authenticator: any TokenAuthenticator
    let clock: RealtimeClock
    let logger: Logger
    let nextSocket = Atomic<Int>(0)
    let nextKey = Atomic<Int>(0)
    /// How often sockets check heartbeats, token expiry and stalls.
    let tickInterval: Duration
    /// The running sockets, which one ticker checks every `tickInterval` (a task per socket would cost each idle
    /// socket a task and a wakeup a second); `ticking` while the ticker runs.
    let running = Mutex<(sessions: [Int: RealtimeSession], ticking: Bool)>(([:], false))

    package init(hub: RealtimeHub, catalog: Catalog, limits: RealtimeLimits, authenticator: any TokenAuthenticator, clock: RealtimeClock,
                tickInterval: Duration = .seconds(1), logger: Logger) {
        self.hub = hub
        self.catalog = catalog
        self.limits = limits
        self.authenticator = authenticator
        self.clock = clock
        self.tickInterval = tickInterval
        self.logger = logger
    }

    /// A session for a socket whose apikey verified, or nil when `maxSockets` are open (refuse the upgrade).
    package func openSession(version: ProtocolVersion, apikey: String) -> RealtimeSession? {
        guard hub.metrics.openSocket(limit: limits.maxSockets) else { return nil }
        let id = nextSocket.wrappingAdd(1, ordering: .relaxed).newValue
        // Presence keys for channels whose client sent none: unique in this process.
        let makeKey: @Sendable () -> String = { [self] in "presence-\(self.nextKey.wrappingAdd(1, ordering: .relaxed).newValue)" }
        let machine = SocketStateMachine(version: version, catalog: catalog, limits: limits, now: clock.monotonic(), makeKey: makeKey)
        return RealtimeSession(id: id, service: self, machine: machine, apikey: apikey)
    }

    /// Adds a running socket to the ticker's, starting the ticker when none runs.
    func started(_ session: RealtimeSession) {
        let start = running.withLock { running -> Bool in
            running.sessions[session.id] = session
            defer { running.ticking = true }
            return !running.ticking
        }
        // The ticker ends by itself once no socket runs (`tickSessions`); it holds the service until then.
        if start { Task { await self.tickSessions() } }
    }

    /// Removes a socket that ended from the ticker's.
    func ended(_ session: RealtimeSession) {
        running.withLock { _ = $0.sessions.removeValue(forKey: session.id) }
    }

    /// Closes every open socket (graceful shutdown): the clients see their connection end and reconnect elsewhere.
    package func closeAllSockets() {
        let sessions = running.withLock { Array($0.sessions.values) }
        for session in sessions { session.drop() }
    }

    /// Ticks every running socket each `tickInterval`, in turn; returns once none runs.
    private func tickSessions() async {
        while true {
            do {
                try await Task.sleep(for: tickInterval)
            } catch {
                running.withLock { $0.ticking = false }
                return
            }
            let sessions = running.withLock { running -> [RealtimeSession] in
                if running.sessions.isEmpty { running.ticking = false }
                return Array(running.sessions.values)
            }
            guard !sessions.isEmpty else { return }
            for session in sessions { await session.tick() }
        }
    }

    /// Verifies a token, as the state machine wants the outcome.
    func verify(_ token: String) async -> Result<Identity, RealtimeError> {
        do {
            return .success(try await authenticator.identity(for: token))
        } catch let error as CaravanError where error.code == .expiredToken {
            return .failure(RealtimeError(.invalidToken, "Token has expired"))
        } catch {
            return .failure(RealtimeError(.invalidToken, "Invalid token"))
        }
    }
}

/// One socket: runs the state machine on inbound frames and ticks, and writes its outbox, over a transport
/// (`RealtimeSession+Transport.swift`).
package final class RealtimeSession: Sendable {
    package let id: Int
    let service: RealtimeService
    let machine: Mutex<SocketStateMachine>
    package let outbox: SocketOutbox
    let apikey: String
    /// Ends the transport (`run`'s `terminate`, or the transport's `close`), once the socket runs.
    let terminate = Mutex<(@Sendable () -> Void)?>(nil)
    /// The frames a transport handed in (`receive`) and their handling (`RealtimeSession+Transport.swift`).
    let inbound = Mutex(InboundQueue())

    init(id: Int, service: RealtimeService, machine: SocketStateMachine, apikey: String) {
        self.id = id
        self.service = service
        self.machine = Mutex(machine)
        self.outbox = SocketOutbox(version: machine.version, bound: service.limits.maxPendingFrames)
        self.apikey = apikey
    }

    /// Ends the socket: its outbox closes and its transport ends.
    func drop() {
        outbox.close()
        terminate.withLock { $0 }?()
    }

    /// Removes every channel and frees the socket slot.
    package func finish() {
        let topics = machine.withLock { $0.joinedTopics }
        for topic in topics { service.hub.unregister(ChannelID(socket: id, topic: topic)) }
        service.hub.metrics.closeSocket()
    }

    /// The ticker's check (`RealtimeService.tickSessions`): a stalled writer, a heartbeat timeout or an expired
    /// token.
    func tick() async {
        guard !outbox.isClosed else { return }
        if outbox.isStalled(now: service.clock.monotonic(), timeout: service.limits.stallTimeout.seconds) {
            service.logger.info("realtime: dropping a socket that stopped reading", metadata: ["realtime.pending": "\(outbox.pending)"])
            return drop()
        }
        let actions = machine.withLock { machine in
            for topic in outbox.takeClosedTopics() { machine.serverClosed(topic) }
            return machine.tick(now: service.clock.monotonic(), epochSeconds: service.clock.epochSeconds())
        }
        if !actions.isEmpty, await perform(actions) == false { drop() }
    }

    /// Handles one inbound frame: text, or a binary user-broadcast push (vsn 2.0.0); other binary frames are
    /// ignored, as wire-protocol §4.1 allows.
    package func handle(_ frame: SocketFrame) async {
        switch frame {
        case .text(let text):
            await handle(text)
        case .binary(let bytes):
            let push: UserBroadcastPush
            do {
                push = try UserBroadcastPush(bytes: bytes)
            } catch {
                service.logger.debug("realtime: ignoring a binary frame", metadata: ["error": "\(error)"])
                return
            }
            if let text = push.textMessage { return await handle(text) }
            guard case .bytes(let raw) = push.payload else { return }
            let now = service.clock.monotonic()
            let actions = machine.withLock { $0.receive(push.message, rawPayload: raw, now: now) }
            if await perform(actions) == false { outbox.close() }
        }
    }

    /// Handles one inbound text frame.
    package func handle(_ text: String) async {
        let message: PhoenixMessage
        do {
            message = try PhoenixCodec.decode(text, version: outbox.version)
        } catch {
            service.logger.debug("realtime: ignoring a malformed frame", metadata: ["error": "\(error)"])
            return
        }
        let now = service.clock.monotonic()
        let actions: [SocketAction]
        switch message.event {
        case "phx_join":
            let identity = await service.verify(SocketStateMachine.accessToken(of: message) ?? apikey)
            actions = machine.withLock { machine in
                for topic in outbox.takeClosedTopics() { machine.serverClosed(topic) }
                return machine.join(message, identity: identity, now: now)
            }
        case "access_token":
            var identity = Result<Identity, RealtimeError>.failure(RealtimeError(.invalidToken, "Invalid token"))
            if let token = SocketStateMachine.accessToken(of: message) { identity = await service.verify(token) }
            actions = machine.withLock { $0.refresh(message, identity: identity, now: now) }
        default:
            actions = machine.withLock { $0.receive(message, now: now) }
        }
        if await perform(actions) == false { outbox.close() }
    }

    /// Refuses a private channel its policies do not let read: a join gets the error reply Supabase Realtime sends
    /// (the SDKs surface it and do not retry); a channel re-registered for a new token is closed with a `system`
    /// error and `phx_close`, as when a token is refused.
    private func refuse(_ request: ChannelRequest, frames: [OutboundFrame]) {
        let reason = ChannelRefusal.read(request.channelName)
        machine.withLock { $0.serverClosed(request.topic) }
        service.hub.unregister(ChannelID(socket: id, topic: request.topic))
        let now = service.clock.monotonic()
        if let join = frames.first {
            outbox.push([OutboundFrame(joinRef: join.joinRef, ref: join.ref, topic: join.topic, event: "phx_reply",
                                       payload: .object([("status", .string("error")), ("response", .object([("reason", .string(reason))]))]))], now: now)
        } else {
            outbox.push([
                OutboundFrame(joinRef: request.joinRef, ref: nil, topic: request.topic, event: "system",
                              payload: SystemPayload.error(reason, channel: request.channelName)),
                OutboundFrame(joinRef: request.joinRef, ref: request.joinRef, topic: request.topic, event: "phx_close", payload: .object([])),
            ], now: now)
        }
    }

    /// The error reply to a broadcast or a track the channel's policies refuse.
    static func writeRefusal(_ ack: OutboundFrame) -> OutboundFrame {
        OutboundFrame(joinRef: ack.joinRef, ref: ack.ref, topic: ack.topic, event: "phx_reply",
                      payload: .object([("status", .string("error")),
                                        ("response", .object([("reason", .string(ChannelRefusal.write(RealtimeTopic.channelName(ack.topic))))]))]))
    }

    /// Performs actions in order; false when the socket must close.
    func perform(_ actions: [SocketAction]) async -> Bool {
        let hub = service.hub
        for action in actions {
            switch action {
            case .send(let frame):
                outbox.push([frame], now: service.clock.monotonic())
            case .register(let request, let frames):
                let permissions = await hub.permissions(for: request)
                guard permissions.mayJoin else {
                    refuse(request, frames: frames)
                    continue
                }
                do {
                    try hub.register(socket: id, request: request, outbox: outbox, frames: frames, permissions: permissions)
                } catch {
                    machine.withLock { $0.serverClosed(request.topic) }
                    let reply = frames.first.map { frame in
                        OutboundFrame(joinRef: frame.joinRef, ref: frame.ref, topic: frame.topic, event: "phx_reply",
                                      payload: .object([("status", .string("error")), ("response", .object([("reason", .string(error.message))]))]))
                    }
                    outbox.push(reply.map { [$0] } ?? [], now: service.clock.monotonic())
                }
            case .unregister(let topic):
                hub.unregister(ChannelID(socket: id, topic: topic))
            case .broadcast(let message, let includeSelf, let ack):
                let sent = await hub.broadcast(message, sender: ChannelID(socket: id, topic: message.topic), includeSelf: includeSelf)
                if let ack {
                    outbox.push([sent ? ack : Self.writeRefusal(ack)], now: service.clock.monotonic())
                }
            case .track(let topic, let meta, let ack):
                let tracked = hub.track(ChannelID(socket: id, topic: topic), meta: meta)
                if let ack {
                    outbox.push([tracked ? ack : Self.writeRefusal(ack)], now: service.clock.monotonic())
                }
            case .untrack(let topic):
                hub.untrack(ChannelID(socket: id, topic: topic))
            case .close(let reason):
                service.logger.debug("realtime: closing a socket", metadata: ["reason": "\(reason)"])
                return false
            }
        }
        return true
    }
}
