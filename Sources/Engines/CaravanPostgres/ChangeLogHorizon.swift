import Synchronization

/// How far the change log may be read (`PostgresChangeLog` gives the rules and their proof).
///
/// - `settled`: every entry up to it is committed or will never exist.
/// - `closed` (≤ `settled`): also no transaction has entries on both sides of it. Readers deliver up to `closed`,
///   so they never miss an entry nor split a transaction.
///
/// One per store, fed with what observations saw. Both marks only move forward, and observations may arrive in any
/// order (concurrent readers): each one only settles what was already final at its snapshot.
final class ChangeLogHorizon: Sendable {
    /// What one observation saw.
    struct Observation: Sendable {
        /// The highest visible `seq` (0 for an empty log).
        var highest: Int64
        /// Visible entries above the closed mark the observation was asked for, ascending (a bounded prefix).
        var visible: [Entry]
        /// Whether `visible` stopped at its bound (more visible entries follow it).
        var isTruncated: Bool
        /// The ids of the transactions running when the observation ended (read after the entries).
        var running: Set<Int64>
    }

    /// One visible entry: its `seq`, and the `seq` of its transaction's first entry.
    struct Entry: Sendable, Equatable {
        var seq: Int64
        var transaction: Int64
    }

    /// Entries up to `seq` settle once none of `waitFor` runs, as seen by an observation that began after this
    /// one ended (`ended` orders them).
    private struct Pending {
        var seq: Int64
        var waitFor: Set<Int64>
        var ended: Int
    }

    private struct State {
        var settled: Int64 = 0
        var closed: Int64 = 0
        var pending: [Pending] = []
        /// Observations ended so far.
        var ended = 0
    }

    private let state = Mutex(State())

    /// Marks the start of an observation: pass the result to `observe(_:began:)`.
    func begin() -> Int { state.withLock { $0.ended } }

    /// The mark readers deliver up to.
    var closed: Int64 { state.withLock { $0.closed } }

    /// Whether entries beyond the closed mark were visible at the last observation (a reader should look again
    /// soon: they settle when transactions end, which nothing announces).
    var isHoldingBack: Bool { state.withLock { !$0.pending.isEmpty || $0.closed < $0.settled } }

    /// Applies one observation. Returns the settled mark after it, and the closed mark it allows when the
    /// observation saw every entry above the old closed mark (nil: too many to see; the caller closes the
    /// settled mark against the log itself and calls `close(to:)`).
    func observe(_ observation: Observation, began: Int) -> (settled: Int64, closed: Int64?) {
        state.withLock { state in
            var settled = state.settled
            // The transactions that could hold a gap below an earlier observation's highest entry have all ended
            // (only observations that ended before this one began count: ids are compared, not ordered).
            for pending in state.pending where pending.ended <= began && pending.waitFor.isDisjoint(with: observation.running) {
                settled = max(settled, pending.seq)
            }
            // Nothing was running: every gap below the highest visible entry is final (the entries of a transaction
            // that ended after the snapshot are read by the reader's later statement).
            if observation.running.isEmpty {
                settled = max(settled, observation.highest)
            }
            // Committed entries right after the mark.
            for entry in observation.visible where entry.seq > settled {
                guard entry.seq == settled + 1 else { break }
                settled = entry.seq
            }
            state.ended += 1
            state.pending.removeAll { $0.seq <= settled }
            // What is visible beyond the mark settles once every transaction running now has ended.
            if observation.highest > settled, observation.highest > (state.pending.last?.seq ?? 0) {
                state.pending.append(Pending(seq: observation.highest, waitFor: observation.running, ended: state.ended))
            }
            state.settled = settled
            guard !observation.isTruncated || (observation.visible.last?.seq ?? 0) >= observation.highest else { return (settled, nil) }
            let closed = Self.close(settled, over: observation.visible)
            state.closed = max(state.closed, closed)
            return (settled, state.closed)
        }
    }

    /// Moves the closed mark to `mark` (a mark the caller found closed against the log); returns the closed mark.
    @discardableResult
    func close(to mark: Int64) -> Int64 {
        state.withLock { state in
            state.closed = max(state.closed, min(mark, state.settled))
            return state.closed
        }
    }

    /// `mark` lowered below the first entry of every transaction that has entries on both sides of it. Every
    /// transaction with an entry above the previous closed mark has all its entries in `entries` (the caller
    /// passes every visible entry above it). Transactions with entries at or below the previous closed mark lie
    /// wholly below it, so the result never falls under it.
    static func close(_ mark: Int64, over entries: [Entry]) -> Int64 {
        var mark = mark
        while let first = entries.lazy.filter({ $0.seq > mark && $0.transaction <= mark }).map(\.transaction).min() {
            mark = first - 1
        }
        return mark
    }
}
