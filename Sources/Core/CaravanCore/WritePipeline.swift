import Synchronization

/// The kind of a change.
public enum ChangeOperation: String, Sendable, Hashable {
    case insert, update, delete
}

/// One committed change: a row of the change log.
public struct Change: Sendable, Hashable {
    public let seq: Int64
    public let table: String
    /// The primary key as a JSON object (`{"id":"…"}`).
    public let primaryKey: String
    public let operation: ChangeOperation
    /// The row after the change, as JSON text (nil for deletes).
    public let record: String?
    /// The row before the change, as JSON text (nil for inserts).
    public let oldRecord: String?
    public let committedAt: String
    /// The user id, or the role when there is none.
    public let actor: String
    /// Which write transaction logged it: the `seq` of that transaction's first entry (entries logged before
    /// migration system-0005 each count as their own transaction).
    public let transaction: Int64

    public init(seq: Int64, table: String, primaryKey: String, operation: ChangeOperation, record: String?, oldRecord: String?, committedAt: String, actor: String,
                transaction: Int64? = nil) {
        self.seq = seq
        self.transaction = transaction ?? seq
        self.table = table
        self.primaryKey = primaryKey
        self.operation = operation
        self.record = record
        self.oldRecord = oldRecord
        self.committedAt = committedAt
        self.actor = actor
    }
}

/// What a write statement did: the affected rows (all columns, in table order, as stored after the write).
public struct WriteOutcome: Sendable {
    public var rows: [[Value]] = []
    public var inserted = 0
    public var updated = 0
    public var deleted = 0

    public init() {}
}

/// `Prefer: resolution=…` with `on_conflict`.
public struct ConflictTarget: Sendable, Hashable {
    public enum Resolution: Sendable, Hashable {
        /// `merge-duplicates`: ON CONFLICT DO UPDATE on the sent columns.
        case merge
        /// `ignore-duplicates`: ON CONFLICT DO NOTHING.
        case ignore
    }

    public let columns: [String]
    public let resolution: Resolution

    public init(columns: [String], resolution: Resolution) {
        self.columns = columns
        self.resolution = resolution
    }
}

/// Who writes, and under which rules: the identity, every policy and the catalog to resolve them.
public struct AccessContext: Sendable {
    public let identity: Identity
    public let policies: PolicySet
    public let catalog: Catalog

    public init(identity: Identity, policies: PolicySet, catalog: Catalog) {
        self.identity = identity
        self.policies = policies
        self.catalog = catalog
    }

    /// The rule ANDed into reads of `table`.
    public func readRule(_ table: TableSchema) throws(CaravanError) -> BoundPredicate {
        try policies.rule(.select, on: table, for: identity, catalog: catalog)
    }

    /// The error Postgres gives a write that policies refuse.
    public func policyViolation(_ table: TableSchema) -> CaravanError {
        CaravanError(.permissionDenied, "new row violates row-level security policy for table \"\(table.name)\"")
    }
}

/// Operations inside one transaction. Every write — REST, RPC, importers — goes through these: validate against
/// the schema, check policies in SQL, apply, append to the change log, all in the same transaction.
public protocol StoreTransaction {
    var access: AccessContext { get }

    /// A read under the caller's select policy (the plan's filter must already include it).
    func fetch(_ plan: ReadPlan) async throws -> ReadResult

    /// Inserts rows (or upserts on `conflict`). Rows must pass the insert policy's check (update's for merged rows).
    func insert(_ rows: [RowValues], into table: TableSchema, conflict: ConflictTarget?) async throws -> WriteOutcome

    /// Updates the rows matching `filter` that the update policy lets the caller see; the new rows must pass its check.
    func update(_ table: TableSchema, set values: RowValues, where filter: BoundPredicate) async throws -> WriteOutcome

    /// Deletes the rows matching `filter` that the delete policy lets the caller see.
    func delete(from table: TableSchema, where filter: BoundPredicate) async throws -> WriteOutcome

    /// Upserts each row on its own (importers): a refused row is rolled back alone and reported.
    func upsertEach(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String]) async throws -> [RowOutcome]

    /// The best rows by the table's search indexes (full text, similarity or distance), best first. The search's
    /// filter must include the caller's read policy. Throws `unsupportedOperator` when the table declares no such index.
    func rankedFetch(_ search: RankedSearch) async throws -> [RankedRow]

    /// Inserts a row of an internal bookkeeping table (exposure `.secret`: never change-logged, never reachable by
    /// a client) in this transaction, without policies: the sync push verdicts. A duplicate key is `uniqueViolation`.
    func insertBookkeeping(_ row: RowValues, into table: TableSchema) async throws

    /// Runs `body` as the service role in this same transaction (policies off; everything still validated,
    /// change-logged and published): what an RPC or a write hook does on the server's behalf, such as recording a
    /// match the caller may not write directly.
    func asServiceRole<T>(_ body: (any StoreTransaction) async throws -> T) async throws -> T

    /// Waits until no other transaction holds `key`, then holds it until this transaction ends. Write transactions
    /// run concurrently (PostgreSQL), so a function that reads, decides and then writes on what it read — and
    /// whose rows to lock may not exist yet — calls this first with a key naming what it decides on (such as a
    /// pair of users): two such transactions on one key then run one after the other, each reading what the
    /// other committed. Keys are app-chosen text; SQLite's single writer serializes every write transaction anyway.
    func serialize(on key: String) async throws

    /// The `seq` of the last change-log entry this transaction appended so far, or nil.
    var lastLoggedSeq: Int64? { get async }

    /// The highest `seq` of the change log as this transaction sees it (0 for an empty log).
    func changeLogHead() async throws -> Int64
}

extension StoreTransaction {
    public func asServiceRole<T>(_ body: (any StoreTransaction) async throws -> T) async throws -> T {
        guard access.identity.role == .serviceRole else {
            throw CaravanError(.internalFailure, "this transaction cannot act as the service role")
        }
        return try await body(self)
    }

    public func insertBookkeeping(_ row: RowValues, into table: TableSchema) async throws {
        throw CaravanError(.internalFailure, "this transaction cannot write bookkeeping rows")
    }

    public var lastLoggedSeq: Int64? { get async { nil } }

    public func changeLogHead() async throws -> Int64 {
        throw CaravanError(.internalFailure, "this transaction cannot read the change log")
    }
}

/// Fans committed changes out to in-process subscribers (realtime plugs in here).
public final class ChangePublisher: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<Change>.Continuation]>([:])
    private let nextID = Mutex(0)

    public init() {}

    /// A stream of every change committed after this call, in commit order.
    public func subscribe() -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = nextID.withLock { value -> Int in
            value += 1
            return value
        }
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    public func publish(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        let current = subscribers.withLock { Array($0.values) }
        for continuation in current {
            for change in changes { continuation.yield(change) }
        }
    }
}

/// The one write pipeline: a transaction as `access.identity`, then, after commit, the changes are published.
///
/// Who publishes: with `.afterCommit` (one process on SQLite) the pipeline hands each transaction's changes to
/// `publisher` right after its commit. With `.byChangeLog` (PostgreSQL, one or many instances) the pipeline
/// publishes nothing itself: a change-log listener (`ChangeListener` in CaravanPostgres) reads every committed
/// change — this instance's and the others' — in `seq` order and feeds `publisher`, so each change reaches the
/// subscribers exactly once whichever instance wrote it.
public struct WritePipeline: Sendable {
    /// Where committed changes come from.
    public enum Publication: Sendable, Hashable {
        /// The pipeline publishes each transaction's changes after it commits.
        case afterCommit
        /// A change-log listener publishes every committed change; the pipeline publishes nothing.
        case byChangeLog
    }

    public let store: any Store
    /// The stream subscribers (realtime) read, whoever feeds it.
    public let publisher: ChangePublisher
    public let publication: Publication

    /// Transaction counts and durations (nil: none recorded).
    public let metrics: WriteMetrics?

    public init(store: any Store, publisher: ChangePublisher, publication: Publication = .afterCommit, metrics: WriteMetrics? = nil) {
        self.store = store
        self.publisher = publisher
        self.publication = publication
        self.metrics = metrics
    }

    /// Runs `body` in one transaction. With `rollback`, nothing is committed or published (`Prefer: tx=rollback`).
    public func run<T: Sendable>(_ access: AccessContext, rollback: Bool = false, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        let store = self.store
        let (result, changes) = if let metrics {
            try await metrics.measure(rollback: rollback) { try await store.transaction(access, rollback: rollback, grant: TransactionGrant(), body) }
        } else {
            try await store.transaction(access, rollback: rollback, grant: TransactionGrant(), body)
        }
        if !rollback, publication == .afterCommit { publisher.publish(changes) }
        return result
    }
}

extension WritePipeline {
    /// Runs `body` in a transaction that is always rolled back — a read-only RPC function's call — where `routing`
    /// allows (a read replica of a `ReplicatedStore`); nothing is published. Measured as `run` measures.
    package func readOnly<T: Sendable>(_ access: AccessContext, routing: ReadRouting,
                                       _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        let store = self.store
        guard let metrics else { return try await store.routedReadOnly(access, routing: routing, body) }
        return try await metrics.measure(rollback: true) { (try await store.routedReadOnly(access, routing: routing, body), []) }.0
    }

    /// Runs the `beforeRead` hooks of `tables` (each in its own transaction, as the service role), so the read that
    /// follows finds their work committed. A name without a hook, or no table at all, is passed over: the read itself
    /// reports unknown tables.
    public func prepareRead(of tables: [String], catalog: Catalog) async throws {
        for table in tables {
            guard let hook = catalog.behaviour(of: table)?.beforeRead else { continue }
            try await run(catalog.access(for: .serviceRole)) { transaction in try await hook(transaction) }
        }
    }
}
