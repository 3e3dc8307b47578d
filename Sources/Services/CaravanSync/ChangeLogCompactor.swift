package import CaravanCore
package import Logging
package import ServiceLifecycle

/// How long the change log and push verdicts are kept, and how often compaction runs.
package struct ChangeLogRetention: Sendable, Hashable {
    /// Entries committed longer ago than this are removed (default 7 days).
    package var window: Duration
    /// Time between compactions (default 1 hour).
    package var interval: Duration

    package init(window: Duration = .seconds(7 * 24 * 3600), interval: Duration = .seconds(3600)) {
        self.window = window
        self.interval = interval
    }

    /// Parses `30s`, `15m`, `12h`, `7d` (or bare seconds).
    package static func parseDuration(_ text: String) -> Duration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let factor = units[last] {
            number = number.dropLast()
            unit = factor
        }
        guard let value = Int64(number), value >= 0, value <= Int64.max / unit else { return nil }
        return .seconds(value * unit)
    }
}

/// Compacts the change log (and prunes push verdicts) every `retention.interval`: a service of the server's group,
/// stopped by graceful shutdown. Several instances may run it on one database; compaction is idempotent.
package struct ChangeLogCompactor<C: Clock<Duration>>: Service {
    package let store: any Store
    package let retention: ChangeLogRetention
    package let clock: C
    /// Microseconds since 1970, now.
    package let now: @Sendable () -> Int64
    package let logger: Logger

    package init(store: any Store, retention: ChangeLogRetention, clock: C, now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.store = store
        self.retention = retention
        self.clock = clock
        self.now = now
        self.logger = logger
    }

    /// One compaction: removes what was committed before now minus the window.
    package func compactOnce() async throws -> ChangeLogCompaction {
        let (seconds, attoseconds) = retention.window.components
        let windowMicroseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let cutoff = Timestamp.format(microseconds: now() - windowMicroseconds)
        let result = try await store.compactChangeLog(committedBefore: cutoff)
        if result.removedChanges > 0 || result.removedVerdicts > 0 {
            logger.info("change log compacted", metadata: [
                "changes.removed": "\(result.removedChanges)", "verdicts.removed": "\(result.removedVerdicts)",
                "changes.compacted_through": "\(result.compactedThrough)",
            ])
        }
        return result
    }

    package func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                _ = try await compactOnce()
            } catch let error as CaravanError where error.code == .storageUnavailable {
                logger.warning("change log compaction skipped: storage unavailable")
            } catch is CancellationError {
                return
            } catch {
                logger.error("change log compaction failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            do {
                try await gracefulShutdown(sleeping: retention.interval)
            } catch {
                return
            }
        }
    }

    private func gracefulShutdown(sleeping duration: Duration) async throws {
        try await cancelWhenGracefulShutdown {
            try await clock.sleep(for: duration)
        }
    }
}
