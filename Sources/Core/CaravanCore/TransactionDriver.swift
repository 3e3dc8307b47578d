/// One change-log entry to append, before the engine assigns its sequence number and commit time.
package struct ChangeEntry: Sendable, Hashable {
    public let table: String
    public let primaryKey: String
    public let operation: ChangeOperation
    public let record: String?
    public let oldRecord: String?
    public let actor: String
    /// The `seq` of the transaction's first entry; nil for that first entry itself (its own `seq` is the label), and
    /// for every entry when the engine labels them (`TransactionDriver.labelsTransactions`).
    public let transaction: Int64?
}

/// Where an appended change-log entry landed. An engine may send the append and go on without waiting for its
/// answer (PostgreSQL: the answer is read with the next one waited for, at the latest COMMIT's — a round trip less
/// per write); `position()` then waits for it, and throws the append's failure.
package struct AppendedChange {
    /// Where an entry landed: its `seq`, its canonical commit time and, from an engine that labels transactions
    /// itself (`TransactionDriver.labelsTransactions`), the `seq` of its transaction's first entry.
    package typealias Position = (seq: Int64, committedAt: String, transaction: Int64?)

    private let answer: () async throws -> Position

    package init(seq: Int64, committedAt: String) {
        answer = { (seq, committedAt, nil) }
    }

    package init(awaiting answer: @escaping () async throws -> Position) {
        self.answer = answer
    }

    package func position() async throws -> Position {
        try await answer()
    }
}

/// The statements the write pipeline needs from an engine, inside one open write transaction on one connection.
///
/// Adapters implement it (`SQLiteStore`, `PostgresStore`); `PipelineTransaction` builds every write of the pipeline
/// from these primitives, so validation, policy checks, change logging and cascades behave alike on every engine.
/// Every method throws `CaravanError` only: engine errors are translated with `table` for the message.
package protocol TransactionDriver: AnyObject {
    /// A read plan, run in the transaction.
    func fetch(_ plan: ReadPlan) async throws -> ReadResult

    /// A ranked read over the table's search indexes (full text, similarity, distance).
    func rankedFetch(_ search: RankedSearch) async throws -> [RankedRow]

    /// Every column of the rows of `table` matching `predicate`, in table order, sorted by primary key.
    func selectRows(_ table: TableSchema, where predicate: BoundPredicate) async throws -> [[Value]]

    /// How many of the rows matching `rows` do not satisfy `rule` (NULL counts as not satisfied, as WITH CHECK does).
    func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) async throws -> Int

    /// Inserts `row` (defaults for the columns it does not name); returns the stored row, every column in table order.
    /// With `skippingConflictOn` (the primary key or a UNIQUE column set of `table`), a row whose key is taken —
    /// also by a concurrent transaction that commits first — is skipped and nil returned, never a unique violation.
    func insertRow(_ row: RowValues, into table: TableSchema, skippingConflictOn conflictColumns: [String]?) async throws -> [Value]?

    /// Sets `values` on the rows matching `predicate`.
    func updateRows(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) async throws

    /// Deletes the rows matching `predicate` (foreign keys cascade in the engine).
    func deleteRows(from table: TableSchema, where predicate: BoundPredicate) async throws

    /// Holds `key` until the transaction ends, waiting while another transaction holds it (`StoreTransaction.serialize`).
    func serialize(on key: String) async throws

    /// Appends to `caravan_changes`; returns where the entry landed (its sequence number and canonical commit
    /// time), which an engine may answer later (`AppendedChange`).
    func appendChange(_ entry: ChangeEntry, of table: TableSchema) async throws -> AppendedChange

    /// Runs `body` (a write to `table`) in a savepoint: released on success, rolled back to (and the error rethrown) on failure.
    func withSavepoint(on table: TableSchema, _ body: () async throws -> Void) async throws

    /// Whether the outer transaction is still usable (false after an engine failure that ended it).
    var isInsideTransaction: Bool { get }

    /// Whether the engine labels each entry with its transaction (the `seq` of the transaction's first entry)
    /// itself and answers the label with the entry's position. Then every `ChangeEntry` comes with a nil
    /// `transaction`, so that no append waits for the first one's answer (PostgreSQL holds a transaction's appends
    /// back and draws their `seq`s together, just before COMMIT: `PostgresChangeLog`).
    var labelsTransactions: Bool { get }
}

extension TransactionDriver {
    package var labelsTransactions: Bool { false }
}
