import CaravanClientSQLite
public import CaravanCore

/// A read answered from the device or from the server.
public struct CachedRead: Sendable, Hashable {
    public let value: JSONValue?
    /// Whether the device answered (a fresh copy, or a stale one because the server could not be reached).
    public let fromCache: Bool
    /// The device's copy was older than its rule allows; served because the server could not be reached.
    public let stale: Bool

    public init(value: JSONValue?, fromCache: Bool, stale: Bool) {
        self.value = value
        self.fromCache = fromCache
        self.stale = stale
    }

    public var json: JSONValue {
        .object([("value", value ?? .null), ("from_cache", .bool(fromCache)), ("stale", .bool(stale))])
    }
}

extension SyncEngine {
    /// Runs `body` with the session's access token, retrying transient faults and an expired token as a sync does.
    public func withFreshToken<T: Sendable>(_ body: @Sendable (String?) async throws -> T) async throws -> T {
        try await withRetries(body)
    }

    /// The row of `tableName` with primary key `key`: the local copy while the table's `timeToLive` rule holds it
    /// fresh, else read over REST as the caller may see it and kept with its fetch time. Offline, a stale local copy
    /// is better than none.
    public func cachedRow(_ tableName: String, key: JSONValue) async throws -> CachedRead {
        let table = try store.table(tableName)
        guard let rowKey = table.keyText(of: key), case .object(let pairs) = key else {
            throw ClientError(.local, "the key must hold \(table.primaryKey.joined(separator: ", "))")
        }
        let seconds = now() / 1_000_000
        let local = try store.fetchedRow(table, rowKey: rowKey)
        if let local, let fetchedAt = local.fetchedAt, let ttl = store.timeToLive(of: tableName), fetchedAt >= seconds - ttl {
            return CachedRead(value: local.row, fromCache: true, stale: false)
        }
        do {
            let serverRow = try await withRetries { token in try await self.api.fetchRow(tableName, key: pairs.map { ($0.key, $0.value) }, token: token) }
            try store.keepFetched(table, rowKey: rowKey, serverRow: serverRow, now: seconds)
            return CachedRead(value: serverRow, fromCache: false, stale: false)
        } catch let error as ClientError where error.kind == .offline || error.kind == .transient {
            guard let local else { throw error }
            return CachedRead(value: local.row, fromCache: true, stale: true)
        }
    }

    /// The result of RPC `function` with `arguments` (a JSON object) from key-value cache `cache` (marked used), else
    /// called on the server and stored there; the cache's `leastRecentlyUsed` rule evicts past its size. For pure
    /// functions only (LangMatcher's `translate`).
    public func cachedCall(_ function: String, arguments: JSONValue, cache: String) async throws -> CachedRead {
        guard case .object(let pairs) = arguments else { throw ClientError(.local, "arguments must be a JSON object") }
        let key = function + " " + JSONValue.object(pairs.sorted { $0.key < $1.key }).jsonText
        let seconds = now() / 1_000_000
        if let text = try store.cachedValue(cache, key: key, now: seconds), let value = try? JSONParser.parse(text) {
            return CachedRead(value: value, fromCache: true, stale: false)
        }
        let value = try await withRetries { token in try await self.api.rpc(function, arguments: arguments, token: token) }
        try store.cache(value.jsonText, in: cache, key: key, now: seconds)
        return CachedRead(value: value, fromCache: false, stale: false)
    }
}
