/// A position in the primary database's write-ahead log, handed to clients after a write (`X-Caravan-Consistency`)
/// so that their next read sees that write even when a read replica serves it. Opaque on the wire: `c1-` and 16
/// hexadecimal digits; clients pass it back unchanged.
package struct ConsistencyToken: Sendable, Hashable, Comparable {
    /// The WAL position (PostgreSQL's `pg_lsn` as a byte offset).
    package let position: UInt64

    package init(position: UInt64) {
        self.position = position
    }

    /// Reads a token as `header` sent it; nil when it is not one.
    package init?(header: String) {
        guard header.hasPrefix(Self.prefix), header.utf8.count == Self.prefix.utf8.count + 16,
              let position = UInt64(header.dropFirst(Self.prefix.count), radix: 16) else { return nil }
        self.position = position
    }

    /// The token as sent in the response header.
    package var header: String {
        let digits = String(position, radix: 16)
        return Self.prefix + String(repeating: "0", count: 16 - digits.count) + digits
    }

    package static func < (lhs: ConsistencyToken, rhs: ConsistencyToken) -> Bool { lhs.position < rhs.position }

    private static let prefix = "c1-"

    /// The HTTP header that carries a token: on write answers, and on reads that must see those writes.
    package static let headerName = "X-Caravan-Consistency"
}

/// Where a read may run.
package enum ReadRouting: Sendable, Hashable {
    /// On the primary database (writes, the change log, anything that must see the latest commit).
    case primary
    /// On a healthy read replica when there is one; with a token, only on one that has replayed it (else the primary).
    case replica(after: ConsistencyToken?)
}

/// A store that may serve reads from read replicas (PostgreSQL with `read_replicas`).
package protocol ReplicatedStore: Store {
    /// Whether any read replica is configured (write answers then carry a consistency token).
    var hasReadReplicas: Bool { get }

    /// Runs a read plan where `routing` allows.
    func fetch(_ plan: ReadPlan, routing: ReadRouting) async throws -> ReadResult

    /// Runs `body` as `access.identity` in a transaction that is always rolled back (a read-only RPC function's
    /// call), where `routing` allows.
    func readOnly<T: Sendable>(_ access: AccessContext, routing: ReadRouting,
                               _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T

    /// The primary's WAL position now: every write that has committed is at or before it.
    func consistencyToken() async throws -> ConsistencyToken
}

extension Store {
    /// Runs a read plan where `routing` allows: on a `ReplicatedStore`, possibly on a replica; else on this store.
    package func routedFetch(_ plan: ReadPlan, routing: ReadRouting) async throws -> ReadResult {
        if let replicated = self as? any ReplicatedStore { return try await replicated.fetch(plan, routing: routing) }
        return try await fetch(plan)
    }

    /// `readOnly(_:_:)` where `routing` allows: on a `ReplicatedStore`, possibly on a replica; else on this store.
    package func routedReadOnly<T: Sendable>(_ access: AccessContext, routing: ReadRouting,
                                            _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        if let replicated = self as? any ReplicatedStore { return try await replicated.readOnly(access, routing: routing, body) }
        return try await readOnly(access, body)
    }

    /// Where reads that must see everything committed so far may run: with read replicas, on one that has replayed
    /// the primary's WAL position as of now (`ReadRouting.replica(after:)` with a fresh token); else the primary.
    /// Costs one statement on the primary. (A sync pull's snapshot pages, realtime's membership reads.)
    package func currentRouting() async throws -> ReadRouting {
        guard let replicated = self as? any ReplicatedStore, replicated.hasReadReplicas else { return .primary }
        return .replica(after: try await replicated.consistencyToken())
    }
}

/// How a store uses its read replicas (PostgreSQL) (`read_replica_*` settings).
package struct ReadReplicaSettings: Sendable, Hashable {
    /// A replica whose replay is further behind the primary than this is taken out until it catches up.
    package var maxLag: Duration = .seconds(5)
    /// How often the checker asks every replica how far it has replayed.
    package var checkInterval: Duration = .seconds(1)
    /// How long a read carrying a consistency token waits for a replica to replay it before the primary serves it.
    package var tokenWait: Duration = .milliseconds(200)

    package init() {}
}
