import CaravanClientSQLite
import CaravanCore
import Foundation

/// The store's `CacheRule`s (declared by the app modules, `AppModule.clientCaches`), enforced here, never removing a
/// row whose local writes have not reached the server.
extension LocalStore {
    /// Applies every table rule at `now` (seconds since 1970); returns how many rows each rule removed.
    @discardableResult
    public func enforceCaches(now: Int64) throws -> [Int] {
        var counts = try write { transaction in
            try caches.map { rule in try self.enforce(rule, now: now, in: transaction) }
        }
        // The attachments' files go after the commit that forgets them (their own transaction).
        let evicted = try enforceAttachmentBudget()
        if let index = caches.firstIndex(where: { if case .attachments = $0 { true } else { false } }) { counts[index] = evicted }
        return counts
    }

    private func enforce(_ rule: CacheRule, now: Int64, in transaction: LocalTransaction) throws -> Int {
        switch rule {
        case .timeToLive(let name, let seconds):
            let table = try table(name)
            return try remove(transaction.rowKeysFetched(table: name, before: now - seconds), from: table, in: transaction)
        case .keepLast(let name, let count, let group, let order):
            let table = try table(name)
            return try remove(transaction.rowKeysBeyond(count, of: table, groupedBy: group, orderedBy: order), from: table, in: transaction)
        case .purgeOlderThan(let name, let column, let seconds):
            let table = try table(name)
            guard table.column(named: column)?.type == .timestamp else { throw ClientError(.local, "purgeOlderThan needs a timestamp column of \(name)") }
            let cutoff = Timestamp.format(microseconds: (now - seconds) * 1_000_000)
            let old = try transaction.rowKeysAndValues(table, column: column).filter { row in
                if case .string(let at) = row.value { return (Timestamp.canonical(at) ?? at) < cutoff }
                return false
            }
            return try remove(old.map(\.key), from: table, in: transaction)
        case .leastRecentlyUsed(let cache, let maxEntries):
            return try transaction.evictLeastRecentlyUsed(cache, keeping: maxEntries)
        case .attachments:
            return 0  // enforceAttachmentBudget, after this transaction
        }
    }

    /// Removes rows by key, except rows with local writes that have not reached the server.
    private func remove(_ keys: [String], from table: TableSchema, in transaction: LocalTransaction) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let unsynced = try transaction.outboxRowKeys(table: table.name, states: ["pending", "parked"])
        var removed = 0
        for key in keys where !unsynced.contains(key) {
            try transaction.deleteRow(table, rowKey: key)
            removed += 1
        }
        return removed
    }

    // MARK: Key-value caches

    /// The cached value of `key` in `cache`, marking it used at `now`.
    public func cachedValue(_ cache: String, key: String, now: Int64) throws -> String? {
        try write { try $0.cachedValue(cache, key: key, now: now) }
    }

    /// Stores `value` under `key`; the cache's rule (if any) evicts the least recently used entries past its size.
    public func cache(_ value: String, in cache: String, key: String, now: Int64) throws {
        try write { transaction in
            try transaction.storeValue(value, in: cache, key: key, now: now)
            for rule in caches {
                if case .leastRecentlyUsed(let name, _) = rule, name == cache { _ = try enforce(rule, now: now, in: transaction) }
            }
        }
    }
}
