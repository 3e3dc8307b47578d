import Synchronization

/// Fixed-window request counters per key (action + client IP, or action + identifier). In memory: each instance
/// counts its own requests.
final class RateLimiter: Sendable {
    private struct Window {
        var start: Int64
        var count: Int
    }

    private let windows = Mutex<(counters: [String: Window], lastSweep: Int64)>(([:], 0))
    let windowSeconds: Int64

    init(windowSeconds: Int64) {
        self.windowSeconds = windowSeconds
    }

    /// Whether a request is let through, and when refused, how long until its window ends.
    enum Admission: Equatable {
        case admitted
        /// Seconds until the window that refused the request ends (at least 1): the `Retry-After`.
        case refused(retryAfter: Int64)
    }

    /// Counts one request under `key`; refused when the window already holds `limit`.
    func admit(_ key: String, limit: Int, now: Int64) -> Admission {
        windows.withLock { state in
            // Expired windows are dropped at most once per window length, so a flood of new keys costs one sweep.
            if now - state.lastSweep >= windowSeconds {
                state.counters = state.counters.filter { now - $0.value.start < windowSeconds }
                state.lastSweep = now
            }
            var window = state.counters[key] ?? Window(start: now, count: 0)
            if now - window.start >= windowSeconds { window = Window(start: now, count: 0) }
            guard window.count < limit else { return .refused(retryAfter: max(1, window.start + windowSeconds - now)) }
            window.count += 1
            state.counters[key] = window
            return .admitted
        }
    }
}
