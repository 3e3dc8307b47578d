import Logging
import Synchronization

/// Tells change-log readers that write transactions committed entries: this instance's own listeners at once, in
/// process, and every other instance through one coalesced `NOTIFY caravan_changes` sent after the commits.
///
/// **Why not NOTIFY inside the write transaction.** PostgreSQL serializes the commits of every transaction that
/// queued a notification (a database-wide lock from the notify queue until the commit is done, WAL flush included),
/// so a `pg_notify` per write transaction makes concurrent writers commit one at a time. Measured here with
/// pgbench, 32 clients, insert + change-log row: 7,947 tps without, 3,448 tps with one `pg_notify` per transaction
/// (BENCHMARKS.md). The announcement therefore goes out after the commit, from its own statement, at most once per
/// `interval`: under load one NOTIFY announces many commits.
///
/// The announcement stays a hint, as before: readers always read the log after their cursor up to the settled mark
/// (`PostgresChangeLog`), so a coalesced or lost NOTIFY delays delivery, never loses or reorders it. One case is new:
/// an instance that dies between a commit and its NOTIFY leaves the other instances to find that commit at their
/// next poll (`ChangeListener.Configuration.pollInterval`) or with the next announcement of anyone's commit.
final class CommitAnnouncer: Sendable {
    /// The shortest time between two NOTIFYs of one instance: the most an idle-to-busy burst delays other
    /// instances' delivery, and the cap on this instance's notifications per second.
    let interval: Duration

    private struct State {
        /// The highest `seq` committed, and the highest announced to other instances.
        var committed: Int64 = 0
        var announced: Int64 = 0
        var listeners: [Int: AsyncStream<Int64>.Continuation] = [:]
        var nextListener = 0
        /// Wakes the running `run()` (nil while none runs).
        var sender: AsyncStream<Void>.Continuation?
    }

    private let state = Mutex(State())

    init(interval: Duration) {
        self.interval = interval
    }

    /// A write transaction committed change-log entries up to `seq`.
    func committed(_ seq: Int64) {
        let (listeners, sender) = state.withLock { state in
            state.committed = max(state.committed, seq)
            return (Array(state.listeners.values), state.sender)
        }
        for listener in listeners { listener.yield(seq) }
        sender?.yield()
    }

    /// The `seq`s this instance commits from now on (the last entry of each write transaction; a reader that
    /// falls behind gets the newest), until the stream is dropped.
    func localCommits() -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int in
            state.nextListener += 1
            state.listeners[state.nextListener] = continuation
            return state.nextListener
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends the announcements until cancelled: after a commit, `send` gets the highest `seq` committed since the
    /// last announcement, then the loop rests for `interval`. A failed send is logged and left to the readers' poll.
    func run(logger: Logger, send: (Int64) async throws -> Void) async {
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.sender = wake }
        defer { state.withLock { $0.sender = nil } }
        wake.yield()  // commits made while no run() was sending
        for await _ in wakeups {
            let seq = state.withLock { state -> Int64? in
                guard state.committed > state.announced else { return nil }
                state.announced = state.committed
                return state.committed
            }
            guard let seq else { continue }
            do {
                try await send(seq)
            } catch {
                if Task.isCancelled { return }
                logger.debug("announcing committed changes failed; other instances find them at their next poll",
                             metadata: ["change.seq": "\(seq)", "error": "\(String(reflecting: error))"])
            }
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
