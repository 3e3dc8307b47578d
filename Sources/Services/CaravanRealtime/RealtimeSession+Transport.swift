import Logging
import Synchronization

/// A connection that serves a socket's session from its own event loop, without a task per socket: it hands each
/// inbound frame to `RealtimeSession.receive`, says when the connection is gone (`transportEnded`), and writes what
/// the session gives it. An idle socket then costs its connection and its session, and no task stack.
package protocol SocketTransport: Sendable {
    /// Writes `frames` in order, flushed once; calls `completion(true)` once they reached the connection, or
    /// `completion(false)` when it failed. Called from any thread; it must not block.
    func write(_ frames: [SocketFrame], completion: @escaping @Sendable (Bool) -> Void)
    /// Ends the connection (the transport then calls `transportEnded`).
    func close()
    /// Reads from the connection again, after `receive` answered false.
    func resumeReading()
}

/// The frames a transport handed in, waiting to be handled one at a time, in order.
struct InboundQueue {
    var frames: [SocketFrame] = []
    /// The first frame not yet taken (frames before it are handled or being handled).
    var next = 0
    /// Whether a task is handling frames.
    var isHandling = false
    /// Whether `receive` asked the transport to stop reading.
    var isReadingPaused = false
    var hasEnded = false
    var transport: (any SocketTransport)?

    var waiting: Int { frames.count - next }
}

extension RealtimeSession {
    /// Inbound frames waiting past this many make the transport stop reading until half of them are handled.
    static let inboundBound = 64

    /// Serves the socket over `transport`, which then calls `receive` for each frame and `transportEnded` once. The
    /// frames are handled on a task that runs while there are some (none while the socket is idle); the outbox is
    /// written from its `whenReady` wake-ups; the service's ticker checks heartbeats, token expiry and stalls.
    package func start(on transport: any SocketTransport) {
        inbound.withLock { $0.transport = transport }
        terminate.withLock { $0 = { transport.close() } }
        service.started(self)
        outbox.whenReady { [self] in writeQueued(to: transport) }
    }

    /// Writes what the outbox holds, then again until it is empty (the outbox then wakes the next write).
    private func writeQueued(to transport: any SocketTransport) {
        guard let frames = outbox.take() else { return }
        transport.write(frames) { [self] written in
            guard written else {
                service.logger.debug("realtime: socket write failed")
                return drop()
            }
            outbox.written(frames.count, now: service.clock.monotonic())
            writeQueued(to: transport)
        }
    }

    /// Takes one inbound frame, in order. False asks the transport to stop reading until its `resumeReading`.
    package func receive(_ frame: SocketFrame) -> Bool {
        let (start, keepReading) = inbound.withLock { state -> (Bool, Bool) in
            guard !state.hasEnded else { return (false, true) }
            state.frames.append(frame)
            let start = !state.isHandling
            state.isHandling = true
            if state.waiting >= Self.inboundBound { state.isReadingPaused = true }
            return (start, !state.isReadingPaused)
        }
        if start { Task { await self.handleInbound() } }
        return keepReading
    }

    /// The connection is gone: the socket ends, and its channels are removed once no frame is being handled (a join
    /// in progress registers its channel first).
    package func transportEnded() {
        let finishNow = inbound.withLock { state -> Bool in
            guard !state.hasEnded else { return false }
            state.hasEnded = true
            state.frames = []
            state.next = 0
            state.transport = nil
            return !state.isHandling
        }
        outbox.close()
        service.ended(self)
        if finishNow { finish() }
    }

    /// Handles the waiting frames one by one until none waits; the task ends with them (a task keeps the stack
    /// slabs of its deepest call for its whole life: a join's would otherwise stay allocated for an idle socket).
    private func handleInbound() async {
        enum Step {
            case handle(SocketFrame, resume: (any SocketTransport)?)
            case idle
            case finish
        }
        while true {
            let step = inbound.withLock { state -> Step in
                if state.hasEnded {
                    state.isHandling = false
                    return .finish
                }
                guard state.next < state.frames.count else {
                    state.isHandling = false
                    state.frames = []
                    state.next = 0
                    return .idle
                }
                let frame = state.frames[state.next]
                state.next += 1
                if state.next >= 256 {
                    state.frames.removeFirst(state.next)
                    state.next = 0
                }
                var resume: (any SocketTransport)?
                if state.isReadingPaused, state.waiting <= Self.inboundBound / 2 {
                    state.isReadingPaused = false
                    resume = state.transport
                }
                return .handle(frame, resume: resume)
            }
            switch step {
            case .handle(let frame, let resume):
                resume?.resumeReading()
                await handle(frame)
                if outbox.isClosed { drop() }
            case .idle:
                return
            case .finish:
                return finish()
            }
        }
    }
}
