package import CaravanCore
package import Logging
package import ServiceLifecycle

/// Where the feed reads committed changes: the change log (both stores conform).
package protocol ChangeLogSource: Sendable {
    /// Log entries after `seq`, oldest first.
    func changes(after seq: Int64, limit: Int) async throws -> [Change]
    /// The `seq` of the newest entry (0 for an empty log).
    func latestChangeSeq() async throws -> Int64
}

/// Follows the change log in `seq` order and hands every committed change to the hub: the one source of
/// `postgres_changes` on both engines, so realtime order is the log's order.
///
/// It reads the log after its cursor whenever it is woken — by any change published on `wakeups` (on SQLite the
/// write pipeline publishes after each commit; on PostgreSQL the `ChangeListener` publishes what LISTEN/NOTIFY
/// reports, every instance's writes included) — and every `pollInterval` as a safety net. What a wake-up carries
/// is never trusted: the log is the truth. It reads until it has caught up (up to `maxRun` changes) and dispatches
/// that run at once, so a transaction committed before the read is never split across runs.
package final class ChangeFeed: Service {
    package struct Configuration: Sendable {
        package var pageSize = 1000
        /// The most changes one run holds (a larger transaction is split, each part whole to the subscribers it reaches).
        package var maxRun = 50_000
        package var pollInterval: Duration = .seconds(2)
        package var retryDelay: Duration = .milliseconds(200)

        package init() {}
    }

    let source: any ChangeLogSource
    let wakeups: ChangePublisher
    let hub: RealtimeHub
    let configuration: Configuration
    let logger: Logger

    package init(source: any ChangeLogSource, wakeups: ChangePublisher, hub: RealtimeHub, configuration: Configuration = .init(), logger: Logger) {
        self.source = source
        self.wakeups = wakeups
        self.hub = hub
        self.configuration = configuration
        self.logger = logger
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.follow() }
        } catch is CancellationError {
            // Cancellation and graceful shutdown are how the feed stops.
        }
    }

    private func follow() async throws {
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let published = wakeups.subscribe()
        let pollInterval = configuration.pollInterval
        var cursor = try await startingCursor()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in published { tick.yield() }
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: pollInterval)
                    tick.yield()
                }
            }
            for await _ in ticks {
                try Task.checkCancellation()
                cursor = await deliverPending(after: cursor)
            }
            group.cancelAll()
        }
    }

    private func startingCursor() async throws -> Int64 {
        while true {
            do {
                return try await source.latestChangeSeq()
            } catch {
                logger.error("realtime feed: reading the change log failed; retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: configuration.retryDelay)
            }
        }
    }

    /// Dispatches every change after `cursor`, run by run; returns the new cursor. A failed read is logged and
    /// retried on the next wake-up (the cursor stays, so nothing is skipped).
    func deliverPending(after cursor: Int64) async -> Int64 {
        var cursor = cursor
        while true {
            var run: [Change] = []
            do {
                while run.count < configuration.maxRun {
                    let page = try await source.changes(after: run.last?.seq ?? cursor, limit: configuration.pageSize)
                    run += page
                    if page.count < configuration.pageSize { break }
                }
            } catch {
                logger.error("realtime feed: reading the change log failed", metadata: ["error": "\(error)", "change.seq": "\(cursor)"])
                return cursor
            }
            guard let last = run.last else { return cursor }
            await hub.dispatch(run)
            cursor = last.seq
            if run.count < configuration.maxRun { return cursor }
        }
    }
}
