import Synchronization

/// Fixed-window request counters per key (action + client IP, or action + identifier). In memory: each instance
/// counts its own requests.
final class RateLimiter: Sendable {
    private struct Window {
        var start: Int64
        var count: Int
    }

    private let windows = Mutex<[String: Window]>([:])
    let windowSeconds: Int64

    init(windowSeconds: Int64) {
        self.windowSeconds = windowSeconds
    }

    /// Counts one request under `key`; false when the window already holds `limit`.
    func allow(_ key: String, limit: Int, now: Int64) -> Bool {
        windows.withLock { windows in
            if windows.count > 100_000 {
                windows = windows.filter { now - $0.value.start < windowSeconds }
            }
            var window = windows[key] ?? Window(start: now, count: 0)
            if now - window.start >= windowSeconds { window = Window(start: now, count: 0) }
            guard window.count < limit else { return false }
            window.count += 1
            windows[key] = window
            return true
        }
    }
}
