package import CaravanCore
import CaravanSQL
import Foundation
package import GRDB
import GRDBSQLite
import Synchronization

/// The embedded storage adapter: a GRDB `DatabasePool` in WAL mode on one SQLite file.
package final class SQLiteStore: Store {
    package var dialect: SQLDialect { .sqlite }
    let pool: DatabasePool
    private let poolMetrics = Mutex<DatabasePoolMetrics?>(nil)

    /// Records the pool's figures from now on (reads and write transactions; see `DatabasePoolMetrics`).
    package func record(_ metrics: DatabasePoolMetrics) {
        poolMetrics.withLock { $0 = metrics }
    }

    /// Work done on every new connection of the pool, before any statement: registering SQL functions, collations
    /// and FTS5 tokenizers that schemas (triggers, virtual tables) or queries use.
    package typealias ConnectionSetup = @Sendable (Database) throws -> Void

    /// Opens (creating if needed) the database at `path`. All connection settings live here.
    ///
    /// Every connection gets Caravan's own SQL functions and the `caravan_fold` FTS5 tokenizer (see
    /// `registerBuiltins(_:)`), then each of `connectionSetup`, in order: app modules that need more register it there.
    package init(path: String, connectionSetup: [ConnectionSetup] = []) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        // Durability: GRDB's pool runs WAL with `synchronous = NORMAL` (as PocketBase does). A commit is in the WAL
        // before it is acknowledged, so it survives a crash of the process (tested with SIGKILL); an OS crash or
        // power loss can lose the last commits. Stricter (`FULL`, an fsync per commit) is not offered yet.
        configuration.prepareDatabase { db in
            SQLiteStore.registerBuiltins(db)
            for setup in connectionSetup { try setup(db) }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
    }

    /// Registers on `db` what Caravan's SQL and frozen schemas use: `caravan_casefold`, `caravan_regexp`,
    /// `caravan_fold` (TextFolding as a SQL function), `caravan_text_match` and the `caravan_fold` FTS5 tokenizer.
    /// Another connection that writes a table with search indexes needs them too (their triggers call them).
    package static func registerBuiltins(_ db: Database) {
        db.add(function: casefoldFunction)
        db.add(function: regexpFunction)
        db.add(function: SQLiteTextSearch.foldFunction)
        db.add(function: SQLiteTextSearch.matchFunction)
        db.add(tokenizer: FoldingTokenizer.self)
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

    /// Applies the migrations not applied yet, all in one `BEGIN IMMEDIATE` transaction: the database's write lock is
    /// the migration lock, so stores (pools, processes) migrating one file at once apply each migration once — the
    /// second waits (busy timeout), then finds them applied. Foreign keys are off meanwhile and checked before the
    /// commit (SQLite's recipe for altering tables); the applied ids live in `grdb_migrations`, as before.
    package func migrate(_ migrations: [Migration]) async throws -> [String] {
        let migrations = Migration.applyOrder(migrations)
        var scripts: [(id: String, sql: String)] = []
        for migration in migrations {
            guard let sql = SQLSchema<SQLiteSyntax>.sql(of: migration) else {
                throw CaravanError(.internalFailure, "migration has no SQLite statements", internalDetail: migration.id)
            }
            scripts.append((migration.id, sql))
        }
        let pending = scripts
        // A long migration can hold the lock past one busy timeout: the instances waiting for it try again.
        var attempt = 1
        while true {
            do {
                return try await Self.apply(pending, of: migrations, in: pool)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 60 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// One migration run: the pending scripts applied in one immediate transaction, foreign keys checked at its end.
    private static func apply(_ pending: [(id: String, sql: String)], of migrations: [Migration], in pool: DatabasePool) async throws -> [String] {
        try await pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            let outcome = Result { () throws -> [String] in
                var appliedNow: [String] = []
                try db.inTransaction(.immediate) {
                    try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                    let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
                    try Migration.checkApplicable(pending: migrations, applied: applied, dialect: .sqlite)
                    for (id, sql) in pending where !applied.contains(id) {
                        // Frozen DDL from the migration list (never user input).
                        try db.execute(sql: sql)
                        try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [id])
                        appliedNow.append(id)
                    }
                    try db.checkForeignKeys()
                    return .commit
                }
                return appliedNow
            }
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            return try outcome.get()
        }
    }

    package func appliedMigrations() async throws -> [String] {
        try await pool.read { db in
            guard try db.tableExists("grdb_migrations") else { return [] }
            return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
    }

    // MARK: Reads

    package func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        // A read in WAL mode never waits on writers: it is short CPU work, so it runs on the calling task's
        // thread instead of hopping to GRDB's reader queue and back (two context switches per request).
        try readOnCallingThread { db in try Self.run(plan, in: db) }
    }

    /// Runs a read plan (and its count) on `db`: the one read path of reads, RPC sets and the write pipeline.
    static func run(_ plan: ReadPlan, in db: Database) throws -> ReadResult {
        do {
            let (selectSQL, countSQL) = compile(plan)
            let rows = try fetchRows(try db.cachedStatement(sql: selectSQL.text), arguments: selectSQL.arguments,
                                     types: plan.outputs.map(\.column.type))
            var total: Int?
            if let countSQL {
                total = try Int.fetchOne(try db.cachedStatement(sql: countSQL.text), arguments: countSQL.statementArguments) ?? 0
            }
            return ReadResult(outputs: plan.outputs, rows: rows, totalCount: total)
        } catch let error as DatabaseError {
            throw translate(error, table: plan.table)
        }
    }

    /// GRDB's synchronous read (a deferred transaction on a pooled reader connection), from a synchronous context
    /// so that the async overload, which hops to a dispatch queue, is not chosen.
    private func readOnCallingThread<T>(_ body: (Database) throws -> T) throws -> T {
        let wait = PoolWait(poolMetrics.withLock { $0 })
        defer { wait.end() }
        return try pool.read { db in
            wait.leased()
            defer { wait.released() }
            return try body(db)
        }
    }

    /// Steps `statement` and reads each column straight from SQLite's buffers, typed by the column's schema type.
    static func fetchRows(_ statement: Statement, arguments: [DatabaseValue], types: [ColumnType]) throws -> [[Value]] {
        var rows: [[Value]] = []
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
        let handle = statement.sqliteStatement
        while try cursor.next() != nil {
            var values: [Value] = []
            values.reserveCapacity(types.count)
            for (index, type) in types.enumerated() {
                let column = Int32(index)
                switch sqlite3_column_type(handle, column) {
                case SQLITE_NULL:
                    values.append(.null)
                case SQLITE_INTEGER:
                    values.append(value(.int64(sqlite3_column_int64(handle, column)), as: type))
                case SQLITE_FLOAT:
                    values.append(value(.double(sqlite3_column_double(handle, column)), as: type))
                default:
                    guard let text = sqlite3_column_text(handle, column) else { values.append(.null); continue }
                    let count = Int(sqlite3_column_bytes(handle, column))
                    let string = String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
                    values.append(value(.string(string), as: type))
                }
            }
            rows.append(values)
        }
        return rows
    }

    /// A storage cell as read from SQLite.
    enum Cell {
        case int64(Int64)
        case double(Double)
        case string(String)
    }

    static func value(_ cell: Cell, as type: ColumnType) -> Value {
        switch cell {
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
        }
    }

    /// The SELECT (and COUNT, when asked) for a plan.
    static func compile(_ plan: ReadPlan) -> (select: SQLiteSQL, count: SQLiteSQL?) {
        (SQLiteSQL.select(plan), plan.includeCount ? SQLiteSQL.count(plan) : nil)
    }

    // MARK: Writes

    package func transaction<T: Sendable>(_ access: AccessContext, rollback: Bool, grant: TransactionGrant, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> (T, [Change]) {
        let wait = PoolWait(poolMetrics.withLock { $0 })
        defer { wait.end() }
        return try await pool.writeWithoutTransaction { db in
            wait.leased()
            defer { wait.released() }
            var result: T?
            var changes: [Change] = []
            let connection = WriterConnection(db: db)
            try db.inTransaction(.immediate) {
                // The body is async (the storage port); it runs here, on the writer's thread, to its end.
                (result, changes) = try CallingThreadExecutor.run {
                    let transaction = PipelineTransaction(driver: SQLiteTransaction(db: connection.db), access: access)
                    let result = try await body(transaction)
                    return (result, try await transaction.loggedChanges())
                }
                return rollback ? .rollback : .commit
            }
            guard let result else { throw CaravanError(.internalFailure, "transaction produced no result") }
            return (result, rollback ? [] : changes)
        }
    }

    /// The writer's connection, handed to the transaction's body, which runs on the writer's thread while GRDB's
    /// write closure waits for it (`CallingThreadExecutor`).
    private struct WriterConnection: @unchecked Sendable {
        let db: Database
    }

    package func changes(after seq: Int64, limit: Int) async throws -> [Change] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.changeColumns) FROM "caravan_changes" WHERE "seq" > ? ORDER BY "seq" LIMIT ?
                """, arguments: [seq, limit]).map(Self.change)
        }
    }

    // MARK: Errors

    /// Maps SQLite errors to Caravan codes with Postgres-style, client-safe messages.
    /// The starts of SQLite's messages for a statement past one of its fixed limits (parser stack, expression depth,
    /// variables, function arguments, columns, terms): the request asked more than SQLite takes. `QueryLimits` keeps
    /// each grammar below them on its own; a request that combines several at their limits may still reach one.
    static let tooComplexMessages = ["parser stack overflow", "Expression tree is too large", "expression tree is too large",
                                     "too many SQL variables", "too many arguments on function", "too many columns",
                                     "too many terms in", "too many FROM clause terms", "at most 64 tables in a join",
                                     "too many references to"]

    /// The `400 PGRST100` of a statement SQLite refuses as too large or too deeply nested.
    static func tooComplex(_ detail: String) -> CaravanError {
        CaravanError(.limitExceeded, "The request nests too deeply or asks too much for the SQLite engine",
                     details: "Its embedded resources, filters and full-text queries together exceed what SQLite's parser takes",
                     hint: "Embed fewer levels, or nest fewer and/or/not groups inside the embeds", internalDetail: detail)
    }

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
            case .SQLITE_TOOBIG:
                return tooComplex(detail)
            case .SQLITE_ERROR where tooComplexMessages.contains(where: { message.hasPrefix($0) || message.hasPrefix("fts5: " + $0) }):
                return tooComplex(detail)
            default:
                return CaravanError(.internalFailure, "An internal error occurred", internalDetail: detail)
            }
        }
    }
}

extension SQLiteStore {
    /// Runs `body` with read access to the database (tests and tools only).
    package func unsafeRead<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        try await pool.read(body)
    }

    /// Runs `body` synchronously on a pooled reader connection, on the calling thread (benchmarks of raw queries).
    package func unsafeReadNow<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }
}
