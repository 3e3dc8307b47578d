import Synchronization

/// Realtime counters (a metrics endpoint can read `snapshot`): open sockets and channels, events sent, and the
/// channels closed and events refused by the resync signal.
package final class RealtimeMetrics: Sendable {
    /// A point-in-time copy of the counters.
    package struct Snapshot: Sendable, Hashable {
        package let sockets: Int
        package let channels: Int
        package let eventsSent: Int
        package let resyncs: Int
        package let eventsDroppedByResync: Int
    }

    let sockets = Atomic<Int>(0)
    let channels = Atomic<Int>(0)
    let eventsSent = Atomic<Int>(0)
    let resyncs = Atomic<Int>(0)
    let eventsDroppedByResync = Atomic<Int>(0)

    package init() {}

    package var snapshot: Snapshot {
        Snapshot(sockets: sockets.load(ordering: .relaxed), channels: channels.load(ordering: .relaxed),
                 eventsSent: eventsSent.load(ordering: .relaxed), resyncs: resyncs.load(ordering: .relaxed),
                 eventsDroppedByResync: eventsDroppedByResync.load(ordering: .relaxed))
    }

    /// Takes a socket slot unless `limit` sockets are open.
    package func openSocket(limit: Int) -> Bool {
        while true {
            let current = sockets.load(ordering: .relaxed)
            guard current < limit else { return false }
            if sockets.compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged { return true }
        }
    }

    package func closeSocket() {
        sockets.subtract(1, ordering: .relaxed)
    }
}
