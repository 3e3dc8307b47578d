package import CoreMetrics
import Synchronization

/// A store's connection pool figures: `caravan_db_connections_in_use`, `caravan_db_connections_waiting` (operations
/// waiting for a connection) and `caravan_db_acquire_duration_seconds` (a histogram of the wait), each with label
/// `engine` (`sqlite`: GRDB's reader and writer connections; `postgres`: the postgres-nio pool).
package struct DatabasePoolMetrics: Sendable {
    let inUse: Meter
    let waiting: Meter
    let acquire: CoreMetrics.Timer

    package init(engine: SQLDialect, factory: any MetricsFactory) {
        let dimensions = [("engine", engine == .sqlite ? "sqlite" : "postgres")]
        inUse = Meter(label: "caravan_db_connections_in_use", dimensions: dimensions, factory: factory)
        waiting = Meter(label: "caravan_db_connections_waiting", dimensions: dimensions, factory: factory)
        acquire = CoreMetrics.Timer(label: "caravan_db_acquire_duration_seconds", dimensions: dimensions, factory: factory)
    }
}

/// One operation's wait for a connection: counted as waiting from `init` until `leased()` or `end()`, once.
package final class PoolWait: Sendable {
    private let metrics: DatabasePoolMetrics?
    private let start = ContinuousClock.now
    private let waiting = Mutex(true)

    package init(_ metrics: DatabasePoolMetrics?) {
        self.metrics = metrics
        metrics?.waiting.increment()
    }

    /// The connection arrived: no longer waiting, now in use (until `released()`), and the wait is recorded.
    package func leased() {
        guard let metrics, end() else { return }
        let elapsed = ContinuousClock.now - start
        metrics.acquire.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        metrics.inUse.increment()
    }

    package func released() {
        metrics?.inUse.decrement()
    }

    /// Stops counting the operation as waiting; false when it already was not.
    @discardableResult
    package func end() -> Bool {
        let wasWaiting = waiting.withLock { state in
            defer { state = false }
            return state
        }
        if wasWaiting { metrics?.waiting.decrement() }
        return wasWaiting
    }
}
