package import CaravanCore
package import Logging
import NIOCore
import PostgresNIO
package import ServiceLifecycle
import Synchronization

/// Feeds an in-process `ChangePublisher` from the PostgreSQL change log, so that every instance on one database
/// publishes every committed change — its own and the other instances' — once, in `seq` order.
///
/// A long-running service: `run()` opens a dedicated connection (outside the store's pool), runs
/// `LISTEN caravan_changes`, then reads `caravan_changes` after the last `seq` it delivered and publishes what it
/// finds — first right after LISTEN (this fills any gap while it was disconnected), then whenever this instance
/// commits (told in process by the store) or a notification announces another instance's commits, and every
/// `pollInterval` as a safety net (an instance that died between a commit and its announcement). The notification
/// payload is never trusted: notifications coalesce and are lost while disconnected, and the log is the truth. When the connection drops it reconnects with
/// exponential backoff. `PostgresChangeLog` explains why reading after a cursor, up to the settled mark, misses
/// nothing; while entries are held back behind a gap the listener looks again every 10 ms (longer while nothing
/// settles).
///
/// Who publishes: build the `WritePipeline` with `publication: .byChangeLog` next to a listener, so that the
/// pipeline does not also publish its own commits (they come back through the listener, once).
///
/// ```swift
/// let publisher = ChangePublisher()
/// let pipeline = WritePipeline(store: store, publisher: publisher, publication: .byChangeLog)
/// let listener = ChangeListener(store: store, publisher: publisher, logger: logger)
/// // run `listener` (a Service) in the ServiceGroup next to the HTTP server
/// ```
package final class ChangeListener: Service {
    package struct Configuration: Sendable {
        /// Change-log entries read per query.
        package var pageSize = 500
        /// The first wait before reconnecting; it doubles on every failed attempt up to `maximumBackoff`.
        package var initialBackoff: Duration = .milliseconds(100)
        package var maximumBackoff: Duration = .seconds(5)
        /// How often the log is read without a notification.
        package var pollInterval: Duration = .seconds(2)
        /// The first pause before looking at the log again while entries are held back behind a gap; it doubles
        /// while nothing settles, up to `heldBackMaximumPause`.
        package var heldBackPause: Duration = .milliseconds(10)
        package var heldBackMaximumPause: Duration = .milliseconds(200)
        /// Where the listener reports how far it is (nil: nowhere).
        package var metrics: ChangeListenerMetrics?

        package init() {}
    }

    private struct State {
        var delivered: Int64?
        /// The highest `seq` a notification announced.
        var announced: Int64 = 0
        var isListening = false
        var connections = 0
    }

    private let store: PostgresStore
    private let publisher: ChangePublisher
    private let configuration: Configuration
    private let logger: Logger
    private let state: Mutex<State>

    /// - Parameters:
    ///   - store: A started store: the log is read through its pool, and its configuration says where to LISTEN.
    ///   - after: Publish the changes after this `seq`; nil (the default) starts at the end of the log when the
    ///     listener first connects, so only changes committed from then on are published.
    package init(store: PostgresStore, publisher: ChangePublisher, after seq: Int64? = nil, configuration: Configuration = .init(), logger: Logger) {
        self.store = store
        self.publisher = publisher
        self.configuration = configuration
        self.logger = logger
        self.state = Mutex(State(delivered: seq))
    }

    /// The `seq` of the last change published (or the starting point), nil until it is known.
    package var deliveredSeq: Int64? { state.withLock { $0.delivered } }

    /// Whether the listener is connected and listening now.
    package var isListening: Bool { state.withLock { $0.isListening } }

    /// Listens until cancelled or a graceful shutdown; never ends on a database failure (it reconnects).
    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.listenForever() }
        } catch is CancellationError {
            // Cancellation and graceful shutdown are how a listener stops.
        }
    }

    private func listenForever() async throws {
        var backoff = configuration.initialBackoff
        while true {
            do {
                try await listenOnce()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                logger.info("change listener lost its connection; reconnecting", metadata: [
                    "error": "\(String(reflecting: error))", "retry.after": "\(backoff)",
                ])
            }
            let wasListening = state.withLock { state in
                defer { state.isListening = false }
                return state.isListening
            }
            if wasListening { backoff = configuration.initialBackoff }
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, configuration.maximumBackoff)
        }
    }

    /// One connection's life: connect, LISTEN, catch up, then deliver on every wake-up until the connection fails.
    private func listenOnce() async throws {
        let id = state.withLock { state in
            state.connections += 1
            return state.connections
        }
        let connection = try await store.connectToPrimary(id: id, logger: logger)
        do {
            try await connection.listen(on: PostgresChangeLog.channel) { notifications in
                // Before the first read: a commit made while it runs still wakes the listener afterwards.
                let localCommits = store.localCommits()
                if deliveredSeq == nil {
                    let latest = try await store.latestChangeSeq()
                    state.withLock { $0.delivered = $0.delivered ?? latest }
                }
                state.withLock { $0.isListening = true }
                logger.debug("change listener listening", metadata: ["change.seq": "\(deliveredSeq ?? 0)"])
                try await deliverPending()
                try await deliverOnWakeups(notifications, localCommits)
            }
        } catch {
            // The connection may already be gone; closing it is cleanup, the original error is the news.
            do { try await connection.close() } catch let closeError {
                logger.debug("closing the listener connection failed", metadata: ["error": "\(closeError)"])
            }
            throw error
        }
        try await connection.close()
    }

    /// Reads and publishes the log after each local commit, notification or poll tick; returns (throws) when the
    /// connection ends.
    private func deliverOnWakeups(_ notifications: PostgresNotificationSequence, _ localCommits: AsyncStream<Int64>) async throws {
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pollInterval = configuration.pollInterval
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await notification in notifications {
                    if let seq = Int64(notification.payload) { self.state.withLock { $0.announced = max($0.announced, seq) } }
                    wake.yield()
                }
                throw CaravanError(.storageUnavailable, "The database is temporarily unavailable", internalDetail: "the LISTEN connection ended")
            }
            group.addTask {
                for await seq in localCommits {
                    self.state.withLock { $0.announced = max($0.announced, seq) }
                    wake.yield()
                }
                throw CancellationError()
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: pollInterval)
                    wake.yield()
                }
            }
            group.addTask {
                for await _ in wakeups {
                    try await self.deliverPending()
                    try await self.deliverHeldBack()
                }
                throw CancellationError()
            }
            // The first child to end (always with an error: a lost connection, a failed read, cancellation) ends all.
            try await group.next()
            group.cancelAll()
        }
    }

    /// While the log has visible entries beyond its settled mark (a concurrent transaction, or a rolled-back one,
    /// left a gap below them), looks again after a short pause, longer while nothing moves: they settle when
    /// the transactions that were running have ended, which no notification announces.
    private func deliverHeldBack() async throws {
        var pause = configuration.heldBackPause
        while store.changeLogIsHoldingBack {
            try await Task.sleep(for: pause)
            let before = deliveredSeq
            try await deliverPending()
            pause = deliveredSeq == before ? min(pause * 2, configuration.heldBackMaximumPause) : configuration.heldBackPause
        }
    }

    /// Publishes every entry after the cursor, page by page, and moves the cursor. Only one call runs at a time.
    private func deliverPending() async throws {
        while let after = deliveredSeq {
            let page = try await store.changes(after: after, limit: configuration.pageSize)
            guard let last = page.last else { return }
            publisher.publish(page)
            let announced = state.withLock { state in
                state.delivered = last.seq
                return state.announced
            }
            configuration.metrics?.report(delivered: last.seq, announced: announced)
            if page.count < configuration.pageSize { return }
        }
    }
}
