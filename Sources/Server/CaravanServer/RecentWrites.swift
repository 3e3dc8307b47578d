package import CaravanCore
import Synchronization

/// The consistency token of each caller's latest write through this instance, so that a caller that never sends the
/// token back — supabase-js, supabase-py, any client but Caravan's SDK — still reads its own writes when reads go to
/// replicas. A caller is a signed-in user (the token's `sub`), else the API key's role (every anon or service-role
/// caller without a user shares one entry: stricter than needed, never weaker). A read without a token (or with an
/// older one) waits for the caller's latest; an entry is forgotten after `retention`, by when every replica in service
/// has replayed it (their lag is bounded by `read_replica_max_lag`). In memory, per instance: across instances only
/// the token carries the guarantee.
package final class RecentWrites: Sendable {
    package static let defaultRetention: Duration = .seconds(30)
    package static let defaultCapacity = 100_000

    package let retention: Duration
    package let capacity: Int
    private let clock: WallClock
    private let entries = Mutex([String: Entry]())

    private struct Entry {
        var token: ConsistencyToken
        /// Microseconds since 1970, from `clock`.
        var time: Int64
    }

    package init(retention: Duration = RecentWrites.defaultRetention, capacity: Int = RecentWrites.defaultCapacity, clock: WallClock = .system) {
        self.retention = retention
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Remembers `token` as `identity`'s latest write (a later token never gives way to an earlier one).
    package func record(_ token: ConsistencyToken, by identity: Identity) {
        let now = clock.microseconds
        let key = Self.key(identity)
        entries.withLock { entries in
            let token = max(token, entries[key]?.token ?? token)
            entries[key] = Entry(token: token, time: now)
            if entries.count > capacity { evict(&entries, now: now) }
        }
    }

    /// The token of `identity`'s latest write within `retention`, if any.
    package func latest(of identity: Identity) -> ConsistencyToken? {
        let now = clock.microseconds
        return entries.withLock { entries in
            guard let entry = entries[Self.key(identity)], now - entry.time < retentionMicroseconds else { return nil }
            return entry.token
        }
    }

    var count: Int { entries.withLock { $0.count } }

    private var retentionMicroseconds: Int64 {
        let (seconds, attoseconds) = retention.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Drops the expired entries; when all are recent, all but the newest half of `capacity` (their callers' reads may
    /// then see a replica up to its lag bound behind, as a client without a token would).
    private func evict(_ entries: inout [String: Entry], now: Int64) {
        entries = entries.filter { now - $0.value.time < retentionMicroseconds }
        guard entries.count > capacity else { return }
        let newest = entries.sorted { $0.value.time > $1.value.time }.prefix(max(1, capacity / 2))
        entries = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }

    private static func key(_ identity: Identity) -> String {
        if let user = identity.userID { return "user " + user }
        return "role " + identity.role.rawValue
    }
}
