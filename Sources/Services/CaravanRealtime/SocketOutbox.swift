import Synchronization

/// One WebSocket frame to write: text (every Phoenix message) or binary (a vsn 2.0.0 user broadcast, kind 4).
package enum SocketFrame: Sendable, Hashable {
    case text(String)
    case binary([UInt8])
}

/// The bounded queue of encoded frames waiting to be written to one socket.
///
/// The hub offers a delivery's frames for one channel all at once (`offer`), so a delivery is queued whole or
/// refused whole; control frames (replies, the resync signal, `phx_close`) are queued past the bound (`push`).
/// The socket's writer takes everything queued and reports each write (`written`), which lets `isStalled` tell a
/// client that stopped reading. The writer is driven by its connection's event loop: it is called when frames arrive
/// while it is idle (`whenReady`), then takes them (`take`) until none is left. Thread-safe; one writer per outbox.
package final class SocketOutbox: Sendable {
    struct State {
        var frames: [SocketFrame] = []
        /// Queued plus taken but not yet written.
        var pending = 0
        var isClosed = false
        /// The event-driven writer's wake-up (`whenReady`), and whether it is writing (then it calls `take` again).
        var ready: (@Sendable () -> Void)?
        var writing = false
        /// When the writer last made progress, or when the queue last became non-empty.
        var progressAt: Double = 0
        /// Channels the hub closed (overflow); the socket's state machine forgets them.
        var closedTopics: [String] = []
    }

    package let version: ProtocolVersion
    let bound: Int
    private let state = Mutex(State())

    package init(version: ProtocolVersion, bound: Int) {
        self.version = version
        self.bound = bound
    }

    /// Frames queued or taken but not yet written (the admin console's view of a socket's backlog).
    package var pendingFrames: Int { state.withLock { $0.pending } }

    /// Queues `frames` unless that would pass the bound; false means nothing was queued.
    package func offer(_ frames: [String], now: Double) -> Bool {
        enqueue(frames.map(SocketFrame.text), now: now, bounded: true)
    }

    /// Queues `frames` (text or binary) unless that would pass the bound; false means nothing was queued.
    package func offer(frames: [SocketFrame], now: Double) -> Bool {
        enqueue(frames, now: now, bounded: true)
    }

    /// Queues `frames` whatever the bound (replies, control frames).
    package func push(_ frames: [String], now: Double) {
        _ = enqueue(frames.map(SocketFrame.text), now: now, bounded: false)
    }

    /// Encodes and queues frames whatever the bound.
    package func push(_ frames: [OutboundFrame], now: Double) {
        push(frames.map { PhoenixCodec.encode($0, version: version) }, now: now)
    }

    private func enqueue(_ frames: [SocketFrame], now: Double, bounded: Bool) -> Bool {
        guard !frames.isEmpty else { return true }
        enum Outcome {
            case refused
            case queued
            case wake(@Sendable () -> Void)
        }
        let outcome = state.withLock { state -> Outcome in
            if state.isClosed { return .queued }  // the socket is gone; its channels are being removed
            if bounded && state.pending + frames.count > bound { return .refused }
            if state.pending == 0 { state.progressAt = now }
            state.pending += frames.count
            state.frames.append(contentsOf: frames)
            guard let ready = state.ready, !state.writing else { return .queued }
            state.writing = true
            return .wake(ready)
        }
        switch outcome {
        case .refused: return false
        case .queued: return true
        case .wake(let ready):
            ready()
            return true
        }
    }

    /// Makes the writer event-driven: `ready` is called (on the caller's thread of `offer` or `push`, so it must only
    /// schedule the write) whenever frames arrive while the writer is idle, and at once if frames are queued. The
    /// writer then calls `take` until it returns nil.
    package func whenReady(_ ready: @escaping @Sendable () -> Void) {
        let wake = state.withLock { state -> Bool in
            state.ready = ready
            guard !state.frames.isEmpty, !state.writing, !state.isClosed else { return false }
            state.writing = true
            return true
        }
        if wake { ready() }
    }

    /// Everything queued; nil when nothing is (or the outbox is closed): the event-driven writer is idle from then
    /// until `whenReady`'s call.
    package func take() -> [SocketFrame]? {
        state.withLock { state in
            guard !state.frames.isEmpty, !state.isClosed else {
                state.writing = false
                return nil
            }
            defer { state.frames = [] }
            return state.frames
        }
    }

    /// The writer wrote `count` frames.
    package func written(_ count: Int, now: Double) {
        state.withLock { state in
            state.pending = max(0, state.pending - count)
            state.progressAt = now
        }
    }

    /// Frames queued or being written.
    package var pending: Int { state.withLock { $0.pending } }

    /// Whether frames have waited longer than `timeout` seconds without the writer making progress.
    package func isStalled(now: Double, timeout: Double) -> Bool {
        state.withLock { $0.pending > 0 && now - $0.progressAt > timeout }
    }

    /// Closes the outbox: later frames are dropped (the socket is gone) and the writer ends.
    package func close() {
        state.withLock { state in
            state.isClosed = true
            state.ready = nil  // it holds the writer: let both go
        }
    }

    package var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Records that the hub closed `topic`.
    func noteClosed(_ topic: String) {
        state.withLock { $0.closedTopics.append(topic) }
    }

    /// The topics the hub closed since the last call.
    package func takeClosedTopics() -> [String] {
        state.withLock { state in
            defer { state.closedTopics = [] }
            return state.closedTopics
        }
    }
}
