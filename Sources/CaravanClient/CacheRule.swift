import CaravanCore
import Foundation
import GRDB

/// A cache policy of the local store, declared once per table or key-value cache and enforced by the store (not
/// code in each app). Rows with local writes still waiting for the server are never removed.
///
/// A table under a removing rule is a partial replica: a removed row comes back when it next changes on the server,
/// on a new snapshot, or when the app reads it again (`CaravanAPI.fetchRow`).
public enum CacheRule: Sendable, Hashable {
    /// Rows of `table` fetched from the server longer ago than `seconds` are removed (LangMatcher profiles: 24 h).
    case timeToLive(table: String, seconds: Int64)
    /// Per value of `groupedBy`, only the `count` newest rows by `orderedBy` are kept (100 messages per conversation).
    case keepLast(table: String, count: Int, groupedBy: String, orderedBy: String)
    /// Rows of `table` whose timestamp column `column` is older than `seconds` are removed (messages after 90 days).
    case purgeOlderThan(table: String, column: String, seconds: Int64)
    /// A key-value cache of at most `maxEntries`, least recently used first out (translations: 1,000).
    case leastRecentlyUsed(cache: String, maxEntries: Int)
}

extension LocalStore {
    /// Applies every table rule at `now` (seconds since 1970); returns how many rows each rule removed.
    @discardableResult
    public func enforceCaches(now: Int64) throws -> [Int] {
        try pool.write { db in
            try caches.map { rule in try self.enforce(rule, now: now, in: db) }
        }
    }

    private func enforce(_ rule: CacheRule, now: Int64, in db: Database) throws -> Int {
        switch rule {
        case .timeToLive(let name, let seconds):
            let table = try table(name)
            let stale = try String.fetchAll(db, sql: """
                SELECT "row_key" FROM "caravan_local_rows" WHERE "table_name" = ? AND "fetched_at" < ?
                """, arguments: [name, now - seconds])
            return try remove(stale, from: table, in: db)
        case .keepLast(let name, let count, let group, let order):
            let table = try table(name)
            guard table.column(named: group) != nil, table.column(named: order) != nil else { throw ClientError(.local, "keepLast names unknown columns of \(name)") }
            var surplus: [String] = []
            let all = try LocalStore.rows(table, where: [], in: db)
            let grouped = Dictionary(grouping: all) { $0[group]?.jsonText ?? "null" }
            for (_, rows) in grouped where rows.count > count {
                let newestFirst = rows.sorted { a, b in
                    let ordering = Self.compare(a[order] ?? .null, b[order] ?? .null)
                    return ordering != 0 ? ordering > 0 : (table.keyText(of: a) ?? "") > (table.keyText(of: b) ?? "")
                }
                surplus += newestFirst.dropFirst(count).compactMap { table.keyText(of: $0) }
            }
            return try remove(surplus, from: table, in: db)
        case .purgeOlderThan(let name, let column, let seconds):
            let table = try table(name)
            guard table.column(named: column)?.type == .timestamp else { throw ClientError(.local, "purgeOlderThan needs a timestamp column of \(name)") }
            let cutoff = Timestamp.format(microseconds: (now - seconds) * 1_000_000)
            let old = try LocalStore.rows(table, where: [], in: db).filter { row in
                if case .string(let at)? = row[column] { return (Timestamp.canonical(at) ?? at) < cutoff }
                return false
            }
            return try remove(old.compactMap { table.keyText(of: $0) }, from: table, in: db)
        case .leastRecentlyUsed(let cache, let maxEntries):
            try db.execute(sql: """
                DELETE FROM "caravan_local_kv" WHERE "cache" = ? AND "key" NOT IN
                  (SELECT "key" FROM "caravan_local_kv" WHERE "cache" = ? ORDER BY "used_at" DESC, "key" LIMIT ?)
                """, arguments: [cache, cache, maxEntries])
            return db.changesCount
        }
    }

    /// -1, 0 or 1: numbers by value, strings (timestamps) by text, null first.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        func number(_ v: JSONValue) -> Double? {
            switch v {
            case .integer(let i): Double(i)
            case .double(let d): d
            default: nil
            }
        }
        if let x = number(a), let y = number(b) { return x < y ? -1 : (x > y ? 1 : 0) }
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.string(let x), .string(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        default: return a.jsonText < b.jsonText ? -1 : (a.jsonText > b.jsonText ? 1 : 0)
        }
    }

    /// Removes rows by key, except rows with local writes that have not reached the server.
    private func remove(_ keys: [String], from table: TableSchema, in db: Database) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let unsynced = Set(try String.fetchAll(db, sql: """
            SELECT "row_key" FROM "caravan_local_outbox" WHERE "table_name" = ? AND "state" IN ('pending', 'parked')
            """, arguments: [table.name]))
        var removed = 0
        for key in keys where !unsynced.contains(key) {
            try Self.deleteRow(table, rowKey: key, in: db)
            removed += 1
        }
        return removed
    }

    // MARK: Key-value caches

    /// The cached value of `key` in `cache`, marking it used at `now`.
    public func cachedValue(_ cache: String, key: String, now: Int64) throws -> String? {
        try pool.write { db in
            guard let value = try String.fetchOne(db, sql: #"SELECT "value" FROM "caravan_local_kv" WHERE "cache" = ? AND "key" = ?"#,
                                                  arguments: [cache, key]) else { return nil }
            try db.execute(sql: #"UPDATE "caravan_local_kv" SET "used_at" = ? WHERE "cache" = ? AND "key" = ?"#, arguments: [now, cache, key])
            return value
        }
    }

    /// Stores `value` under `key`; the cache's rule (if any) evicts the least recently used entries past its size.
    public func cache(_ value: String, in cache: String, key: String, now: Int64) throws {
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO "caravan_local_kv" ("cache", "key", "value", "stored_at", "used_at") VALUES (?, ?, ?, ?, ?)
                ON CONFLICT ("cache", "key") DO UPDATE SET "value" = excluded."value", "stored_at" = excluded."stored_at", "used_at" = excluded."used_at"
                """, arguments: [cache, key, value, now, now])
            for rule in caches {
                if case .leastRecentlyUsed(let name, _) = rule, name == cache { _ = try enforce(rule, now: now, in: db) }
            }
        }
    }
}
