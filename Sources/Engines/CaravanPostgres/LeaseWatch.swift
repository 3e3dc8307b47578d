import PostgresNIO
import Synchronization

/// Watches every request that waits for, or holds, a pooled connection, with one ticker for all of them instead of
/// a timer per request: a request whose connection does not come by its deadline gives up (`timedOut`), and one
/// whose connection closes under it fails after a grace period (an answer already on its way wins).
///
/// `PostgresStore.withConnection` races its lease against `wait(for:deadline:)`; the store runs `run()` beside its
/// connection pool.
final class LeaseWatch: Sendable {
    /// How often the ticker looks; deadlines are kept to within it.
    static let tick: Duration = .milliseconds(200)
    /// How long a request may wait for an answer after its connection closed.
    static let grace: Duration = .seconds(1)

    /// How a wait ended without an error.
    enum Outcome: Sendable { case timedOut }

    private struct Waiter {
        var deadline: ContinuousClock.Instant
        var lease: LeaseState
        var continuation: CheckedContinuation<Outcome, any Error>?
        var closedSince: ContinuousClock.Instant?
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        /// Waits cancelled before they were registered.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Returns `.timedOut` once `deadline` passes with no connection lent (the lease is abandoned then); throws
    /// `ConnectionClosed` when the lent connection has been closed for the grace period; throws
    /// `CancellationError` when the caller's task is cancelled (its request is done).
    func wait(for lease: LeaseState, deadline: ContinuousClock.Instant) async throws -> Outcome {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
                let cancelledAlready = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = Waiter(deadline: deadline, lease: lease, continuation: continuation)
                    return false
                }
                if cancelledAlready { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Outcome, any Error>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return waiter.continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// How many waits are registered now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Looks at every waiter each `tick` until cancelled.
    func run() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.tick)
            } catch {
                return
            }
            check(at: .now)
        }
    }

    /// Ends the waits that are due at `now`.
    func check(at now: ContinuousClock.Instant) {
        var due: [(CheckedContinuation<Outcome, any Error>, Result<Outcome, any Error>)] = []
        state.withLock { state in
            for (id, var waiter) in state.waiters {
                if now >= waiter.deadline, waiter.lease.abandon() {
                    state.waiters[id] = nil
                    if let continuation = waiter.continuation { due.append((continuation, .success(.timedOut))) }
                } else if waiter.lease.connection?.isClosed == true {
                    let since = waiter.closedSince ?? now
                    if now - since >= Self.grace {
                        state.waiters[id] = nil
                        if let continuation = waiter.continuation { due.append((continuation, .failure(ConnectionClosed()))) }
                    } else if waiter.closedSince == nil {
                        waiter.closedSince = since
                        state.waiters[id] = waiter
                    }
                }
            }
        }
        for (continuation, result) in due { continuation.resume(with: result) }
    }
}

/// Whether `withConnection` got its connection in time: exactly one of `take(_:attempt:)` and `abandon()` succeeds.
/// Holds the connection once taken, for the watch. A request that moves to another pool (`PrimaryHosts`) withdraws
/// its attempt: a connection lent for an earlier attempt is refused.
final class LeaseState: Sendable {
    private enum Phase { case waiting(attempt: Int), taken(PostgresConnection), abandoned }
    private let phase = Mutex(Phase.waiting(attempt: 0))

    /// A pool lent `connection` for `attempt`; true when the caller still waits for that attempt's connection.
    func take(_ connection: PostgresConnection, attempt: Int = 0) -> Bool {
        phase.withLock { phase in
            guard case .waiting(attempt) = phase else { return false }
            phase = .taken(connection)
            return true
        }
    }

    /// Ends `attempt` without a connection, for another; true when none was lent (the caller may try elsewhere).
    func withdraw(attempt: Int) -> Bool {
        phase.withLock { phase in
            guard case .waiting(attempt) = phase else { return false }
            phase = .waiting(attempt: attempt + 1)
            return true
        }
    }

    /// The caller stops waiting; true when no connection was lent before.
    func abandon() -> Bool {
        phase.withLock { phase in
            guard case .waiting = phase else { return false }
            phase = .abandoned
            return true
        }
    }

    /// The connection lent, once it is.
    var connection: PostgresConnection? {
        phase.withLock { phase in
            if case .taken(let connection) = phase { return connection }
            return nil
        }
    }
}
