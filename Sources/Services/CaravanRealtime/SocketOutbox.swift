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
/// The socket's writer takes everything queued (`next`) and reports each write (`written`), which lets `isStalled`
/// tell a client that stopped reading. Thread-safe; `next` has one caller, the socket's writer.
package final class SocketOutbox: Sendable {
    struct State {
        var frames: [SocketFrame] = []
        /// Queued plus taken but not yet written.
        var pending = 0
        var isClosed = false
        var waiter: CheckedContinuation<[SocketFrame]?, Never>?
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
            case handed(CheckedContinuation<[SocketFrame]?, Never>, [SocketFrame])
        }
        let outcome = state.withLock { state -> Outcome in
            if state.isClosed { return .queued }  // the socket is gone; its channels are being removed
            if bounded && state.pending + frames.count > bound { return .refused }
            if state.pending == 0 { state.progressAt = now }
            state.pending += frames.count
            state.frames.append(contentsOf: frames)
            guard let waiter = state.waiter else { return .queued }
            state.waiter = nil
            defer { state.frames = [] }
            return .handed(waiter, state.frames)
        }
        switch outcome {
        case .refused: return false
        case .queued: return true
        case .handed(let waiter, let batch):
            waiter.resume(returning: batch)
            return true
        }
    }

    /// Everything queued, waiting for frames when there are none; nil once the outbox is closed and drained.
    package func next() async -> [SocketFrame]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[SocketFrame]?, Never>) in
            let ready: [SocketFrame]?? = state.withLock { state in
                if !state.frames.isEmpty {
                    defer { state.frames = [] }
                    return .some(state.frames)
                }
                if state.isClosed { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
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
        let waiter = state.withLock { state -> CheckedContinuation<[SocketFrame]?, Never>? in
            state.isClosed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
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
