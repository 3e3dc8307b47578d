import Synchronization

/// A one-shot signal between concurrent test transactions: `open()` once, and every `wait()` — before or after —
/// returns. Waiting suspends the task and never blocks a thread: a transaction body runs on its connection's event
/// loop (PostgreSQL) or on SQLite's writer thread, and a blocked thread there would stall everything behind it.
package final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    package func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    package func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(waiter) }
                return state.isOpen
            }
            if isOpen { waiter.resume() }
        }
    }
}

/// Transactions that meet: each party's transaction body waits (suspended, never blocking its thread) until all
/// have arrived, or until its wait runs out — so writes that could interleave do, unless a lock makes one wait for
/// the other to commit.
package final class Rendezvous: Sendable {
    private let parties: Int
    private let arrived = Mutex(0)

    package init(parties: Int) { self.parties = parties }

    package func arrive(waitingAtMost limit: Duration) async {
        arrived.withLock { $0 += 1 }
        let deadline = ContinuousClock.now + limit
        while arrived.withLock({ $0 }) < parties, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }
}
