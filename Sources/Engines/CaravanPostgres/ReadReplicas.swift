package import CaravanCore
import Logging
import PostgresNIO
package import ServiceLifecycle
import Synchronization

/// The read replicas of a PostgreSQL store (each a pool of its own) and what the checker last saw of each. A replica
/// starts out of service: it serves reads once a check has found it replaying within `maxLag` of the primary.
final class ReadReplicas: Sendable {
    struct Replica: Sendable {
        let store: PostgresStore
        /// `host:port/database`, never the URL (it may hold a password).
        let name: String
    }

    /// What the last check (or read) found.
    struct Health: Sendable {
        var inService = false
        /// The WAL position it had replayed, as last seen.
        var replayed: UInt64 = 0
    }

    let replicas: [Replica]
    let settings: ReadReplicaSettings
    private let health: Mutex<[Health]>
    private let turn = Atomic<Int>(0)
    private let clock: ReplicaWaitClock
    private let logger: Logger

    init(_ configurations: [PostgresStoreConfiguration], settings: ReadReplicaSettings, clock: ReplicaWaitClock, logger: Logger) {
        replicas = configurations.map { configuration in
            Replica(store: PostgresStore(configuration: configuration, logger: logger),
                    name: "\(configuration.host):\(configuration.port)/\(configuration.database)")
        }
        self.settings = settings
        self.clock = clock
        self.logger = logger
        health = Mutex(Array(repeating: Health(), count: configurations.count))
    }

    /// How many replicas serve reads now.
    var inServiceCount: Int { health.withLock { $0.filter(\.inService).count } }

    /// Records a check's finding, logging a replica that leaves or rejoins service.
    func update(_ index: Int, inService: Bool, replayed: UInt64?, reason: @autoclosure () -> String) {
        let was = health.withLock { health -> Bool in
            let was = health[index].inService
            health[index].inService = inService
            if let replayed { health[index].replayed = max(health[index].replayed, replayed) }
            return was
        }
        guard was != inService else { return }
        if inService {
            logger.notice("read replica in service", metadata: ["replica": "\(replicas[index].name)"])
        } else {
            logger.warning("read replica taken out of service", metadata: ["replica": "\(replicas[index].name)", "reason": "\(reason())"])
        }
    }

    /// A replica in service for a read, taking turns; with `token`, one that has replayed it — waiting at most
    /// `settings.tokenWait` for one to — else nil (the primary serves the read).
    func choose(after token: ConsistencyToken?) async -> Int? {
        let serving = health.withLock { health in health.indices.filter { health[$0].inService }.map { ($0, health[$0].replayed) } }
        guard !serving.isEmpty else { return nil }
        let start = Int(UInt(bitPattern: turn.wrappingAdd(1, ordering: .relaxed).oldValue) % UInt(serving.count))
        let ordered = (0..<serving.count).map { serving[(start + $0) % serving.count] }
        guard let token else { return ordered[0].0 }
        if let caughtUp = ordered.first(where: { $0.1 >= token.position }) { return caughtUp.0 }
        return await waitForReplay(of: ordered[0].0, token: token)
    }

    /// Asks replica `index` how far it has replayed until it has replayed `token`, for at most `settings.tokenWait`.
    /// A replica that does not answer is left to the checker; the primary serves the read.
    private func waitForReplay(of index: Int, token: ConsistencyToken) async -> Int? {
        let elapsed = clock.stopwatch()
        while true {
            let replayed: UInt64
            do {
                replayed = try await replicas[index].store.replayPosition()
            } catch {
                logger.debug("a read replica did not say how far it has replayed; the primary serves the read",
                             metadata: ["replica": "\(replicas[index].name)", "error": "\(String(reflecting: error))"])
                return nil
            }
            health.withLock { $0[index].replayed = max($0[index].replayed, replayed) }
            if replayed >= token.position { return index }
            guard elapsed() < settings.tokenWait, (try? await clock.sleep(Self.replayPollInterval)) != nil, elapsed() < settings.tokenWait else {
                return nil
            }
        }
    }

    /// How often a read waiting for a token asks the replica again.
    static let replayPollInterval: Duration = .milliseconds(5)
}

/// The clock a read waiting for a replica measures its wait on.
package struct ReplicaWaitClock: Sendable {
    /// Starts a stopwatch: the returned function tells the time since.
    let stopwatch: @Sendable () -> @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void

    package init<C: Clock<Duration>>(_ clock: C) {
        stopwatch = {
            let start = clock.now
            return { start.duration(to: clock.now) }
        }
        sleep = { try await clock.sleep(for: $0) }
    }
}

extension PostgresStore: ReplicatedStore {
    package var hasReadReplicas: Bool { readReplicas != nil }

    /// How many read replicas serve reads now (diagnostics and tests).
    package var readReplicasInService: Int { readReplicas?.inServiceCount ?? 0 }

    /// Runs `plan` on a replica in service when `routing` allows (and, with a token, one that has replayed it); else
    /// on the primary (`routed`).
    package func fetch(_ plan: ReadPlan, routing: ReadRouting) async throws -> ReadResult {
        try await routed(routing) { store in try await store.fetch(plan) }
    }

    /// A read-only RPC function's rolled-back transaction, on a replica when `routing` allows (`routed`). PostgreSQL
    /// refuses a write there (25006); on the primary the rollback undoes it.
    package func readOnly<T: Sendable>(_ access: AccessContext, routing: ReadRouting,
                                       _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await routed(routing) { store in try await store.transaction(access, rollback: true, grant: TransactionGrant(), body).0 }
    }

    /// Runs `read` on a replica in service when `routing` allows (with a token, one that has replayed it), else on
    /// the primary. Only when the replica cannot serve it — unavailable (no connection, a timeout, a connection
    /// ended) or in a recovery conflict (SQLSTATE classes 08, 40, 53, 57: `storageUnavailable`) — the primary runs
    /// it again, and the replica is taken out until the checker finds it well. Any other error is the answer at once
    /// (a bad value, a regular expression PostgreSQL refuses, a policy's refusal: the primary would give the same).
    private func routed<T: Sendable>(_ routing: ReadRouting, _ read: (PostgresStore) async throws -> T) async throws -> T {
        guard case .replica(let token) = routing, let readReplicas, let index = await readReplicas.choose(after: token) else {
            return try await read(self)
        }
        do {
            return try await read(readReplicas.replicas[index].store)
        } catch let error as CaravanError where error.code == .storageUnavailable {
            readReplicas.update(index, inService: false, replayed: nil, reason: error.internalDetail ?? error.message)
            logger.debug("a read replica could not serve a read; the primary serves it", metadata: ["error": "\(String(reflecting: error))"])
            return try await read(self)
        }
    }

    /// The primary's WAL position that every commit acknowledged so far is at or before: the flushed position when
    /// commits wait for their flush (`synchronous_commit` not `off`: an acknowledged commit is flushed, and WAL past
    /// the flush reaches a standby only at the WAL writer's next pass), else the inserted one.
    package func consistencyToken() async throws -> ConsistencyToken {
        ConsistencyToken(position: try await walPosition(
            "CASE WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END"))
    }

    /// How far this server (a standby) has replayed the primary's WAL; an error when it is not a standby.
    func replayPosition() async throws -> UInt64 {
        try await walPosition("pg_last_wal_replay_lsn()")
    }

    /// `function`'s WAL position as a byte offset (NULL — not a standby — is an error).
    private func walPosition(_ function: String) async throws -> UInt64 {
        let logger = self.logger
        let position = try await withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_wal_lsn_diff(\(function), '0/0')::int8"), logger: logger)
                .collect().first?.decode(Int64?.self)
        }
        guard let position, position >= 0 else {
            throw CaravanError(.storageUnavailable, "The database is temporarily unavailable",
                               internalDetail: "\(function) is NULL: the server is not a standby replaying WAL")
        }
        return UInt64(position)
    }

    /// The service that checks the read replicas every `checkInterval` on `clock`, or nil without replicas.
    package func readReplicaChecker<C: Clock<Duration>>(clock: C) -> ReadReplicaChecker<C>? {
        readReplicas.map { ReadReplicaChecker(primary: self, replicas: $0, clock: clock, logger: logger) }
    }
}

/// Asks the primary for its WAL position and every read replica how far it has replayed, every `checkInterval`:
/// a replica that fails to answer, or whose replay is more than `maxLag` behind, is taken out of service; one
/// that answers within the bound, having replayed the primary's position at the first check (the server's
/// migrations), is put (back) in. A replica's lag is how long ago the checker first saw the
/// primary past the position the replica has replayed (0 when it has replayed everything seen), so it is measured
/// on `clock` to within one check interval, and never from the two servers' own clocks.
package final class ReadReplicaChecker<C: Clock<Duration>>: Service {
    private let primary: PostgresStore
    private let replicas: ReadReplicas
    private let clock: C
    private let logger: Logger
    /// The primary's positions as checks saw them (oldest first), for the positions some replica has not replayed.
    private let seen = Mutex<[(at: C.Instant, position: UInt64)]>([])
    /// The primary's position at the first check (after the server's migrations): a replica serves no read before it
    /// has replayed it, so that no read finds a table a migration made missing there.
    private let admission = Mutex<UInt64?>(nil)

    init(primary: PostgresStore, replicas: ReadReplicas, clock: C, logger: Logger) {
        self.primary = primary
        self.replicas = replicas
        self.clock = clock
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await check()
            do {
                try await cancelWhenGracefulShutdown { [clock, replicas] in try await clock.sleep(for: replicas.settings.checkInterval) }
            } catch {
                return
            }
        }
    }

    /// One round: the primary's position, then every replica's replay position, at once.
    package func check() async {
        let primaryPosition: UInt64
        do {
            primaryPosition = try await primary.consistencyToken().position
        } catch {
            // Without the primary's position no lag can be measured: the replicas keep their state.
            logger.info("read replica check skipped: the primary did not answer", metadata: ["error": "\(String(reflecting: error))"])
            return
        }
        let now = clock.now
        seen.withLock { $0.append((now, primaryPosition)) }
        let floor = admission.withLock { floor in
            if floor == nil { floor = primaryPosition }
            return floor ?? primaryPosition
        }
        // Plain values out of the task group: a tuple of the index and a `Result` of an existential error, collected
        // with `reduce`, reached `update` with a garbage index in a release build (Swift 6.3; a debug build was right).
        var answers: [ReplayAnswer] = []
        await withTaskGroup(of: ReplayAnswer.self) { group in
            for (index, replica) in replicas.replicas.enumerated() {
                group.addTask {
                    do {
                        return ReplayAnswer(index: index, replayed: try await replica.store.replayPosition(), failure: "")
                    } catch {
                        return ReplayAnswer(index: index, replayed: nil, failure: (error as? CaravanError)?.internalDetail ?? "\(error)")
                    }
                }
            }
            for await answer in group { answers.append(answer) }
        }
        let maxLag = replicas.settings.maxLag
        var lowest = UInt64.max
        for answer in answers {
            guard let replayed = answer.replayed else {
                replicas.update(answer.index, inService: false, replayed: nil, reason: answer.failure)
                continue
            }
            lowest = min(lowest, replayed)
            let behindSince = seen.withLock { seen in seen.first { $0.position > replayed }?.at }
            let lag = behindSince.map { $0.duration(to: now) } ?? .zero
            let reason = replayed < floor ? "it has not replayed the primary's position at start" : "its replay is \(lag) behind the primary (read_replica_max_lag \(maxLag))"
            replicas.update(answer.index, inService: lag <= maxLag && replayed >= floor, replayed: replayed, reason: reason)
        }
        // Positions every answering replica has replayed measure nothing any more; a replica that does not answer is
        // out of service anyway (its lag is measured afresh once it answers).
        seen.withLock { seen in
            seen.removeAll { $0.position <= lowest }
            if seen.count > Self.remembered { seen.removeFirst(seen.count - Self.remembered) }
        }
    }

    /// The most primary positions kept (at one check a second, over an hour).
    static var remembered: Int { 4096 }

    /// One replica's answer to a check: how far it has replayed, or why it did not answer.
    struct ReplayAnswer: Sendable {
        let index: Int
        let replayed: UInt64?
        let failure: String
    }
}
