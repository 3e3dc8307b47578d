public import CoreMetrics

/// The write pipeline's figures, on the swift-metrics factory the server injects (Prometheus at `/metrics`):
/// `caravan_write_transactions_total{outcome}` (`committed`, `rolled_back`, `failed`),
/// `caravan_write_transaction_duration_seconds` (a histogram, from the call to the commit) and
/// `caravan_changelog_head_seq` (the highest `seq` a transaction of this process logged).
public struct WriteMetrics: Sendable {
    let committed: Counter
    let rolledBack: Counter
    let failed: Counter
    let duration: CoreMetrics.Timer
    let head: Gauge
    let clock = ContinuousClock()

    public init(factory: any MetricsFactory) {
        func transactions(_ outcome: String) -> Counter {
            Counter(label: "caravan_write_transactions_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        committed = transactions("committed")
        rolledBack = transactions("rolled_back")
        failed = transactions("failed")
        duration = CoreMetrics.Timer(label: "caravan_write_transaction_duration_seconds", dimensions: [], factory: factory)
        head = Gauge(label: "caravan_changelog_head_seq", dimensions: [], factory: factory)
    }

    /// Runs `body` (one transaction), counting it by outcome and timing it.
    func measure<T>(rollback: Bool, _ body: () async throws -> (T, [Change])) async throws -> (T, [Change]) {
        let start = clock.now
        do {
            let (result, changes) = try await body()
            duration.recordNanoseconds(Self.nanoseconds(clock.now - start))
            (rollback ? rolledBack : committed).increment()
            if !rollback, let last = changes.last { head.record(last.seq) }
            return (result, changes)
        } catch {
            duration.recordNanoseconds(Self.nanoseconds(clock.now - start))
            failed.increment()
            throw error
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
