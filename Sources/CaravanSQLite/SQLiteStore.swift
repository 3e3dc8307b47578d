import CaravanCore
import Foundation
import GRDB

/// The embedded storage adapter: a GRDB `DatabasePool` in WAL mode on one SQLite file.
public final class SQLiteStore: Store {
    public var dialect: SQLDialect { .sqlite }
    private let pool: DatabasePool

    /// Opens (creating if needed) the database at `path`. All connection settings live here.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            db.add(function: SQLiteStore.casefoldFunction)
            db.add(function: SQLiteStore.regexpFunction)
        }
        pool = try DatabasePool(path: path, configuration: configuration)
    }

    /// Unicode-aware lowercasing, so ILIKE matches "CAFÉ" with "café" (SQLite's lower() is ASCII-only).
    static let casefoldFunction = DatabaseFunction("caravan_casefold", argumentCount: 1, pure: true) { values in
        guard let text = String.fromDatabaseValue(values[0]) else { return nil }
        return text.lowercased()
    }

    /// `caravan_regexp(pattern, text, caseInsensitive)`: Postgres `~` / `~*` (unanchored search).
    static let regexpFunction = DatabaseFunction("caravan_regexp", argumentCount: 3, pure: true) { values in
        guard let pattern = String.fromDatabaseValue(values[0]),
              let text = String.fromDatabaseValue(values[1]) else { return nil }
        let caseInsensitive = Int64.fromDatabaseValue(values[2]) == 1
        return try RegexCache.shared.matches(text, pattern: pattern, caseInsensitive: caseInsensitive)
    }

    // MARK: Migrations

    public func migrate(_ migrations: [Migration]) async throws -> [String] {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            guard let sql = migration.sql[.sqlite] else {
                throw CaravanError(.internalFailure, "migration has no SQLite statements", internalDetail: migration.id)
            }
            migrator.registerMigration(migration.id) { db in
                try db.execute(sql: sql)
            }
        }
        let frozen = migrator
        let before = try await pool.read { db in try frozen.appliedIdentifiers(db) }
        // Migrations run once at start-up; blocking this task while they run is intended.
        try frozen.migrate(pool)
        return migrations.map(\.id).filter { !before.contains($0) }
    }

    public func appliedMigrations() async throws -> [String] {
        try await pool.read { db in
            guard try db.tableExists("grdb_migrations") else { return [] }
            return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
    }

    // MARK: Reads

    public func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        let (selectSQL, countSQL) = Self.compile(plan)
        do {
            return try await pool.read { db in
                var rows: [[Value]] = []
                let statement = try db.cachedStatement(sql: selectSQL.text)
                let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(selectSQL.arguments))
                let columns = plan.outputs.map(\.column)
                while let row = try cursor.next() {
                    var values: [Value] = []
                    values.reserveCapacity(columns.count)
                    for (index, column) in columns.enumerated() {
                        values.append(Self.value(row[index] as DatabaseValue, as: column.type))
                    }
                    rows.append(values)
                }
                var total: Int?
                if let countSQL {
                    let countStatement = try db.cachedStatement(sql: countSQL.text)
                    total = try Int.fetchOne(countStatement, arguments: StatementArguments(countSQL.arguments)) ?? 0
                }
                return ReadResult(outputs: plan.outputs, rows: rows, totalCount: total)
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, table: plan.table)
        }
    }

    /// The SELECT (and COUNT, when asked) for a plan.
    static func compile(_ plan: ReadPlan) -> (select: SQLiteSQL, count: SQLiteSQL?) {
        var sql = SQLiteSQL()
        sql.append("SELECT ")
        sql.append(plan.outputs.map { SQLiteSQL.quote($0.column.name) }.joined(separator: ", "))
        sql.append(" FROM \(SQLiteSQL.quote(plan.table.name)) WHERE ")
        sql.predicate(plan.filter)
        if !plan.order.isEmpty {
            sql.append(" ORDER BY ")
            sql.append(plan.order.map { term in
                SQLiteSQL.quote(term.column.name) + (term.direction == .ascending ? " ASC" : " DESC")
                    + (term.nulls == .first ? " NULLS FIRST" : " NULLS LAST")
            }.joined(separator: ", "))
        }
        sql.append(" LIMIT ")
        sql.value(.integer(Int64(plan.limit ?? -1)))
        sql.append(" OFFSET ")
        sql.value(.integer(Int64(plan.offset)))
        guard plan.includeCount else { return (sql, nil) }
        var count = SQLiteSQL()
        count.append("SELECT count(*) FROM \(SQLiteSQL.quote(plan.table.name)) WHERE ")
        count.predicate(plan.filter)
        return (sql, count)
    }

    static func value(_ dbValue: DatabaseValue, as type: ColumnType) -> Value {
        switch dbValue.storage {
        case .null: return .null
        case .int64(let i):
            switch type {
            case .boolean: return .bool(i != 0)
            case .double, .decimal: return .double(Double(i))
            case .text, .uuid, .timestamp, .date: return .text(String(i))
            default: return .integer(i)
            }
        case .double(let d):
            return type == .integer ? .integer(Int64(d)) : .double(d)
        case .string(let s):
            switch type {
            case .json, .textArray: return .json(s)
            default: return .text(s)
            }
        case .blob(let data):
            return .text(data.base64EncodedString())
        }
    }

    // MARK: Writes

    public func upsert(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String]) async throws -> [RowOutcome] {
        let conflict = conflictColumns.isEmpty ? table.primaryKey : conflictColumns
        return try await pool.write { db in
            var outcomes: [RowOutcome] = []
            outcomes.reserveCapacity(rows.count)
            for row in rows {
                do {
                    var existed = false
                    try db.inSavepoint {
                        existed = try Self.exists(row, conflict: conflict, in: table, db: db)
                        let sql = Self.upsertSQL(row, conflict: conflict, table: table)
                        let statement = try db.cachedStatement(sql: sql)
                        try statement.execute(arguments: StatementArguments(row.values.map(SQLiteSQL.databaseValue)))
                        return .commit
                    }
                    outcomes.append(existed ? .updated : .inserted)
                } catch let error as DatabaseError {
                    outcomes.append(.rejected(Self.translate(error, table: table)))
                }
            }
            return outcomes
        }
    }

    private static func exists(_ row: RowValues, conflict: [String], in table: TableSchema, db: Database) throws -> Bool {
        var sql = SQLiteSQL()
        sql.append("SELECT 1 FROM \(SQLiteSQL.quote(table.name)) WHERE ")
        for (i, name) in conflict.enumerated() {
            if i > 0 { sql.append(" AND ") }
            sql.append("\(SQLiteSQL.quote(name)) = ")
            sql.value(row[name] ?? .null)
        }
        let statement = try db.cachedStatement(sql: sql.text)
        return try Int.fetchOne(statement, arguments: StatementArguments(sql.arguments)) != nil
    }

    private static func upsertSQL(_ row: RowValues, conflict: [String], table: TableSchema) -> String {
        let columns = row.columns.map(SQLiteSQL.quote).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: row.columns.count).joined(separator: ", ")
        let updates = row.columns.filter { !conflict.contains($0) }
            .map { "\(SQLiteSQL.quote($0)) = excluded.\(SQLiteSQL.quote($0))" }
        var sql = "INSERT INTO \(SQLiteSQL.quote(table.name)) (\(columns)) VALUES (\(placeholders)) ON CONFLICT (\(conflict.map(SQLiteSQL.quote).joined(separator: ", "))) "
        sql += updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))"
        return sql
    }

    // MARK: Errors

    /// Maps SQLite errors to Caravan codes with Postgres-style, client-safe messages.
    static func translate(_ error: DatabaseError, table: TableSchema) -> CaravanError {
        let message = error.message ?? ""
        let detail = "\(error.extendedResultCode): \(message)"
        switch error.extendedResultCode {
        case .SQLITE_CONSTRAINT_NOTNULL:
            let column = message.split(separator: ".").last.map(String.init) ?? "?"
            return CaravanError(.notNullViolation, "null value in column \"\(column)\" of relation \"\(table.name)\" violates not-null constraint", internalDetail: detail)
        case .SQLITE_CONSTRAINT_CHECK:
            let name = message.replacingOccurrences(of: "CHECK constraint failed: ", with: "")
            return CaravanError(.checkViolation, "new row for relation \"\(table.name)\" violates check constraint \"\(name)\"", internalDetail: detail)
        case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
            let columns = message.replacingOccurrences(of: "UNIQUE constraint failed: ", with: "")
                .split(separator: ",").map { $0.split(separator: ".").last.map(String.init) ?? "" }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            return CaravanError(.uniqueViolation, "duplicate key value violates unique constraint \"\(table.name)_\(columns.joined(separator: "_"))_key\"",
                                details: "Key (\(columns.joined(separator: ", "))) already exists.", internalDetail: detail)
        case .SQLITE_CONSTRAINT_FOREIGNKEY:
            return CaravanError(.foreignKeyViolation, "insert or update on table \"\(table.name)\" violates foreign key constraint", internalDetail: detail)
        default:
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN:
                return CaravanError(.storageUnavailable, "The database is temporarily unavailable", internalDetail: detail)
            default:
                return CaravanError(.internalFailure, "An internal error occurred", internalDetail: detail)
            }
        }
    }
}

extension SQLiteStore {
    /// Runs `body` with read access to the database (tests and tools only).
    public func unsafeRead<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        try await pool.read(body)
    }
}
