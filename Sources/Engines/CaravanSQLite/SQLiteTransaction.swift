import CaravanCore
import CaravanSQL
import GRDB

/// The write pipeline's statements on one SQLite write transaction. `PipelineTransaction` (CaravanCore) builds
/// validation, policy checks, change logging and cascades on top of these, the same way on every engine.
final class SQLiteTransaction: TransactionDriver {
    let db: Database

    init(db: Database) {
        self.db = db
    }

    var isInsideTransaction: Bool { db.isInsideTransaction }

    /// Runs `body`, translating SQLite errors into Caravan codes with messages about `table`.
    private func translating<T>(_ table: TableSchema, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw SQLiteStore.translate(error, table: table)
        }
    }

    /// Runs `body`; when it fails on a foreign key, says which key of `values` has no parent row, in PostgreSQL's
    /// words (`Key (place_id)=(x) is not present in table "places".`, constraint `<table>_<columns>_fkey`) — SQLite's
    /// own error names neither. Each written key is looked up in its parent table after the failed statement (which
    /// SQLite undid; the transaction goes on).
    private func naming<T>(missingParentsOf values: RowValues, in table: TableSchema, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CaravanError where error.code == .foreignKeyViolation {
            // In constraint-name order, the order PostgreSQL checks them in, so both engines name the same key.
            let keys = table.foreignKeys.sorted { $0.columns.joined(separator: "_") < $1.columns.joined(separator: "_") }
            for key in keys {
                let written = key.columns.map { column in values.columns.firstIndex(of: column).map { values.values[$0] } }
                guard written.allSatisfy({ $0 != nil && $0 != .null }) else { continue }
                let keyValues = written.compactMap { $0 }
                let parentColumns = zip(key.referencedColumns, key.columns).map { referenced, column in
                    Column(referenced, table.column(named: column)?.type ?? .text)
                }
                let parent = TableSchema(key.referencedTable, columns: parentColumns, primaryKey: key.referencedColumns)
                let lookup = BoundPredicate.and(zip(parentColumns, keyValues).map { BoundPredicate.compare($0, .eq, $1) })
                guard (try? selectRows(parent, where: lookup))?.isEmpty == true else { continue }
                let shown = keyValues.map { value -> String in
                    switch value {
                    case .text(let text), .json(let text): text
                    case .integer(let number): String(number)
                    case .double(let number): String(number)
                    case .bool(let flag): flag ? "true" : "false"
                    case .null: "NULL"
                    }
                }
                throw CaravanError(.foreignKeyViolation,
                                   "insert or update on table \"\(table.name)\" violates foreign key constraint \"\(table.name)_\(key.columns.joined(separator: "_"))_fkey\"",
                                   details: "Key (\(key.columns.joined(separator: ", ")))=(\(shown.joined(separator: ", "))) is not present in table \"\(key.referencedTable)\".",
                                   internalDetail: error.internalDetail)
            }
            throw error
        }
    }

    func fetch(_ plan: ReadPlan) throws -> ReadResult {
        try SQLiteStore.run(plan, in: db)
    }

    func selectRows(_ table: TableSchema, where predicate: BoundPredicate) throws -> [[Value]] {
        let sql = SQLiteSQL.selectRows(table, where: predicate)
        return try translating(table) {
            try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments, types: table.columns.map(\.type))
        }
    }

    func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) throws -> Int {
        if case .constant(true) = rule { return 0 }
        let sql = SQLiteSQL.countFailing(rule, in: table, rows: rows)
        return try translating(table) {
            try Int.fetchOne(try db.cachedStatement(sql: sql.text), arguments: sql.statementArguments) ?? 0
        }
    }

    func rankedFetch(_ search: RankedSearch) throws -> [RankedRow] {
        try translating(search.table) { try SQLiteTextSearch.run(search, in: db) }
    }

    func insertRow(_ row: RowValues, into table: TableSchema, skippingConflictOn conflictColumns: [String]?) throws -> [Value]? {
        let sql = try SQLiteSQL.insert(row, into: table, skippingConflictOn: conflictColumns)
        let stored = try naming(missingParentsOf: row, in: table) {
            try translating(table) {
                try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments, types: table.columns.map(\.type)).first
            }
        }
        if stored == nil, conflictColumns == nil { throw CaravanError(.internalFailure, "insert returned no row") }
        return stored
    }

    func serialize(on key: String) throws {
        // One writer at a time: this transaction already runs alone from BEGIN IMMEDIATE to COMMIT.
    }

    func updateRows(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) throws {
        let sql = try SQLiteSQL.update(table, set: values, where: predicate)
        try naming(missingParentsOf: values, in: table) {
            try translating(table) {
                try db.cachedStatement(sql: sql.text).execute(arguments: sql.statementArguments)
            }
        }
    }

    func deleteRows(from table: TableSchema, where predicate: BoundPredicate) throws {
        let sql = SQLiteSQL.delete(from: table, where: predicate)
        try translating(table) {
            try db.cachedStatement(sql: sql.text).execute(arguments: sql.statementArguments)
        }
    }

    func appendChange(_ entry: ChangeEntry, of table: TableSchema) throws -> AppendedChange {
        let statement = try translating(table) { try db.cachedStatement(sql: """
            INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "old_record", "committed_at", "actor", "tx_id")
            VALUES (?, ?, ?, ?, ?, \(SQLiteSyntax.nowExpression), ?, ?) RETURNING "seq", "committed_at"
            """) }
        let arguments: StatementArguments = [entry.table, entry.primaryKey, entry.operation.rawValue, entry.record, entry.oldRecord, entry.actor,
                                             entry.transaction]
        guard let stored = try translating(table, { try Row.fetchOne(statement, arguments: arguments) }) else {
            throw CaravanError(.internalFailure, "the change log did not return its entry")
        }
        return AppendedChange(seq: stored["seq"], committedAt: stored["committed_at"])
    }

    /// GRDB's `inSavepoint` takes a synchronous body; this one is async, so the savepoint is spelled out (one
    /// name: savepoints nest by the stack SQLite keeps of them).
    func withSavepoint(on table: TableSchema, _ body: () async throws -> Void) async throws {
        try translating(table) { try db.execute(sql: "SAVEPOINT caravan_write") }
        do {
            try await body()
        } catch {
            // A failure that ended the whole transaction (SQLITE_FULL, I/O) took the savepoint with it.
            if db.isInsideTransaction {
                try translating(table) { try db.execute(sql: "ROLLBACK TO SAVEPOINT caravan_write; RELEASE SAVEPOINT caravan_write") }
            }
            throw error
        }
        try translating(table) { try db.execute(sql: "RELEASE SAVEPOINT caravan_write") }
    }
}
