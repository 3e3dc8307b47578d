import CaravanCore
import CaravanSQL
import PostgresNIO

/// The write pipeline's statements on one Postgres transaction (BEGIN … COMMIT on one leased connection).
/// `PipelineTransaction` (CaravanCore) builds validation, policy checks, change logging and cascades on top of
/// these, exactly as on SQLite.
final class PostgresTransaction: TransactionDriver {
    let session: PostgresSession
    private var savepoints = 0

    /// Change-log entries appended and not sent yet, oldest first, with the table each came from (for messages).
    /// They are sent together (`sendChanges()`), just before COMMIT — or sooner, when something waits for one or
    /// reads the log, or a savepoint begins — so that the transaction draws its `seq`s at one moment: transactions
    /// whose `seq`s interleave hold the log's closed mark back (`PostgresChangeLog`, "Drawing … together").
    private var unsent: [(entry: ChangeEntry, table: TableSchema)] = []
    /// Where each entry appended so far is answered: its batch and its row there (entries sent so far only).
    private var sentEntries: [(batch: SentBatch, row: Int)] = []
    /// The transaction's first batch: its first `seq` labels the later batches' entries.
    private var firstBatch: SentBatch?

    /// The answer of one append statement, read once however many entries wait for it.
    private final class SentBatch {
        private let answer: () async throws -> [[Value]]
        private var rows: [[Value]]?

        init(_ answer: @escaping () async throws -> [[Value]]) {
            self.answer = answer
        }

        func read() async throws -> [[Value]] {
            if let rows { return rows }
            let read = try await answer()
            rows = read
            return read
        }
    }

    /// The most entries one append statement carries (seven bound values each; PostgreSQL takes 65,535).
    static let batchLimit = 1000

    init(session: PostgresSession) {
        self.session = session
    }

    var isInsideTransaction: Bool { !session.isBroken }

    func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        // A read of the log itself sees this transaction's entries.
        if plan.table.name == SystemModule.changeLog.name { try await sendChanges() }
        let (select, count) = PostgresRead.compile(plan)
        let rows = try await session.rows(select, types: plan.outputs.map(\.column.type), table: plan.table)
        let total: Int? = if let count { try await session.count(count, table: plan.table) } else { nil }
        return ReadResult(outputs: plan.outputs, rows: rows, totalCount: total)
    }

    func rankedFetch(_ search: RankedSearch) async throws -> [RankedRow] {
        try await PostgresTextSearch.run(search, session: session)
    }

    func selectRows(_ table: TableSchema, where predicate: BoundPredicate) async throws -> [[Value]] {
        try await session.rows(PostgresSQL.selectRows(table, where: predicate, locking: true), types: table.columns.map(\.type), table: table)
    }

    func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) async throws -> Int {
        if case .constant(true) = rule { return 0 }
        return try await session.count(PostgresSQL.countFailing(rule, in: table, rows: rows), table: table)
    }

    func insertRow(_ row: RowValues, into table: TableSchema, skippingConflictOn conflictColumns: [String]?) async throws -> [Value]? {
        let sql = try PostgresSQL.insert(row, into: table, skippingConflictOn: conflictColumns)
        let stored = try await session.rows(sql, types: table.columns.map(\.type), table: table).first
        if stored == nil, conflictColumns == nil { throw CaravanError(.internalFailure, "insert returned no row") }
        return stored
    }

    func serialize(on key: String) async throws {
        var sql = PostgresSQL()
        // A transaction-scoped advisory lock on the key's 64-bit hash (seeded apart from Caravan's own lock keys).
        sql.append("SELECT pg_advisory_xact_lock(hashtextextended(")
        sql.value(.text(key), as: .text)
        sql.append(", 67))")
        try await session.execute(sql, table: nil)
    }

    func updateRows(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) async throws {
        try await session.execute(try PostgresSQL.update(table, set: values, where: predicate), table: table)
    }

    func deleteRows(from table: TableSchema, where predicate: BoundPredicate) async throws {
        try await session.execute(PostgresSQL.delete(from: table, where: predicate), table: table)
    }

    /// Held back until `sendChanges()`: a write waits for its INSERT and its COMMIT only.
    func appendChange(_ entry: ChangeEntry, of table: TableSchema) async throws -> AppendedChange {
        let index = sentEntries.count + unsent.count
        unsent.append((entry, table))
        return AppendedChange { [self] in try await position(of: index) }
    }

    /// The entries append their transaction label themselves (the first `seq` of the transaction's first batch).
    var labelsTransactions: Bool { true }

    /// Where the `index`th appended entry landed; sends the held-back entries first when it is among them.
    private func position(of index: Int) async throws -> AppendedChange.Position {
        if index >= sentEntries.count { try await sendChanges() }
        let (batch, row) = sentEntries[index]
        let rows = try await batch.read()
        guard row < rows.count, case .integer(let seq) = rows[row][0], case .text(let committedAt) = rows[row][1],
              case .integer(let transaction) = rows[row][2] else {
            throw CaravanError(.internalFailure, "the change log did not return its entry")
        }
        return (seq, committedAt, transaction)
    }

    /// Sends the held-back change-log entries, in statements of at most `batchLimit`, without waiting for their
    /// answers — except a later batch's wait for the first one's, whose first `seq` labels it (a transaction of more
    /// than `batchLimit` entries, or one that sent some early).
    func sendChanges() async throws {
        while !unsent.isEmpty {
            let count = min(unsent.count, Self.batchLimit)
            var label: Int64?
            if let firstBatch {
                guard case .integer(let first)? = try await firstBatch.read().first?[2] else {
                    throw CaravanError(.internalFailure, "the change log did not return its entry")
                }
                label = first
            }
            let entries = unsent.prefix(count).map(\.entry)
            let batch = SentBatch(session.rowsLater(PostgresChangeLog.append(entries[...], label: label), types: [.integer, .timestamp, .integer],
                                                    table: unsent[0].table))
            if firstBatch == nil { firstBatch = batch }
            sentEntries += (0..<count).map { (batch, $0) }
            unsent.removeFirst(count)
        }
    }

    func withSavepoint(on table: TableSchema, _ body: () async throws -> Void) async throws {
        savepoints += 1
        defer { savepoints -= 1 }
        let name = PostgresSQL.quote("caravan_\(savepoints)")
        // Entries appended before the savepoint are the outer transaction's: they must not roll back with it.
        try await sendChanges()
        let held = sentEntries.count
        try await session.execute(savepoint("SAVEPOINT \(name)"), table: table)
        do {
            try await body()
            // Its entries go inside it: an append's failure (sent without waiting) is the savepoint's.
            try await sendChanges()
            try await session.execute(savepoint("RELEASE SAVEPOINT \(name)"), table: table)
        } catch {
            // The entries appended inside it are dropped with it (the pipeline forgets them too); those already sent
            // are rolled back with it.
            unsent.removeAll()
            if sentEntries.count > held { sentEntries.removeSubrange(held...) }
            if held == 0 { firstBatch = nil }
            // An error aborts the transaction up to the savepoint; rolling back to it makes it usable again.
            if !session.isBroken { try await session.execute(savepoint("ROLLBACK TO SAVEPOINT \(name)"), table: table) }
            throw error
        }
    }

    private func savepoint(_ statement: String) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(statement)
        return sql
    }
}
