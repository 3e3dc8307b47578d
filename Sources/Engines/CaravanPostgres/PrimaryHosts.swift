import CaravanCore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The servers a store's primary may be on (`PostgresStoreConfiguration.endpoints`, libpq's multi-host URL), one
/// connection pool per server, and which of them serves as the primary now.
///
/// With one server and `target_session_attrs=any` there is nothing to choose: it is the primary, always. Otherwise
/// `run()` tries the servers in order, as libpq does for each connection, and keeps the first that qualifies
/// (`read-write`: `transaction_read_only` is off; `primary`: `pg_is_in_recovery()` is false; `any`: it accepts a
/// connection). It holds that probe connection open as a sentinel: when it closes (the server stopped or crashed), or
/// a request saw its connection lost or a read-only answer and the sentinel no longer qualifies, the choice is
/// dropped and the servers are tried again, in order, every 100 ms up to every 2 s, until one qualifies — a
/// standby promoted meanwhile (`pg_ctl promote`) is chosen then. Every pooled connection, the change listener's and
/// the notification channel's go to the chosen server; requests waiting for a pooled connection of the server that
/// was dropped move to the new choice (their statements never ran), within their acquire timeout.
///
/// The choice is kept while its server qualifies: a server earlier in the list that comes back is not switched to
/// (two writable primaries are the operator's to prevent — see Docs/postgresql.md § Failover).
final class PrimaryHosts: Sendable {
    /// One pool per endpoint, in the URL's order.
    let pools: [PostgresClient]
    /// One single-endpoint configuration per pool (for connections outside the pools).
    let servers: [PostgresStoreConfiguration]
    /// Whether there is a choice to make (several servers, or a server that must be checked).
    let chooses: Bool
    private let target: PostgresStoreConfiguration.TargetSessionAttributes
    private let connectTimeout: Duration

    private struct State {
        /// The chosen server; nil while none is (`run()` is looking).
        var current: Int?
        /// Counts choices: a request that waits for a connection on one choice moves when it changes.
        var generation = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
        /// Wakes the sentinel to check its server again (a request saw a failure).
        var suspicion: AsyncStream<Void>.Continuation?
    }

    private let state: Mutex<State>

    /// How soon the servers are tried again while none qualifies, at first and at most.
    static let retry: (first: Duration, maximum: Duration) = (.milliseconds(100), .seconds(2))

    init(_ configuration: PostgresStoreConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        servers = configuration.endpoints.indices.map(configuration.endpoint)
        pools = servers.map { PostgresClient(configuration: $0.clientConfiguration, eventLoopGroup: eventLoopGroup, backgroundLogger: logger) }
        target = configuration.targetSessionAttributes
        connectTimeout = configuration.connectTimeout
        chooses = servers.count > 1 || target != .any
        state = Mutex(State(current: chooses ? nil : 0))
    }

    /// The chosen server and the choice's generation, waiting for a choice while none is made (until cancelled).
    func primary() async throws -> (index: Int, generation: Int) {
        while true {
            if let chosen = state.withLock({ state in state.current.map { ($0, state.generation) } }) { return chosen }
            await waitForChoice { $0.current != nil }
            try Task.checkCancellation()
        }
    }

    /// Returns once another choice than `generation` is made (or on cancellation).
    func moved(from generation: Int) async {
        while !Task.isCancelled, state.withLock({ $0.generation == generation }) {
            await waitForChoice { $0.generation != generation }
        }
    }

    /// Runs `body` on a connection of the chosen server's pool, once `lease` takes it (a connection lent after the
    /// caller gave up is handed back unused). While the wait for a connection lasts, another choice moves it to
    /// that server's pool.
    func withConnection<T: Sendable>(_ lease: LeaseState, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard chooses else {
            return try await pools[0].withConnection { connection in
                guard lease.take(connection) else { throw CancellationError() }
                return try await body(connection)
            }
        }
        var attempt = 0
        while true {
            try Task.checkCancellation()
            let (index, generation) = try await primary()
            let pool = pools[index], this = attempt
            let outcome = try await withThrowingTaskGroup(of: Attempt<T>.self) { group -> Attempt<T> in
                group.addTask {
                    .finished(try await pool.withConnection { connection in
                        guard lease.take(connection, attempt: this) else { throw CancellationError() }
                        return try await body(connection)
                    })
                }
                group.addTask {
                    await self.moved(from: generation)
                    return .moved
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    // Moved: unless the connection was lent meanwhile (its body runs; wait for it), try the new choice.
                    if case .finished = next { return next }
                    if lease.withdraw(attempt: this) { return .moved }
                }
                throw CancellationError()
            }
            if case .finished(let value) = outcome { return value }
            attempt += 1
        }
    }

    /// A request on the chosen server failed in a way a lost or demoted primary would explain: the sentinel checks
    /// its server again.
    func suspect() {
        _ = state.withLock { $0.suspicion }?.yield()
    }

    /// Waits until the next choice, unless `done` holds already; cancellation ends the wait.
    private func waitForChoice(unless done: @escaping @Sendable (State) -> Bool) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.cancelled.remove(id) != nil || done(state) { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                guard let waiting = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil as CheckedContinuation<Void, Never>?
                }
                return waiting
            }
            waiting?.resume()
        }
    }

    /// Sets (or, with nil, drops) the choice, waking whoever waits for one.
    private func choose(_ index: Int?) {
        let waiting = state.withLock { state in
            state.current = index
            if index != nil { state.generation += 1 }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Chooses a server, watches it, and chooses again when it fails, until cancelled (nothing to do without a
    /// choice to make).
    func run(logger: Logger) async {
        guard chooses else { return }
        var pause = Self.retry.first
        while !Task.isCancelled {
            let found: (index: Int, connection: PostgresConnection)
            do {
                found = try await firstQualifying(logger: logger)
            } catch {
                logger.warning("no database server qualifies as the primary; trying again", metadata: [
                    "database.hosts": "\(servers.map(\.hostsDescription).joined(separator: ","))", "error": "\(error.message)",
                    "retry.after": "\(pause)",
                ])
                do { try await Task.sleep(for: pause) } catch { break }
                pause = min(pause * 2, Self.retry.maximum)
                continue
            }
            pause = Self.retry.first
            logger.notice("database primary chosen", metadata: ["database.host": "\(servers[found.index].hostsDescription)"])
            // A stream per watch: a stream whose reader is cancelled is finished for good.
            let (suspicions, suspicion) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            state.withLock { $0.suspicion = suspicion }
            choose(found.index)
            await watch(found.connection, suspicions: suspicions, logger: logger)
            state.withLock { $0.suspicion = nil }
            suspicion.finish()
            choose(nil)
            if !Task.isCancelled {
                logger.warning("the database primary was lost; looking for it again", metadata: ["database.host": "\(servers[found.index].hostsDescription)"])
            }
        }
    }

    /// Returns when `connection` closes, when a suspicion finds its server no longer qualifies, or on cancellation;
    /// the connection is closed then. The connection LISTENs meanwhile: an idle postgres-nio connection does not
    /// always notice that the server closed it (seen: a crashed primary's sentinel staying open), a listening one
    /// does at once.
    private func watch(_ connection: PostgresConnection, suspicions: AsyncStream<Void>, logger: Logger) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await connection.closeFuture.get() }
            group.addTask {
                do {
                    try await connection.listen(on: Self.sentinelChannel) { notifications in
                        for try await _ in notifications {}
                    }
                } catch {
                    logger.debug("the primary's sentinel connection ended", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            group.addTask {
                for await _ in suspicions {
                    do {
                        if try await !self.qualifies(connection, logger: logger) { return }
                    } catch {
                        return
                    }
                }
            }
            await group.next()
            do { try await connection.close() } catch {
                logger.debug("closing the primary's sentinel connection failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            group.cancelAll()
        }
    }

    /// The first server, in order, that accepts a connection and qualifies, with that connection open; else the
    /// causes, server by server.
    func firstQualifying(logger: Logger) async throws(CaravanError) -> (index: Int, connection: PostgresConnection) {
        var causes: [String] = []
        for (index, server) in servers.enumerated() {
            do {
                let connection = try await PostgresConnection.connect(configuration: try server.makeConnectionConfiguration(), id: -1 - index, logger: logger)
                do {
                    if try await qualifies(connection, logger: logger) { return (index, connection) }
                    causes.append("\(server.hostsDescription): \(target == .primary ? "a standby (in recovery)" : "read-only")")
                } catch {
                    causes.append("\(server.hostsDescription): \(PostgresStore.cause(of: error))")
                }
                try? await connection.close()
            } catch {
                causes.append("\(server.hostsDescription): \(PostgresStore.cause(of: error))")
            }
        }
        throw CaravanError(.storageUnavailable, "no database server qualifies as the primary (target_session_attrs=\(target.rawValue)): "
                           + causes.joined(separator: "; "))
    }

    /// The channel the sentinel LISTENs on (nothing is sent there).
    static let sentinelChannel = "caravan_primary_sentinel"

    /// Whether the server of `connection` qualifies as `target` asks. Without an answer within the connect timeout
    /// the connection is closed (and the wait ends with it: postgres-nio may never answer on a connection the server
    /// is closing).
    private func qualifies(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let target = self.target
        guard target != .any else { return true }
        let (seconds, attoseconds) = connectTimeout.components
        let timeout = connection.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            _ = connection.close() as EventLoopFuture<Void>
        }
        defer { timeout.cancel() }
        let answer: EventLoopFuture<PostgresQueryResult> = connection.query("SELECT pg_is_in_recovery(), current_setting('transaction_read_only')",
                                                                            logger: logger)
        let result = try await PostgresStore.answerOrClosed(answer, on: connection)
        guard let (inRecovery, readOnly) = try result.rows.first?.decode((Bool, String).self) else { return false }
        return target == .primary ? !inRecovery : readOnly == "off"
    }
}

/// How one attempt of `PrimaryHosts.withConnection` ended.
private enum Attempt<T: Sendable>: Sendable {
    case finished(T)
    /// Another server was chosen before a connection was lent.
    case moved
}
