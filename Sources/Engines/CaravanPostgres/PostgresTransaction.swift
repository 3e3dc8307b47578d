import CaravanCore
import CaravanSQL
import PostgresNIO

/// The write pipeline's statements on one Postgres transaction (BEGIN … COMMIT on one leased connection).
/// `PipelineTransaction` (CaravanCore) builds validation, policy checks, change logging and cascades on top of
/// these, exactly as on SQLite.
final class PostgresTransaction: TransactionDriver {
    let session: PostgresSession
    private var savepoints = 0

    init(session: PostgresSession) {
        self.session = session
    }

    var isInsideTransaction: Bool { !session.isBroken }

    func fetch(_ plan: ReadPlan) async throws -> ReadResult {
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

    /// Sent without waiting: a one-row write waits for its INSERT and its COMMIT only.
    func appendChange(_ entry: ChangeEntry, of table: TableSchema) async throws -> AppendedChange {
        let rows = session.rowsLater(PostgresChangeLog.append(entry), types: [.integer, .timestamp], table: table)
        return AppendedChange {
            guard let row = try await rows().first, case .integer(let seq) = row[0], case .text(let committedAt) = row[1] else {
                throw CaravanError(.internalFailure, "the change log did not return its entry")
            }
            return (seq, committedAt)
        }
    }

    func withSavepoint(on table: TableSchema, _ body: () async throws -> Void) async throws {
        savepoints += 1
        defer { savepoints -= 1 }
        let name = PostgresSQL.quote("caravan_\(savepoints)")
        try await session.execute(savepoint("SAVEPOINT \(name)"), table: table)
        do {
            try await body()
            // Its failure may be a change-log append's (sent without waiting) inside the savepoint.
            try await session.execute(savepoint("RELEASE SAVEPOINT \(name)"), table: table)
        } catch {
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
