import CaravanCore
import CaravanSQL
import PostgresNIO

/// The write pipeline's statements on one Postgres transaction (BEGIN … COMMIT on one leased connection).
/// `PipelineTransaction` (CaravanCore) builds validation, policy checks, change logging and cascades on top of
/// these, exactly as on SQLite.
final class PostgresTransaction: TransactionDriver {
    let session: PostgresSession
    private var savepoints = 0
    /// Whether this transaction holds the write-order lock (`PostgresChangeLog`).
    private var holdsWriteOrderLock = false

    init(session: PostgresSession) {
        self.session = session
    }

    var isInsideTransaction: Bool { !session.isBroken }

    func fetch(_ plan: ReadPlan) throws -> ReadResult {
        let (select, count) = PostgresRead.compile(plan)
        let rows = try session.rows(select, types: plan.outputs.map(\.column.type), table: plan.table)
        let total = try count.map { try session.count($0, table: plan.table) }
        return ReadResult(outputs: plan.outputs, rows: rows, totalCount: total)
    }

    func rankedFetch(_ search: RankedSearch) throws -> [RankedRow] {
        try PostgresTextSearch.run(search, session: session)
    }

    /// Takes the write-order lock before the transaction's first row lock; it is held until COMMIT or ROLLBACK.
    private func enterWriteOrder(_ table: TableSchema) throws {
        guard !holdsWriteOrderLock else { return }
        try session.execute(PostgresChangeLog.lockStatement, table: table)
        holdsWriteOrderLock = true
    }

    /// Queues the commit notification for the transaction's last change-log entry (delivered on COMMIT).
    func announce(_ seq: Int64) throws {
        try session.execute(PostgresChangeLog.announce(seq), table: nil)
    }

    func selectRows(_ table: TableSchema, where predicate: BoundPredicate) throws -> [[Value]] {
        try enterWriteOrder(table)
        return try session.rows(PostgresSQL.selectRows(table, where: predicate, locking: true), types: table.columns.map(\.type), table: table)
    }

    func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) throws -> Int {
        if case .constant(true) = rule { return 0 }
        return try session.count(PostgresSQL.countFailing(rule, in: table, rows: rows), table: table)
    }

    func insertRow(_ row: RowValues, into table: TableSchema) throws -> [Value] {
        try enterWriteOrder(table)
        let sql = try PostgresSQL.insert(row, into: table)
        let keyTypes = try table.primaryKey.map { try table.requireColumn($0).type }
        guard let key = try session.rows(sql, types: keyTypes, table: table).first else {
            throw CaravanError(.internalFailure, "insert returned no key")
        }
        return key
    }

    func updateRows(_ table: TableSchema, set values: RowValues, where predicate: BoundPredicate) throws {
        try enterWriteOrder(table)
        try session.execute(try PostgresSQL.update(table, set: values, where: predicate), table: table)
    }

    func deleteRows(from table: TableSchema, where predicate: BoundPredicate) throws {
        try enterWriteOrder(table)
        try session.execute(PostgresSQL.delete(from: table, where: predicate), table: table)
    }

    func appendChange(_ entry: ChangeEntry, of table: TableSchema) throws -> (seq: Int64, committedAt: String) {
        try enterWriteOrder(table)
        var sql = PostgresSQL()
        sql.append(#"INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "old_record", "actor", "tx_id") VALUES ("#)
        sql.value(.text(entry.table), as: .text)
        sql.append(", ")
        sql.value(.text(entry.primaryKey), as: .text)
        sql.append("::json, ")
        sql.value(.text(entry.operation.rawValue), as: .text)
        sql.append(", ")
        sql.value(entry.record.map(Value.text) ?? .null, as: .text)
        sql.append("::json, ")
        sql.value(entry.oldRecord.map(Value.text) ?? .null, as: .text)
        sql.append("::json, ")
        sql.value(.text(entry.actor), as: .text)
        sql.append(", ")
        sql.value(entry.transaction.map(Value.integer) ?? .null, as: .integer)
        sql.append(#") RETURNING "seq", "#)
        sql.append(PostgresSyntax.output(Column("committed_at", .timestamp)))
        guard let row = try session.rows(sql, types: [.integer, .timestamp], table: table).first,
              case .integer(let seq) = row[0], case .text(let committedAt) = row[1] else {
            throw CaravanError(.internalFailure, "the change log did not return its entry")
        }
        return (seq, committedAt)
    }

    func withSavepoint(on table: TableSchema, _ body: () throws -> Void) throws {
        // Taken outside the savepoint: a lock first taken inside one is released when it is rolled back to.
        try enterWriteOrder(table)
        savepoints += 1
        defer { savepoints -= 1 }
        let name = PostgresSQL.quote("caravan_\(savepoints)")
        try session.execute(savepoint("SAVEPOINT \(name)"), table: table)
        do {
            try body()
        } catch {
            // An error aborts the transaction up to the savepoint; rolling back to it makes it usable again.
            if !session.isBroken { try session.execute(savepoint("ROLLBACK TO SAVEPOINT \(name)"), table: table) }
            throw error
        }
        try session.execute(savepoint("RELEASE SAVEPOINT \(name)"), table: table)
    }

    private func savepoint(_ statement: String) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(statement)
        return sql
    }
}
