public import CaravanCore
import Foundation
import GRDB

/// The client's on-device store: the synced tables mirrored from their `TableSchema` declarations (no hand-written
/// DDL), the outbox of local writes, the pull cursors, the session and the caches, in one SQLite file (WAL).
/// The file and its WAL are readable by the owner only (0600): it holds the refresh token.
public final class LocalStore: Sendable {
    let pool: DatabasePool
    public let path: String
    /// The mirrored tables by name.
    let tables: [String: TableSchema]
    /// Each mirrored table's insert statements, made once (building them per row cost more than the insert).
    let insertStatements: [String: (inserting: String, replacing: String)]
    public let caches: [CacheRule]

    public init(path: String, tables: [TableSchema], caches: [CacheRule] = []) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")  // an acknowledged local write survives a power cut
        }
        self.pool = try DatabasePool(path: path, configuration: configuration)
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0) })
        self.insertStatements = Dictionary(uniqueKeysWithValues: tables.map {
            ($0.name, (LocalValues.insertStatement($0, replacing: false), LocalValues.insertStatement($0, replacing: true)))
        })
        self.caches = caches
        try migrate(tables)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + suffix)
        }
    }

    func table(_ name: String) throws -> TableSchema {
        guard let table = tables[name] else { throw ClientError(.local, "\(name) is not a synced table of this store") }
        return table
    }

    public var tableNames: [String] { tables.keys.sorted() }

    /// The store's own tables (outbox, sync cursors, session, row freshness, caches, metadata): migration
    /// `caravan-local-0001`, never edited once shipped.
    static let bookkeepingSchema = """
            CREATE TABLE "caravan_local_outbox" (
              "position" INTEGER PRIMARY KEY AUTOINCREMENT,
              "mutation_id" TEXT NOT NULL UNIQUE,
              "table_name" TEXT NOT NULL,
              "op" TEXT NOT NULL CHECK ("op" IN ('insert', 'upsert', 'update', 'delete')),
              "row_key" TEXT NOT NULL,
              "key" TEXT NOT NULL,
              "record" TEXT,
              "priority" INTEGER NOT NULL,
              "attempts" INTEGER NOT NULL DEFAULT 0,
              "created_at" TEXT NOT NULL,
              "state" TEXT NOT NULL DEFAULT 'pending' CHECK ("state" IN ('pending', 'acked', 'parked')),
              "checkpoint" INTEGER,
              "error_code" TEXT,
              "error_message" TEXT
            );
            CREATE INDEX "caravan_local_outbox_row" ON "caravan_local_outbox" ("table_name", "row_key");
            CREATE TABLE "caravan_local_sync" (
              "scope" TEXT PRIMARY KEY,
              "cursor" TEXT,
              "last_sync_at" TEXT,
              "last_duration_ms" INTEGER
            );
            CREATE TABLE "caravan_local_session" (
              "id" INTEGER PRIMARY KEY CHECK ("id" = 1),
              "access_token" TEXT NOT NULL,
              "refresh_token" TEXT NOT NULL,
              "expires_at" INTEGER NOT NULL,
              "user_id" TEXT NOT NULL
            );
            CREATE TABLE "caravan_local_rows" (
              "table_name" TEXT NOT NULL,
              "row_key" TEXT NOT NULL,
              "fetched_at" INTEGER NOT NULL,
              PRIMARY KEY ("table_name", "row_key")
            );
            CREATE TABLE "caravan_local_kv" (
              "cache" TEXT NOT NULL,
              "key" TEXT NOT NULL,
              "value" TEXT NOT NULL,
              "stored_at" INTEGER NOT NULL,
              "used_at" INTEGER NOT NULL,
              PRIMARY KEY ("cache", "key")
            );
            CREATE INDEX "caravan_local_kv_used" ON "caravan_local_kv" ("cache", "used_at");
            CREATE TABLE "caravan_local_meta" ("key" TEXT PRIMARY KEY, "value" TEXT NOT NULL);
            """

    private func migrate(_ tables: [TableSchema]) throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("caravan-local-0001") { db in
            try db.execute(sql: Self.bookkeepingSchema)
        }
        migrator.registerMigration("caravan-local-tables") { db in
            for table in tables { try db.execute(sql: Self.createStatement(table)) }
        }
        try migrator.migrate(pool)
        // Tables added to the app after the store was made.
        try pool.write { db in
            for table in tables where try !db.tableExists(table.name) { try db.execute(sql: Self.createStatement(table)) }
        }
    }

    /// A mirror table: the declared columns and primary key; no foreign keys or checks (the server decides, and a
    /// mirror may hold a child whose parent the caller cannot see).
    static func createStatement(_ table: TableSchema) -> String {
        var lines = table.columns.map { "  \(LocalValues.quote($0.name)) \(LocalValues.physicalType($0.type))" }
        lines.append("  PRIMARY KEY (\(table.primaryKey.map(LocalValues.quote).joined(separator: ", ")))")
        return "CREATE TABLE \(LocalValues.quote(table.name)) (\n\(lines.joined(separator: ",\n"))\n)"
    }

    /// An id for this store, made once: the push's `client_id`.
    public func clientID() throws -> String {
        try pool.write { db in
            if let id = try String.fetchOne(db, sql: #"SELECT "value" FROM "caravan_local_meta" WHERE "key" = 'client_id'"#) { return id }
            let id = UUID().uuidString.lowercased()
            try db.execute(sql: #"INSERT INTO "caravan_local_meta" ("key", "value") VALUES ('client_id', ?)"#, arguments: [id])
            return id
        }
    }

    // MARK: Rows

    /// Rows of `table` whose columns equal the given values, as JSON objects, by primary key.
    public func rows(_ tableName: String, where conditions: [(String, JSONValue)] = []) throws -> [JSONValue] {
        let table = try table(tableName)
        return try pool.read { db in try Self.rows(table, where: conditions, in: db) }
    }

    static func rows(_ table: TableSchema, where conditions: [(String, JSONValue)], in db: Database) throws -> [JSONValue] {
        var sql = "SELECT \(table.columns.map { LocalValues.quote($0.name) }.joined(separator: ", ")) FROM \(LocalValues.quote(table.name))"
        var arguments: [DatabaseValue] = []
        if !conditions.isEmpty {
            var terms: [String] = []
            for (name, value) in conditions {
                guard let column = table.column(named: name) else { throw ClientError(.local, "\(table.name) has no column \(name)") }
                if value == .null {
                    terms.append("\(LocalValues.quote(name)) IS NULL")
                } else {
                    terms.append("\(LocalValues.quote(name)) = ?")
                    arguments.append(try LocalValues.databaseValue(value, for: column))
                }
            }
            sql += " WHERE " + terms.joined(separator: " AND ")
        }
        sql += " ORDER BY \(table.primaryKey.map(LocalValues.quote).joined(separator: ", "))"
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
            .object(table.columns.enumerated().map { index, column in (column.name, LocalValues.json(row[index], for: column)) })
        }
    }

    /// The rows of `table` (matching `conditions`) now and after every change, for UIs.
    public func observe(_ tableName: String, where conditions: [(String, JSONValue)] = []) throws -> AsyncThrowingStream<[JSONValue], any Error> {
        let table = try table(tableName)
        let conditionsCopy = conditions.map { ObservedCondition(column: $0.0, value: $0.1) }
        // `.async(onQueue:)`: GRDB's `.immediate` scheduling needs the main thread.
        let observation = ValueObservation.tracking { db in
            try Self.rows(table, where: conditionsCopy.map { ($0.column, $0.value) }, in: db)
        }
        .removeDuplicates()
        .values(in: pool, scheduling: .async(onQueue: DispatchQueue(label: "caravan.client.observation")))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await rows in observation { continuation.yield(rows) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private struct ObservedCondition: Sendable {
        let column: String
        let value: JSONValue
    }

    // MARK: Session

    public func session() throws -> ClientSession? {
        try pool.read { db in
            try Row.fetchOne(db, sql: #"SELECT * FROM "caravan_local_session" WHERE "id" = 1"#).map { row in
                ClientSession(accessToken: row["access_token"], refreshToken: row["refresh_token"], expiresAt: row["expires_at"], userID: row["user_id"])
            }
        }
    }

    public func saveSession(_ session: ClientSession?) throws {
        try pool.write { db in
            try db.execute(sql: #"DELETE FROM "caravan_local_session""#)
            guard let session else { return }
            try db.execute(sql: """
                INSERT INTO "caravan_local_session" ("id", "access_token", "refresh_token", "expires_at", "user_id") VALUES (1, ?, ?, ?, ?)
                """, arguments: [session.accessToken, session.refreshToken, session.expiresAt, session.userID])
        }
    }

    // MARK: Sync state

    /// The places design's `SyncState` for one set of tables: cursor, last sync time and duration.
    public struct SyncState: Sendable, Hashable {
        public let cursor: String?
        public let lastSyncAt: String?
        public let lastDurationMilliseconds: Int64?
    }

    public func syncState(tables: [String]) throws -> SyncState {
        try pool.read { db in
            let row = try Row.fetchOne(db, sql: #"SELECT * FROM "caravan_local_sync" WHERE "scope" = ?"#, arguments: [tables.joined(separator: ",")])
            return SyncState(cursor: row?["cursor"], lastSyncAt: row?["last_sync_at"], lastDurationMilliseconds: row?["last_duration_ms"])
        }
    }

    /// The table sets synced before, most recent first.
    public func syncedScopes() throws -> [[String]] {
        try pool.read { db in
            try String.fetchAll(db, sql: #"SELECT "scope" FROM "caravan_local_sync" ORDER BY "last_sync_at" DESC"#).map { $0.split(separator: ",").map(String.init) }
        }
    }
}
