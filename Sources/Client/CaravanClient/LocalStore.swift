public import CaravanCore
import CaravanClientSQLite
import Foundation

/// The client's on-device store: the synced tables mirrored from their `TableSchema` declarations (no hand-written
/// DDL), the outbox of local writes, the pull cursors, the session and the caches, in one SQLite file (WAL).
/// The statements live in the storage adapter (`CaravanClientSQLite.LocalDatabase`); this type holds the rules:
/// what a local write queues, how pulled state meets local writes, what the caches remove.
public final class LocalStore: Sendable {
    let database: LocalDatabase
    public var path: String { database.path }
    /// The mirrored tables by name.
    let tables: [String: TableSchema]
    public let caches: [CacheRule]
    /// The clock the typed writes read their time from (`created_at` defaults, the outbox's `created_at`).
    let clock: WallClock
    /// Where new row keys and mutation ids come from.
    let ids: IDGenerator

    /// Opens (or creates) the store at `path` mirroring `tables`. `clock` and `ids` are injected so that tests can
    /// fix the time and the keys a write makes.
    public init(path: String, tables: [TableSchema], caches: [CacheRule] = [], clock: WallClock = .system, ids: IDGenerator = .random) throws {
        self.database = try LocalStore.local { try LocalDatabase(path: path, tables: tables) }
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0) })
        self.caches = caches
        self.clock = clock
        self.ids = ids
    }

    /// Runs a read of the adapter, its refusals as `ClientError.local`.
    func read<T>(_ body: (LocalTransaction) throws -> T) throws -> T {
        try Self.local { try database.read(body) }
    }

    /// Runs one write transaction of the adapter, its refusals as `ClientError.local`.
    func write<T>(_ body: (LocalTransaction) throws -> T) throws -> T {
        try Self.local { try database.write(body) }
    }

    static func local<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LocalStorageError {
            throw ClientError(.local, error.description)
        }
    }

    func table(_ name: String) throws -> TableSchema {
        guard let table = tables[name] else { throw ClientError(.local, "\(name) is not a synced table of this store") }
        return table
    }

    public var tableNames: [String] { tables.keys.sorted() }

    /// The mirrored tables that `/sync/v1` serves (the others are kept from reads: `SyncEngine.cachedRow`).
    public var syncedTableNames: [String] { tables.values.filter(\.isSynced).map(\.name).sorted() }

    /// An id for this store, made once: the push's `client_id`.
    public func clientID() throws -> String {
        try write { transaction in
            if let id = try transaction.metaValue("client_id") { return id }
            let id = ids.next()
            try transaction.setMetaValue(id, for: "client_id")
            return id
        }
    }

    // MARK: Rows

    /// Rows of `table` whose columns equal the given values, as JSON objects, by primary key.
    public func rows(_ tableName: String, where conditions: [(String, JSONValue)] = []) throws -> [JSONValue] {
        let table = try table(tableName)
        return try read { try $0.rows(table, where: conditions) }
    }

    /// The rows of `table` (matching `conditions`) now and after every change, for UIs.
    public func observe(_ tableName: String, where conditions: [(String, JSONValue)] = []) throws -> AsyncThrowingStream<[JSONValue], any Error> {
        let table = try table(tableName)
        for (name, _) in conditions where table.column(named: name) == nil { throw ClientError(.local, "\(tableName) has no column \(name)") }
        return database.observe(table, where: conditions)
    }

    // MARK: Session

    public func session() throws -> ClientSession? {
        try read { try $0.session() }.map { ClientSession(accessToken: $0.accessToken, refreshToken: $0.refreshToken, expiresAt: $0.expiresAt, userID: $0.userID) }
    }

    public func saveSession(_ session: ClientSession?) throws {
        let stored = session.map { StoredSession(accessToken: $0.accessToken, refreshToken: $0.refreshToken, expiresAt: $0.expiresAt, userID: $0.userID) }
        try write { try $0.saveSession(stored) }
    }

    // MARK: Sync state

    /// The places design's `SyncState` for one set of tables: cursor, last sync time and duration.
    public struct SyncState: Sendable, Hashable {
        public let cursor: String?
        public let lastSyncAt: String?
        public let lastDurationMilliseconds: Int64?
    }

    public func syncState(tables: [String], filters: [SyncFilter] = []) throws -> SyncState {
        let stored = try read { try $0.syncState(scope: Self.scope(tables, filters)) }
        return SyncState(cursor: stored.cursor, lastSyncAt: stored.lastSyncAt, lastDurationMilliseconds: stored.lastDurationMilliseconds)
    }

    /// The table sets synced before, most recent first.
    public func syncedScopes() throws -> [[String]] {
        try read { try $0.syncedScopes() }.map(Self.tables(ofScope:))
    }

    /// The tables of a scope key.
    static func tables(ofScope key: String) -> [String] {
        (key.split(separator: "?", maxSplits: 1).first ?? "").split(separator: ",").map(String.init)
    }

    /// The key a table set (and its filters, after `?`) keeps its cursor under.
    static func scope(_ tables: [String], _ filters: [SyncFilter] = []) -> String {
        let base = tables.joined(separator: ",")
        return filters.isEmpty ? base : base + "?" + filters.map(\.text).sorted().joined(separator: "&")
    }
}

/// A filter on one pulled table (a *shape*), in the REST filter grammar: `places.area_id=eq.olaya` keeps the places of
/// one area. The server sends the rows that match it under the caller's policy, and rows that stop matching as deletes;
/// the pull's cursor is bound to its filters.
public struct SyncFilter: Sendable, Hashable {
    /// The pull's query parameter: `<table>.<column>` (or `<table>.or`, `<table>.not.and`, …).
    public let parameter: String
    /// Its value: `eq.olaya`, `(a.eq.1,b.gt.2)`.
    public let value: String

    /// `table`'s filter `condition`, written as after `?` in REST: `area_id=eq.olaya`, `or=(…)`.
    public init(table: String, _ condition: String) throws {
        guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
            throw ClientError(.local, "a sync filter is column=operator.value, as in REST (got \"\(condition)\")")
        }
        self.parameter = table + "." + condition[..<equals]
        self.value = String(condition[condition.index(after: equals)...])
    }

    /// Parses `table.column=op.value` (the form `caravan-client sync --filter` takes).
    public init(_ text: String) throws {
        guard let dot = text.firstIndex(of: "."), dot != text.startIndex else {
            throw ClientError(.local, "a sync filter is table.column=operator.value (got \"\(text)\")")
        }
        try self.init(table: String(text[..<dot]), String(text[text.index(after: dot)...]))
    }

    var text: String { parameter + "=" + value }
}
