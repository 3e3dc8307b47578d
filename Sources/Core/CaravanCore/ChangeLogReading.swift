/// A page of the change log as the sync reader sees it (`Store.changeLogPage`).
public struct ChangeLogPage: Sendable {
    /// Entries of the asked tables after the cursor, oldest first; the last entry's transaction is always whole.
    public let changes: [Change]
    /// The highest `seq` of the log when the page was read. Every entry at or below it was committed by then, so a
    /// reader that got fewer than `limit` entries may move its cursor to `head`.
    public let head: Int64
    /// Whether the page reached `limit` entries (more may follow its last entry).
    public let reachedLimit: Bool

    public init(changes: [Change], head: Int64, reachedLimit: Bool) {
        self.changes = changes
        self.head = head
        self.reachedLimit = reachedLimit
    }
}

/// The sync bookkeeping of a deployment's change log.
public struct ChangeLogState: Sendable, Hashable {
    /// Random per deployment (`caravan_sync_state`); a copied or restored deployment has another, so cursors from
    /// another history are refused.
    public let epoch: String
    /// The highest `seq` compaction has removed: a cursor below it has missed entries.
    public let compactedThrough: Int64
    /// The highest `seq` of the log (0 when it has never held an entry).
    public let head: Int64

    public init(epoch: String, compactedThrough: Int64, head: Int64) {
        self.epoch = epoch
        self.compactedThrough = compactedThrough
        self.head = head
    }
}

/// What one compaction removed.
public struct ChangeLogCompaction: Sendable, Hashable {
    /// Change-log entries removed.
    public let removedChanges: Int
    /// Push verdicts removed.
    public let removedVerdicts: Int
    /// The log's low-water mark after the compaction.
    public let compactedThrough: Int64

    public init(removedChanges: Int, removedVerdicts: Int, compactedThrough: Int64) {
        self.removedChanges = removedChanges
        self.removedVerdicts = removedVerdicts
        self.compactedThrough = compactedThrough
    }
}

/// The change log as sync reads and compacts it. Both adapters implement it beside `Store`.
public protocol ChangeLogStore: Sendable {
    /// Entries of `tables` with `seq` after `seq` and at most the log's head, oldest first: at most `limit`, plus
    /// the rest of the last entry's transaction (a transaction is never split), read with the head in one snapshot.
    func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage

    /// The epoch, the compaction mark and the head.
    func changeLogState() async throws -> ChangeLogState

    /// Removes, in one transaction, every entry up to the highest `seq` committed before `cutoff` (a UTC timestamp
    /// as Caravan writes them), raises the compaction mark to it, and removes push verdicts older than `cutoff`.
    func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction
}

extension ChangeLogStore {
    /// Decodes the columns every adapter reads for an entry.
    public static func change(seq: Int64, table: String, primaryKey: String, op: String, record: String?, oldRecord: String?,
                              committedAt: String, actor: String, transaction: Int64?) throws(CaravanError) -> Change {
        guard let operation = ChangeOperation(rawValue: op) else {
            throw CaravanError(.internalFailure, "unknown change operation in the change log", internalDetail: op)
        }
        return Change(seq: seq, table: table, primaryKey: primaryKey, operation: operation, record: record, oldRecord: oldRecord,
                      committedAt: committedAt, actor: actor, transaction: transaction)
    }
}
