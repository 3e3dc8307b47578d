package import CaravanCore
import CaravanSQL
import CaravanSQLite
import GRDB
import GRDBSQLite

/// What a live query of a whole table (no limit) learns at each commit that touched its table.
package enum LiveRowsUpdate: Sendable, Equatable {
    /// The whole result, in order, with rowids: the first read, and after a transaction that changed many rows (a
    /// pull's pages) or changed the table in a way not told row by row (another process's commit).
    case all(LocalRows)
    /// The rows at the rowids the transaction wrote, as they are now (with rowids), and whether each matches the
    /// query; a changed rowid without a row here was deleted.
    case changed(rowids: Set<Int64>, rows: LocalRows, matching: [Bool])
}

/// One step that turns a live query's last result into the next: `LocalRows.apply(changed:rows:matching:in:)` returns them in order, so
/// that the records decoded from the rows follow the same steps.
package enum LiveRowsEdit: Sendable, Equatable {
    case remove(at: Int)
    /// Row `row` of the update's rows goes at `at`.
    case insert(row: Int, at: Int)
}

extension LocalRows {
    /// Applies a transaction's changed rows (`LiveRowsUpdate.changed`: the rows now at the rowids it wrote, whether
    /// each matches) to this result (a live query's, read with rowids, in `order`), returning the steps taken; none
    /// when the result is the same.
    package mutating func apply(changed: Set<Int64>, rows: LocalRows, matching: [Bool], in order: RowOrder) -> [LiveRowsEdit] {
        var edits: [LiveRowsEdit] = []
        var unchanged = Set<Int64>()
        for row in 0..<rows.count where matching[row] {
            // A row written again with the same values stays where it is.
            if let index = rowids.firstIndex(of: rows.rowids[row]), rows.same(row, as: index, of: self) { unchanged.insert(rows.rowids[row]) }
        }
        for index in stride(from: count - 1, through: 0, by: -1) where changed.contains(rowids[index]) && !unchanged.contains(rowids[index]) {
            remove(at: index)
            edits.append(.remove(at: index))
        }
        for row in 0..<rows.count where matching[row] && !unchanged.contains(rows.rowids[row]) {
            // The first place whose row sorts after the new one (the order is total: it ends with the key).
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                if rows.compare(row, with: middle, of: self, in: order) > 0 { low = middle + 1 } else { high = middle }
            }
            insert(row, of: rows, at: low)
            edits.append(.insert(row: row, at: low))
        }
        return edits
    }
}

/// Follows one table for a live query on the writer connection: collects the rowids each transaction writes and, once
/// it commits, reads those rows (or, past `changedRowsLimit`, the whole result) before the next write can begin, so
/// that every update describes exactly one committed state. Touched only on the writer's queue.
final class LiveRowsObserver: TransactionObserver, @unchecked Sendable {
    /// Past this many changed rows a transaction is read whole (one sorted read beats many ordered inserts).
    static let changedRowsLimit = 32

    private let table: TableSchema
    private let predicate: BoundPredicate
    private let order: [OrderTerm]
    private let continuation: AsyncThrowingStream<LiveRowsUpdate, any Error>.Continuation
    private var changed = Set<Int64>()
    private var rereadAll = false
    private var finished = false

    init(table: TableSchema, predicate: BoundPredicate, order: [OrderTerm], continuation: AsyncThrowingStream<LiveRowsUpdate, any Error>.Continuation) {
        self.table = table
        self.predicate = predicate
        self.order = order
        self.continuation = continuation
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == table.name }

    func databaseDidChange(with event: DatabaseEvent) {
        changed.insert(event.rowID)
        if changed.count > Self.changedRowsLimit {
            rereadAll = true
            stopObservingDatabaseChangesUntilNextTransaction()
        }
    }

    /// A change not told row by row (`notifyChanges`: another process's commit).
    func databaseDidChange() { rereadAll = true }

    func databaseDidCommit(_ db: Database) {
        defer {
            changed.removeAll(keepingCapacity: true)
            rereadAll = false
        }
        guard !finished, rereadAll || !changed.isEmpty else { return }
        do {
            let transaction = LocalTransaction(db: db, insertStatements: [:])
            if rereadAll {
                continuation.yield(.all(try transaction.localRows(table, matching: predicate, order: order, limit: nil, rowids: true)))
            } else {
                let (rows, matching) = try transaction.localRows(table, atRowids: changed, matching: predicate)
                continuation.yield(.changed(rowids: changed, rows: rows, matching: matching))
            }
        } catch {
            finished = true
            continuation.finish(throwing: error)
        }
    }

    func databaseDidRollback(_ db: Database) {
        changed.removeAll(keepingCapacity: true)
        rereadAll = false
    }

    func finish() { finished = true }
}

extension LocalDatabase {
    /// Whether `observeRows` can follow `table` by rowid: not when a column takes one of its names (`rowid`, `oid`,
    /// `_rowid_` then mean the column).
    package static func canFollowRows(of table: TableSchema) -> Bool {
        !table.columns.contains { ["rowid", "oid", "_rowid_"].contains($0.name.lowercased()) }
    }

    /// The rows of `table` matching `predicate` in `order` (whole: no limit), as one `.all` now and then, after every
    /// committed transaction that writes the table, what changed: the rows it wrote (`.changed`), or the whole result
    /// again after a large or untold change. Each update is read on the writer right after its commit, so none is ever
    /// half a transaction and they come in commit order. A local write pays for reading the rows it wrote.
    package func observeRows(_ table: TableSchema, matching predicate: BoundPredicate, order: [OrderTerm]) -> AsyncThrowingStream<LiveRowsUpdate, any Error> {
        AsyncThrowingStream { continuation in
            let observer = LiveRowsObserver(table: table, predicate: predicate, order: order, continuation: continuation)
            do {
                try pool.writeWithoutTransaction { db in
                    // Added and read in one access to the writer: no commit falls between the first read and the first update.
                    db.add(transactionObserver: observer, extent: .observerLifetime)
                    let rows = try LocalTransaction(db: db, insertStatements: [:]).localRows(table, matching: predicate, order: order, limit: nil, rowids: true)
                    continuation.yield(.all(rows))
                }
            } catch {
                continuation.finish(throwing: error)
                return
            }
            let pool = self.pool
            continuation.onTermination = { _ in
                pool.asyncWriteWithoutTransaction { db in
                    observer.finish()
                    db.remove(transactionObserver: observer)
                }
            }
        }
    }
}

extension LocalTransaction {
    /// The rows of `table` at `rowids` (those that exist), with their rowids, and whether each matches `predicate`.
    func localRows(_ table: TableSchema, atRowids rowids: Set<Int64>, matching predicate: BoundPredicate) throws -> (LocalRows, [Bool]) {
        guard !predicate.containsSubquery else {
            throw LocalStorageError.unsupported("a local read filters on the table's own columns (no subqueries)")
        }
        var sql = SQLBuilder<SQLiteSyntax>()
        sql.append("SELECT \(table.columns.map { LocalSchema.quote($0.name) }.joined(separator: ", ")), rowid, CASE WHEN ")
        sql.predicate(predicate.simplified)
        sql.append(" THEN 1 ELSE 0 END FROM \(LocalSchema.quote(table.name)) WHERE rowid IN (")
        for (offset, rowid) in rowids.enumerated() {
            if offset > 0 { sql.append(", ") }
            sql.bind(.integer(rowid))
        }
        sql.append(")")
        let statement = try db.makeStatement(sql: sql.text)
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(sql.bindings.map(SQLiteSyntax.databaseValue)))
        var rows = LocalRows(columns: table.columns)
        var matching: [Bool] = []
        while try cursor.next() != nil {
            rows.append(from: statement.sqliteStatement, rowid: true)
            matching.append(sqlite3_column_int64(statement.sqliteStatement, Int32(table.columns.count + 1)) == 1)
        }
        return (rows, matching)
    }
}
