/// The live changes of the server transactions still arriving on one realtime connection, and those that are whole.
///
/// Each `postgres_changes` event names its server transaction (`tx`) and how many events of it this socket receives
/// (`tx_events`, counted after the subscriber's policy and filters). A transaction is ready when all its events have
/// come; ready transactions are handed out in `tx` order, a later one waiting while an earlier one is still open, so a
/// row changed by two transactions ends in the later state. An event without the marks (an older server) is a
/// transaction of its own.
struct LiveTransactions {
    private struct Open {
        let expected: Int
        var received = 0
        var changes: [LiveChange] = []
        /// Ticks of the bounded wait this transaction has been open through.
        var ticks = 0
    }

    private var open: [Int64: Open] = [:]

    var isEmpty: Bool { open.isEmpty }

    /// Adds an event of transaction `transaction`, of which `events` come in all; returns the transactions now ready,
    /// oldest first, each with its changes in arrival order. An event a pull already reflected (`pulled`) is counted
    /// but not kept; one of no open transaction (its transaction was pulled whole) is ignored.
    mutating func add(_ change: LiveChange, transaction: Int64, events: Int, pulled: Bool) -> [[LiveChange]] {
        guard !pulled || open[transaction] != nil else { return [] }
        var entry = open[transaction] ?? Open(expected: max(events, 1))
        entry.received += 1
        if !pulled { entry.changes.append(change) }
        open[transaction] = entry
        var ready: [[LiveChange]] = []
        while let first = open.keys.min(), let entry = open[first], entry.received >= entry.expected {
            ready.append(entry.changes)
            open[first] = nil
        }
        return ready
    }

    /// One tick of the bounded wait: true when a transaction has stayed open through two ticks — an event was lost
    /// (a refused delivery, a dropped frame), so the caller pulls instead and `reset`s.
    mutating func tick() -> Bool {
        var stale = false
        for key in open.keys {
            open[key]?.ticks += 1
            if (open[key]?.ticks ?? 0) >= 2 { stale = true }
        }
        return stale
    }

    /// Forgets the changes at or below `seq` (a pull reflected them); the transactions stay open for their other events.
    mutating func drop(through seq: Int64) {
        for key in open.keys { open[key]?.changes.removeAll { $0.seq <= seq } }
    }

    /// Forgets every open transaction (a pull brought what they held; their late events are at or below its `seq`).
    mutating func reset() { open = [:] }
}
