package import CaravanCore

/// The realtime server's limits, all configurable (`realtime_*` keys of `ServerConfiguration`).
package struct RealtimeLimits: Sendable, Hashable {
    /// Open sockets per instance; an upgrade past it is refused.
    package var maxSockets = 10_000
    /// Joined channels per socket; a join past it is a join error.
    package var maxChannelsPerSocket = 100
    /// Joins per second per socket (a token bucket of that size).
    package var joinsPerSecond = 20
    /// Client messages (broadcast, presence, access_token) per second per socket; past it a message is refused with
    /// a `system` error.
    package var eventsPerSecond = 100
    /// Frames waiting to be written to one socket; a delivery past it closes the channel with the resync signal.
    package var maxPendingFrames = 10_000
    /// A socket silent for longer than this is dropped (clients heartbeat every 25 s).
    package var heartbeatTimeout: Duration = .seconds(60)
    /// A socket whose pending frames make no progress for this long (a client that stopped reading) is dropped.
    package var stallTimeout: Duration = .seconds(10)
    /// Records larger than this (bytes of JSON) are sent with only their primary key.
    package var recordSizeLimit = 1 << 20
    /// How many conditions a binding's filter may have (the server's `query_max_filters`); every grammar in it is
    /// bounded as a REST filter's is.
    package var filters = QueryLimits()

    package init() {}
}

/// A token bucket: `capacity` tokens, refilled at `capacity` per second.
struct RateBucket: Sendable, Hashable {
    let capacity: Double
    var tokens: Double
    var updatedAt: Double

    init(perSecond: Int, now: Double) {
        capacity = Double(max(1, perSecond))
        tokens = capacity
        updatedAt = now
    }

    /// Takes a token when one is left.
    mutating func take(now: Double) -> Bool {
        tokens = min(capacity, tokens + max(0, now - updatedAt) * capacity)
        updatedAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
