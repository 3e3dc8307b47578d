package import CaravanCore
import CaravanSQLite
import Foundation
import GRDB
import Synchronization

/// The client SDK's storage adapter: one SQLite file (WAL, `synchronous = FULL`) holding the mirrors of the synced
/// tables, made from their `TableSchema` declarations, and the store's bookkeeping (outbox, cursors, session, caches).
/// Every statement of the on-device store is written here; callers get typed operations on a `LocalTransaction`.
/// The file and its WAL are readable by the owner only (0600): it holds the refresh token.
package final class LocalDatabase: Sendable {
    let pool: DatabasePool
    package let path: String
    /// Each mirrored table's insert statements, made once (building them per row cost more than the insert).
    let insertStatements: [String: (inserting: String, replacing: String)]
    /// The writer's `PRAGMA data_version` when last looked at: it moves when another connection commits — another
    /// process, or another pool on the same file — and never for this pool's own writes (its readers never write).
    private let seenDataVersion = Mutex<Int64?>(nil)

    package init(path: String, tables: [TableSchema]) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")  // an acknowledged local write survives a power cut
            SQLiteStore.registerBuiltins(db)  // the functions the shared serializer's filters call (ILIKE, regex)
        }
        self.pool = try DatabasePool(path: path, configuration: configuration)
        self.insertStatements = Dictionary(uniqueKeysWithValues: tables.map {
            ($0.name, (LocalSchema.insert($0, replacing: false), LocalSchema.insert($0, replacing: true)))
        })
        try migrate(tables)
        _ = try noticeOtherConnectionsCommits()  // where the store is now: commits from here on are noticed
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + suffix)
        }
    }

    private func migrate(_ tables: [TableSchema]) throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("caravan-local-0001") { db in
            try db.execute(sql: LocalSchema.bookkeeping)
        }
        migrator.registerMigration("caravan-local-0002-evicted") { db in
            try db.execute(sql: LocalSchema.evictedWhileWaiting)
        }
        migrator.registerMigration("caravan-local-tables") { db in
            for table in tables { try db.execute(sql: LocalSchema.createMirror(table)) }
        }
        migrator.registerMigration("caravan-local-0003-attachments") { db in
            try db.execute(sql: LocalSchema.attachments)
        }
        try migrator.migrate(pool)
        // Tables added to the app after the store was made, and tables whose declaration changed since.
        try pool.write { db in try LocalSchemaUpgrade.upgrade(tables, in: db) }
    }

    /// Whether another connection (another process) committed since the last look; if it did, the observations of
    /// this pool (live queries, `observe`, the outbox counts) are told the whole store changed and fetch again, as
    /// after one of its own commits. GRDB sees only its own pool's writes; SQLite's `data_version` sees the rest.
    package func noticeOtherConnectionsCommits() throws -> Bool {
        try pool.writeWithoutTransaction { db in
            let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
            let previous = seenDataVersion.withLock { seen in
                defer { seen = version }
                return seen
            }
            guard let previous, previous != version else { return false }
            // An empty deferred transaction: GRDB tells its observers at the commit, and no lock is taken that another
            // process's write would hold up.
            try db.inTransaction(.deferred) {
                try db.notifyChanges(in: .fullDatabase)
                return .commit
            }
            return true
        }
    }

    /// The file beside the store whose lock the syncing process holds.
    package var syncLockPath: String { path + "-sync.lock" }

    /// Runs `body` in a read-only snapshot.
    package func read<T>(_ body: (LocalTransaction) throws -> T) throws -> T {
        try pool.read { db in try body(LocalTransaction(db: db, insertStatements: insertStatements)) }
    }

    /// Runs `body` in one write transaction: everything it does commits together or not at all.
    package func write<T>(_ body: (LocalTransaction) throws -> T) throws -> T {
        try pool.write { db in try body(LocalTransaction(db: db, insertStatements: insertStatements)) }
    }

    /// The rows of `table` matching `conditions` now and after every committed change that touches them.
    package func observe(_ table: TableSchema, where conditions: [(String, JSONValue)]) -> AsyncThrowingStream<[JSONValue], any Error> {
        let observed = conditions.map { ObservedCondition(column: $0.0, value: $0.1) }
        return observe { try $0.rows(table, where: observed.map { ($0.column, $0.value) }) }
    }

    /// What `fetch` reads now, then again after every committed transaction that changes the tables (and columns) it
    /// read — GRDB's `ValueObservation`, which tracks the region a fetch reads — and only when the value differs.
    /// `fetch` must read the same region each time (the same statements, other arguments at most).
    /// A transaction is seen whole or not at all: a value is read from a committed state.
    /// `removingDuplicates: false` leaves the comparison to the caller (a live query compares row by row anyway).
    package func observe<Value: Equatable & Sendable>(removingDuplicates: Bool = true,
                                                      _ fetch: @escaping @Sendable (LocalTransaction) throws -> Value) -> AsyncThrowingStream<Value, any Error> {
        let statements = insertStatements
        // A constant region (one statement over the same tables every time): the pool fetches fresh values on a reader,
        // concurrently, instead of holding the writer — a local write never waits for a live query's read.
        // `.async(onQueue:)`: GRDB's `.immediate` scheduling needs the main thread.
        let tracked = ValueObservation.trackingConstantRegion { db in try fetch(LocalTransaction(db: db, insertStatements: statements)) }
        let queue = DispatchQueue(label: "caravan.client.observation")
        let observation = removingDuplicates
            ? tracked.removeDuplicates().values(in: pool, scheduling: .async(onQueue: queue))
            : tracked.values(in: pool, scheduling: .async(onQueue: queue))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await value in observation { continuation.yield(value) }
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
}
