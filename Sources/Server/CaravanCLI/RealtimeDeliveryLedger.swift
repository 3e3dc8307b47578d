/// The counting of `caravan bench realtime`: which rows were written for whom, which socket received which row, and
/// the latencies of the receipts. Pure: the harness feeds it, a test feeds it a synthetic stream.
///
/// Expected is the number of (socket, row) pairs the owner policy lets through: every socket of a row's owner expects
/// that row. Received counts the distinct expected pairs that arrived; a pair arriving again is a duplicate, a pair
/// the policy should not have let through is unexpected, an expected pair that never arrived is missing.
package struct RealtimeDeliveryLedger: Sendable {
    /// The sockets of each user.
    private var socketsOfUser: [String: [Int]] = [:]
    /// The owner of each written row (by its id).
    private var ownerOfRow: [String: String] = [:]
    /// Every (socket, row) receipt, distinct.
    private var receipts: Set<Receipt> = []
    private var duplicateCount = 0
    /// Per distinct receipt, milliseconds from the row's commit and from the writer's send (nil: not known).
    private var commitLatencies: [Double] = []
    private var sendLatencies: [Double] = []

    private struct Receipt: Hashable, Sendable {
        let socket: Int
        let row: String
    }

    package init() {}

    /// Socket `socket` subscribes as `user`.
    package mutating func subscribed(socket: Int, user: String) {
        socketsOfUser[user, default: []].append(socket)
    }

    /// Row `row`, owned by `owner`, was written (its write was answered with success).
    package mutating func wrote(row: String, owner: String) {
        ownerOfRow[row] = owner
    }

    /// Socket `socket` received row `row`, with its latencies in milliseconds when known. Receipts may arrive before
    /// the write is recorded (the event can outrun the HTTP answer): they are judged in `report`.
    package mutating func received(socket: Int, row: String, commitToReceiptMs: Double?, sendToReceiptMs: Double?) {
        guard receipts.insert(Receipt(socket: socket, row: row)).inserted else {
            duplicateCount += 1
            return
        }
        if let commitToReceiptMs { commitLatencies.append(commitToReceiptMs) }
        if let sendToReceiptMs { sendLatencies.append(sendToReceiptMs) }
    }

    /// The rows written so far.
    package var rowsWritten: Int { ownerOfRow.count }

    /// The (socket, row) pairs the policy lets through for the rows written so far.
    package var expected: Int {
        ownerOfRow.values.reduce(0) { $0 + (socketsOfUser[$1]?.count ?? 0) }
    }

    /// The distinct receipts so far (expected or not): with `expected`, whether the run has drained.
    package var distinctReceipts: Int { receipts.count }

    package func report() -> RealtimeDeliveryReport {
        var received = 0, unexpected = 0
        for receipt in receipts {
            if let owner = ownerOfRow[receipt.row], socketsOfUser[owner]?.contains(receipt.socket) == true {
                received += 1
            } else {
                unexpected += 1
            }
        }
        let expected = self.expected
        return RealtimeDeliveryReport(rows: ownerOfRow.count, expected: expected, received: received, duplicates: duplicateCount,
                                      missing: expected - received, unexpected: unexpected,
                                      commitToReceiptMs: LatencySummary(commitLatencies), sendToReceiptMs: LatencySummary(sendLatencies))
    }
}

/// What a run's receipts add up to (`RealtimeDeliveryLedger.report()`).
package struct RealtimeDeliveryReport: Sendable, Equatable {
    package let rows: Int
    package let expected: Int
    package let received: Int
    package let duplicates: Int
    package let missing: Int
    /// Receipts of rows the policy should have kept from the socket (or rows whose write was not answered with success).
    package let unexpected: Int
    package let commitToReceiptMs: LatencySummary
    package let sendToReceiptMs: LatencySummary
}

/// p50, p99 and max of a set of latencies (nearest rank); nil each when there are none.
package struct LatencySummary: Sendable, Equatable {
    package let p50: Double?
    package let p99: Double?
    package let max: Double?

    package init(_ values: [Double]) {
        let sorted = values.sorted()
        p50 = Self.percentile(sorted, 50)
        p99 = Self.percentile(sorted, 99)
        max = sorted.last
    }

    /// The nearest-rank `percent`-th percentile of ascending `sorted`: the smallest value with at least `percent` %
    /// of the values at or below it.
    package static func percentile(_ sorted: [Double], _ percent: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}
