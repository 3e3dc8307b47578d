package import CaravanCore
import CaravanSQL
package import Logging
import NIOCore
import NIOPosix
import PostgresNIO
package import ServiceLifecycle
import Synchronization

/// The PostgreSQL storage adapter: a `PostgresClient` pool (one per server of a multi-host URL, `PrimaryHosts`,
/// of which the chosen primary's serves). A write transaction holds one leased connection inside
/// BEGIN … COMMIT and runs its (async) body on that connection's event loop.
///
/// Lifecycle: `init` only stores values. `run()` runs the connection pool until the task is cancelled or a
/// graceful shutdown: the server runs the store as a `Service` of its `ServiceGroup` (first, so that it stops
/// last). Short-lived commands and tests call `start()` / `shutdown()`, or lend a running store with
/// `withRunning(_:)`.
package final class PostgresStore: Store, Service {
    package var dialect: SQLDialect { .postgres }
    package let configuration: PostgresStoreConfiguration
    /// The primary's pool (or pools, one per server the URL names) and which server is the primary.
    let primaryHosts: PrimaryHosts
    let logger: Logger
    private let runner = Mutex<Task<Void, Never>?>(nil)
    private let poolMetrics = Mutex<DatabasePoolMetrics?>(nil)
    /// How far the change log is settled, as this store has observed it (`PostgresChangeLog`).
    let horizon = ChangeLogHorizon()
    /// The deadlines and closed connections of the requests holding or awaiting a connection.
    private let leaseWatch = LeaseWatch()
    /// The statement shapes that run prepared (nil when the configuration turns them off).
    let preparedStatements: PreparedStatements?
    /// Tells change-log readers, here and on other instances, about committed write transactions.
    let announcer: CommitAnnouncer
    /// One executor per event loop of the pool, made once: a read or a write transaction runs on the loop of the
    /// connection it holds (`onLoop(of:_:)`).
    private let loopExecutors: [ObjectIdentifier: EventLoopExecutor]
    /// The read replicas (`configuration.readReplicas`), whose pools run with this store's; nil without any.
    let readReplicas: ReadReplicas?

    /// The most change-log entries one append statement carries (tests: a transaction of more is sent in parts).
    package static var changeBatchLimit: Int { PostgresTransaction.batchLimit }

    /// How many statement shapes have a prepared name so far (diagnostics and tests).
    package var preparedStatementShapes: Int { preparedStatements?.count ?? 0 }

    /// Records the pool's figures from now on (see `DatabasePoolMetrics`).
    package func record(_ metrics: DatabasePoolMetrics) {
        poolMetrics.withLock { $0 = metrics }
    }

    /// The advisory lock key migrations hold, so that instances starting together apply them once.
    static let migrationLock: Int64 = 0x4361_7261_7661_6E01

    /// `clock` bounds how long a read carrying a consistency token waits for a read replica (`ReadReplicaSettings`).
    package init(configuration: PostgresStoreConfiguration, logger: Logger = Logger(label: "caravan.postgres"),
                 clock: ReplicaWaitClock = ReplicaWaitClock(ContinuousClock())) {
        self.configuration = configuration
        self.logger = logger
        let loops = SpreadEventLoopGroup(PostgresClient.defaultEventLoopGroup)
        self.primaryHosts = PrimaryHosts(configuration, eventLoopGroup: loops, logger: logger)
        self.loopExecutors = Dictionary(uniqueKeysWithValues: loops.makeIterator().map { (ObjectIdentifier($0), EventLoopExecutor($0)) })
        self.preparedStatements = configuration.preparesStatements ? PreparedStatements() : nil
        self.announcer = CommitAnnouncer(interval: configuration.commitAnnouncementInterval)
        self.readReplicas = configuration.readReplicas.isEmpty ? nil
            : ReadReplicas(configuration.readReplicas, settings: configuration.readReplicaSettings, clock: clock, logger: logger)
    }

    deinit {
        // A store dropped without `shutdown()` still releases its connections.
        runner.withLock { $0?.cancel() }
    }

    /// Runs the connection pool until cancelled or a graceful shutdown (requests made before it runs wait for
    /// it).
    package func run() async throws {
        let runPool = self.runPool
        await cancelWhenGracefulShutdown { await runPool() }
    }

    /// Starts `run()` in a task owned by the store, and returns once that task runs. Idempotent.
    package func start() async {
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            runner.withLock { task in
                guard task == nil else { return started.resume() }
                let runPool = self.runPool
                task = Task {
                    started.resume()
                    await runPool()
                }
            }
        }
    }

    /// `runPool` on this store's parts, holding no reference to the store (a dropped store still deinitializes).
    private var runPool: @Sendable () async -> Void {
        let replicaPools = readReplicas?.replicas.map(\.store.runPool) ?? []
        return { [primaryHosts, leaseWatch, announcer, logger, configuration] in
            await Self.runPool(primaryHosts, leaseWatch, announcer, logger, warm: min(configuration.minimumConnections, configuration.maximumConnections),
                               replicaPools: replicaPools)
        }
    }

    /// Opens `count` connections at once (each held briefly, so that none is reused for another), for a warm pool:
    /// postgres-nio's own minimum is not used (see `PostgresStoreConfiguration.clientConfiguration`). A failure (the
    /// database not up yet) is logged; connections then open on demand.
    private static func warmUp(_ client: PostgresClient, count: Int, logger: Logger) async {
        guard count > 0 else { return }
        do {
            try await withThrowingDiscardingTaskGroup { group in
                for _ in 0..<count {
                    group.addTask {
                        try await client.withConnection { connection in
                            _ = try await Self.answerOrClosed(connection.query("SELECT pg_sleep(0.2)", logger: logger), on: connection)
                        }
                    }
                }
            }
        } catch {
            logger.info("the pool's connections were not all opened at start; they open on demand", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// The connection pool, the watch over its leases and the commit announcements, until cancelled. The pool stops
    /// last: the announcer may be waiting for one of its connections, and a lease request still waiting when the pool
    /// stops is never answered (the announcer, and with it the store's shutdown, would hang).
    private static func runPool(_ hosts: PrimaryHosts, _ leaseWatch: LeaseWatch, _ announcer: CommitAnnouncer, _ logger: Logger, warm: Int,
                                replicaPools: [@Sendable () async -> Void]) async {
        let pools = hosts.pools.map { client in Task { await client.run() } }
        await withDiscardingTaskGroup { group in
            for replicaPool in replicaPools { group.addTask { await replicaPool() } }
            group.addTask { await hosts.run(logger: logger) }
            group.addTask {
                guard warm > 0, let primary = try? await hosts.primary() else { return }
                await warmUp(hosts.pools[primary.index], count: warm, logger: logger)
            }
            group.addTask { await leaseWatch.run() }
            group.addTask {
                await announcer.run(logger: logger) { seq in
                    try await hosts.withConnection(LeaseState()) { connection in
                        _ = try await Self.answerOrClosed(connection.query(PostgresChangeLog.announce(seq).query, logger: logger), on: connection)
                    }
                }
            }
            // The group ends when its children do, on this task's cancellation (shutdown); only then the pools.
        }
        for pool in pools { pool.cancel() }
        for pool in pools { await pool.value }
    }

    /// Waits for `answer`, or for `connection` to close first: postgres-nio does not always answer a statement sent on
    /// a connection the server is closing, and the announcer must neither hang there nor hold the store's shutdown.
    @discardableResult
    static func answerOrClosed<T: Sendable>(_ answer: EventLoopFuture<T>, on connection: PostgresConnection) async throws -> T {
        let closed = connection.closeFuture
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let waiting = Mutex<CheckedContinuation<T, any Error>?>(continuation)
            let resume: @Sendable (Result<T, any Error>) -> Void = { outcome in
                waiting.withLock { pending -> CheckedContinuation<T, any Error>? in
                    defer { pending = nil }
                    return pending
                }?.resume(with: outcome)
            }
            answer.whenComplete { resume($0) }
            closed.whenComplete { _ in resume(.failure(ConnectionClosed())) }
        }
    }

    /// The last `seq` of each write transaction this store commits from now on (the change listener's wake-ups for
    /// this instance's own writes; other instances' come by NOTIFY).
    func localCommits() -> AsyncStream<Int64> {
        announcer.localCommits()
    }

    /// Stops the pool started by `start()` (open connections close).
    package func shutdown() async {
        let task = runner.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// Lends a started store to `body`, shutting it down afterwards whatever happens.
    package static func withRunning<T: Sendable>(_ configuration: PostgresStoreConfiguration, logger: Logger = Logger(label: "caravan.postgres"),
                                                _ body: (PostgresStore) async throws -> T) async throws -> T {
        let store = PostgresStore(configuration: configuration, logger: logger)
        await store.start()
        do {
            let result = try await body(store)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// Runs `body` on a leased connection, translating errors.
    ///
    /// Waiting for the connection is bounded by `configuration.connectionAcquireTimeout`: while PostgreSQL is
    /// down the pool keeps retrying in the background, and the caller gets `storageUnavailable` instead of
    /// waiting for it. Once `body` has its connection, only its own statements bound it — and the connection: a
    /// statement sent on a connection the server is closing is not always answered by postgres-nio, so a request
    /// whose connection has closed fails (after a second's grace for an answer already on its way).
    ///
    /// The store's `LeaseWatch` does both with one ticker for all requests (no timer per request), beside the
    /// task that leases and runs `body`.
    ///
    /// With several servers (`PrimaryHosts`), the connection comes from the chosen primary's pool; a request still
    /// waiting for one when another server is chosen moves there. A failure that a lost or demoted primary would
    /// explain has the choice checked again; a write a standby refused (25006, read-only) is `storageUnavailable` then.
    func withConnection<T: Sendable>(table: TableSchema? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let hosts = primaryHosts
        let timeout = configuration.connectionAcquireTimeout
        let lease = LeaseState()
        let wait = PoolWait(poolMetrics.withLock { $0 })
        defer { wait.end() }
        do {
            return try await withThrowingTaskGroup(of: LeaseRace<T>.self) { group in
                group.addTask {
                    .finished(try await hosts.withConnection(lease) { connection in
                        wait.leased()
                        defer { wait.released() }
                        return try await AbandonableBody.run(body, on: connection)
                    })
                }
                let leaseWatch = self.leaseWatch
                group.addTask {
                    switch try await leaseWatch.wait(for: lease, deadline: .now + timeout) {
                    case .timedOut: .timedOut
                    }
                }
                defer { group.cancelAll() }
                guard let outcome = try await group.next() else {
                    throw CaravanError(.internalFailure, "An internal error occurred", internalDetail: "connection lease race ended without a result")
                }
                switch outcome {
                case .finished(let value):
                    return value
                case .timedOut:
                    // cancelling the group withdraws the lease request
                    throw CaravanError(.storageUnavailable, "The database is temporarily unavailable",
                                       internalDetail: "no database connection within \(timeout)")
                }
            }
        } catch {
            let translated = PostgresErrors.translate(error, table: table)
            guard hosts.chooses, [.storageUnavailable, .readOnlyDatabase].contains(translated.code) else { throw translated }
            hosts.suspect()
            guard translated.code == .readOnlyDatabase else { throw translated }
            throw CaravanError(.storageUnavailable, "The database is temporarily unavailable",
                               internalDetail: "the server refused a write as read-only (a standby?); looking for the primary: \(translated.internalDetail ?? "")")
        }
    }

    // MARK: Migrations

    package func migrate(_ migrations: [Migration]) async throws -> [String] {
        let migrations = Migration.applyOrder(migrations)
        for migration in migrations where SQLSchema<PostgresSyntax>.sql(of: migration) == nil {
            throw CaravanError(.internalFailure, "migration has no PostgreSQL statements", internalDetail: migration.id)
        }
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.inTransaction(connection, logger: logger) {
                _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger).collect()
                _ = try await connection.query("""
                    CREATE TABLE IF NOT EXISTS "caravan_migrations" (
                      "seq" int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                      "id" text NOT NULL UNIQUE,
                      "applied_at" timestamptz NOT NULL DEFAULT now()
                    )
                    """, logger: logger).collect()
                let applied = Set(try await Self.appliedIdentifiers(connection, logger: logger))
                try Migration.checkApplicable(pending: migrations, applied: applied, dialect: .postgres)
                var appliedNow: [String] = []
                for migration in migrations where !applied.contains(migration.id) {
                    // Frozen DDL from the migration list (never user input), one statement at a time.
                    for statement in PostgresScript.statements(SQLSchema<PostgresSyntax>.sql(of: migration) ?? "") {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
                    }
                    _ = try await connection.query(#"INSERT INTO "caravan_migrations" ("id") VALUES (\#(migration.id))"#, logger: logger).collect()
                    appliedNow.append(migration.id)
                }
                return appliedNow
            }
        }
    }

    package func appliedMigrations() async throws -> [String] {
        let logger = self.logger
        return try await withConnection { connection in
            let exists = try await connection.query("SELECT to_regclass('caravan_migrations') IS NOT NULL", logger: logger).collect()
            guard try exists.first?.decode(Bool.self) == true else { return [] }
            return try await Self.appliedIdentifiers(connection, logger: logger)
        }
    }

    private static func appliedIdentifiers(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query(#"SELECT "id" FROM "caravan_migrations" ORDER BY "seq""#, logger: logger).collect().map { try $0.decode(String.self) }
    }

    /// BEGIN, `body`, COMMIT — or ROLLBACK when `body` throws.
    static func inTransaction<T>(_ connection: PostgresConnection, logger: Logger, begin: PostgresQuery = "BEGIN", _ body: () async throws -> T) async throws -> T {
        _ = try await connection.query(begin, logger: logger).collect()
        do {
            let result = try await body()
            _ = try await connection.query("COMMIT", logger: logger).collect()
            return result
        } catch {
            do {
                _ = try await connection.query("ROLLBACK", logger: logger).collect()
            } catch let rollbackError {
                // The connection is gone; the server ends the transaction with it. The original error is the news.
                logger.debug("rollback failed", metadata: ["error": "\(String(reflecting: rollbackError))"])
            }
            throw error
        }
    }

    // MARK: Reads

    package func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        let (select, count) = PostgresRead.compile(plan)
        let types = plan.outputs.map(\.column.type)
        let logger = self.logger
        let statements = preparedStatements
        return try await withConnection(table: plan.table) { connection in
            // On the connection's event loop, as a write transaction: each answer resumes the read where it arrives.
            try await self.onLoop(of: connection) { _ in
                guard let count else {
                    let rows = try await PostgresRows.collect(select, on: connection, logger: logger, types: types, statements: statements)
                    return ReadResult(outputs: plan.outputs, rows: rows, totalCount: nil)
                }
                // The page and the total come from one snapshot.
                return try await Self.inTransaction(connection, logger: logger, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                    let rows = try await PostgresRows.collect(select, on: connection, logger: logger, types: types, statements: statements)
                    let total = try await PostgresRows.count(try await connection.query(count.query, logger: logger))
                    return ReadResult(outputs: plan.outputs, rows: rows, totalCount: total)
                }
            }
        }
    }

    package func changes(after seq: Int64, limit: Int) async throws -> [Change] {
        let logger = self.logger
        return try await withConnection { connection in
            let settled = try await self.settle(on: connection)
            guard settled > seq else { return [] }
            let query = PostgresChangeLog.changes(after: seq, through: settled, limit: limit).query
            return try await Self.decodeChanges(try await connection.query(query, logger: logger))
        }
    }

    /// The change log's closed mark (0 when it is empty): every entry up to it is committed or will never exist,
    /// and no transaction has entries on both sides of it.
    package func latestChangeSeq() async throws -> Int64 {
        try await withConnection { connection in try await self.settle(on: connection) }
    }

    /// Whether entries beyond the closed mark were visible at the last look: a reader should look again soon,
    /// even without a notification (a rolled-back transaction sends none).
    var changeLogIsHoldingBack: Bool { horizon.isHoldingBack }

    /// Visible entries read per observation of the log.
    static let observationWindow = 1000

    /// Observes the log on `connection` and returns the closed mark after it (`ChangeLogHorizon`): readers deliver
    /// up to it. One statement, and more only when more than `observationWindow` entries wait above the mark.
    func settle(on connection: PostgresConnection) async throws -> Int64 {
        let window = Self.observationWindow
        let began = horizon.begin()
        let query = PostgresChangeLog.observation(after: horizon.closed, limit: window).query
        guard let row = try await connection.query(query, logger: logger).collect().first else {
            throw CaravanError(.internalFailure, "An internal error occurred", internalDetail: "the change-log observation returned no row")
        }
        let (highest, seqs, transactions, running) = try row.decode((Int64, [Int64], [Int64], [Int64]).self)
        let observed = horizon.observe(ChangeLogHorizon.Observation(
            highest: highest,
            visible: zip(seqs, transactions).map { ChangeLogHorizon.Entry(seq: $0, transaction: $1) },
            isTruncated: seqs.count >= window, running: Set(running)), began: began)
        if let closed = observed.closed { return closed }
        var mark = observed.settled
        while let first = try await connection.query(PostgresChangeLog.straddling(mark).query, logger: logger).collect().first?.decode(Int64?.self) {
            mark = first - 1
        }
        return horizon.close(to: mark)
    }

    static func decodeChanges(_ rows: PostgresRowSequence) async throws -> [Change] {
        var changes: [Change] = []
        for try await row in rows {
            let (seq, table, key, op, record, oldRecord, committedAt, actor, transaction) =
                try row.decode((Int64, String, String, String, String?, String?, String, String, Int64?).self)
            changes.append(try change(seq: seq, table: table, primaryKey: key, op: op, record: record, oldRecord: oldRecord,
                                      committedAt: committedAt, actor: actor, transaction: transaction))
        }
        return changes
    }

    // MARK: Writes

    package func transaction<T: Sendable>(_ access: AccessContext, rollback: Bool, grant: TransactionGrant, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> (T, [Change]) {
        let logger = self.logger
        let statements = preparedStatements
        let (result, changes) = try await withConnection { connection in
            // The body runs on the connection's event loop: each answer resumes it there, with no thread switch.
            try await self.onLoop(of: connection) { executor in
                var attempt = 1
                while true {
                    do {
                        return try await Self.runTransaction(on: PostgresSession(connection: connection, executor: executor, logger: logger, statements: statements),
                                                             logger: logger, access: access, rollback: rollback, body)
                    } catch let conflict as TransactionConflict {
                        guard attempt < Self.conflictAttempts else { throw conflict.error }
                        logger.debug("transaction conflicted; retrying", metadata: ["attempt": "\(attempt)", "error": "\(conflict.error.internalDetail ?? "")"])
                        attempt += 1
                        try await Task.sleep(for: .milliseconds(Int.random(in: 1...(4 * attempt))))
                    }
                }
            }
        }
        if let last = changes.last { announcer.committed(last.seq) }
        return (result, changes)
    }

    /// Runs `body` on the event loop of `connection` (its task prefers that loop's executor, which it is given).
    private func onLoop<T: Sendable>(of connection: PostgresConnection, _ body: (EventLoopExecutor) async throws -> T) async throws -> T {
        let executor = loopExecutors[ObjectIdentifier(connection.eventLoop)] ?? EventLoopExecutor(connection.eventLoop)
        return try await withTaskExecutorPreference(executor) { try await body(executor) }
    }

    /// How many times a transaction runs when it keeps failing with a serialization failure or a deadlock.
    static let conflictAttempts = 5

    /// BEGIN, the body, COMMIT (or ROLLBACK). A serialization failure or a deadlock comes back as
    /// `TransactionConflict`, after the rollback: the whole body may run again. The commit is announced after it
    /// (`CommitAnnouncer`), never inside it.
    private static func runTransaction<T>(on session: PostgresSession, logger: Logger, access: AccessContext, rollback: Bool,
                                          _ body: (any StoreTransaction) async throws -> T) async throws -> (T, [Change]) {
        session.begin()
        let driver = PostgresTransaction(session: session)
        let transaction = PipelineTransaction(driver: driver, access: access)
        do {
            let result = try await body(transaction)
            // The held-back change-log entries go right before COMMIT, whose answer comes after theirs: a failed
            // append fails the COMMIT here (it rolled back).
            if !rollback { try await driver.sendChanges() }
            try await session.execute(rollback ? "ROLLBACK" : "COMMIT")
            return (result, rollback ? [] : try await transaction.loggedChanges())
        } catch {
            if !session.isBroken {
                do {
                    try await session.execute("ROLLBACK")
                } catch let rollbackError {
                    logger.debug("rollback failed", metadata: ["error": "\(rollbackError)"])
                }
            }
            if session.hasConflicted, !session.isBroken, let error = error as? CaravanError { throw TransactionConflict(error: error) }
            throw error
        }
    }
}

/// A transaction ended by a serialization failure or a deadlock (SQLSTATE 40001, 40P01), rolled back: running
/// it again is safe and usually succeeds.
private struct TransactionConflict: Error {
    /// What the client gets when the attempts run out.
    let error: CaravanError
}

extension PostgresStore {
    /// Runs one SQL statement outside the write pipeline and returns its cells, which must be text (cast them
    /// with `::text`). Tests and tools only: never pass it user input.
    package func unsafeRows(_ sql: String) async throws -> [[String?]] {
        let logger = self.logger
        return try await withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect().map { row in
                try row.map { cell in cell.bytes == nil ? nil : try cell.decode(String.self) }
            }
        }
    }
}

/// A request's body on its leased connection, in a task of its own that the request can stop waiting for once the
/// connection has closed under it. postgres-nio does not always answer a statement sent on a connection the server
/// is closing, nor end that wait on cancellation: a body awaiting one would hold its request — and the task group
/// of `withConnection`, which waits for every child — for ever (seen: every request of a server stuck after a
/// PostgreSQL restart under load, `ConnectionFailureTests.aWarmPoolKeepsServingAcrossRestarts`). When the request
/// is cancelled (`LeaseWatch` does so once the connection has been closed for its grace period) and the connection
/// is closed, the wait ends with `ConnectionClosed`; the abandoned body ends whenever its statement does, on a
/// connection nobody else can be lent. While the connection is open, a cancelled request still waits for its
/// body, so that a connection is never handed back mid-transaction.
enum AbandonableBody {
    static func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T, on connection: PostgresConnection) async throws -> T {
        let outcome = Outcome<T>()
        let running = Task {
            do {
                outcome.end(.success(try await body(connection)))
            } catch {
                outcome.end(.failure(error))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { outcome.wait(with: $0) }
        } onCancel: {
            running.cancel()
            if connection.isClosed { outcome.end(.failure(ConnectionClosed())) }
        }
    }

    /// The first result wins; the waiter is resumed once, whether it registers before or after it.
    private final class Outcome<T: Sendable>: Sendable {
        private enum State {
            case pending(CheckedContinuation<T, any Error>?)
            case ended(Result<T, any Error>)
            case delivered
        }

        private let state = Mutex(State.pending(nil))

        func wait(with continuation: CheckedContinuation<T, any Error>) {
            let ready = state.withLock { state -> Result<T, any Error>? in
                switch state {
                case .ended(let result):
                    state = .delivered
                    return result
                case .pending, .delivered:
                    state = .pending(continuation)
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }

        func end(_ result: Result<T, any Error>) {
            let waiting = state.withLock { state -> CheckedContinuation<T, any Error>? in
                switch state {
                case .pending(let continuation?):
                    state = .delivered
                    return continuation
                case .pending(nil):
                    state = .ended(result)
                    return nil
                case .ended, .delivered:
                    return nil
                }
            }
            waiting?.resume(with: result)
        }
    }
}

/// Which of the two racers of `withConnection` finished first.
private enum LeaseRace<T: Sendable>: Sendable {
    case finished(T)
    case timedOut
}
