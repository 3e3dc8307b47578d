package import CaravanCore
import Foundation

/// The latencies of one in-process question asked `samples` times (`caravan bench search`, `travel-search`).
package struct LatencyFigures: Sendable {
    package let name: String
    /// Each answer's time in microseconds, sorted.
    package let microseconds: [Double]
    /// Rows per answer, on average.
    package let meanRows: Double

    /// The `percent`-th percentile (50: the median), in microseconds.
    package func percentile(_ percent: Int) -> Double {
        microseconds[min(microseconds.count - 1, microseconds.count * percent / 100)]
    }

    /// Times `body(i)` for i in 0..<samples after `warmUp` untimed calls; `body` returns the rows it answered.
    package static func measure(_ name: String, samples: Int, warmUp: Int = 20, _ body: (Int) async throws -> Int) async rethrows -> LatencyFigures {
        for index in 0..<min(warmUp, samples) { _ = try await body(index) }
        var timings: [Double] = []
        var rows = 0
        for index in 0..<samples {
            let start = ContinuousClock.now
            rows += try await body(index)
            let elapsed = ContinuousClock.now - start
            timings.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return LatencyFigures(name: name, microseconds: timings.sorted(), meanRows: Double(rows) / Double(max(1, samples)))
    }
}

/// The rows of a set-returning RPC called in-process as `access` (in its own rolled-back transaction, as REST does).
package func rpcRowCount(_ function: RPCFunction, _ arguments: RPCArguments, store: any Store, access: AccessContext) async throws -> Int {
    try await store.readOnly(access) { transaction -> Int in
        guard case .table(_, let rows) = try await function.body(arguments, transaction) else { return 0 }
        return rows.count
    }
}
