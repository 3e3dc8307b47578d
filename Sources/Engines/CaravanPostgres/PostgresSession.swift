import CaravanCore
import CaravanSQL
import Logging
import NIOCore
import PostgresNIO

/// One leased connection inside one transaction, driven by async code on the connection's own event loop
/// (`EventLoopExecutor`): a statement is written to the connection and its answer resumes the transaction where
/// it waits, on the same thread — no thread pool, no thread woken per statement.
///
/// Statements that nothing needs to wait for at once (BEGIN, change-log appends) are sent and their answers read
/// later: the connection answers in order, so once a later statement is answered, so are they.
final class PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// The shapes that run as named prepared statements (nil: none).
    let statements: PreparedStatements?
    /// Set when a failure ended the connection (and with it the transaction).
    private(set) var isBroken = false
    /// Set when a statement failed with a serialization failure or a deadlock: the transaction may be run again.
    private(set) var hasConflicted = false

    /// The connection's event loop as an executor: the transaction's own code runs on it, and so do the tasks
    /// that run its prepared statements.
    let executor: EventLoopExecutor

    init(connection: PostgresConnection, executor: EventLoopExecutor, logger: Logger, statements: PreparedStatements?) {
        self.connection = connection
        self.executor = executor
        self.logger = logger
        self.statements = statements
    }

    /// Statements sent without waiting for their answers, oldest first, each with its place in the order of
    /// sending. Their failures are checked once a later statement is answered.
    private var unanswered: [(order: Int, answer: EventLoopFuture<PostgresQueryResult>)] = []
    /// How many statements were sent so far.
    private var sent = 0

    /// Sends BEGIN without waiting for its answer: the transaction's first statement goes out behind it and the
    /// round trip is saved. Its answer is checked with the next one's.
    func begin() {
        var sql = PostgresSQL()
        sql.append("BEGIN")
        sendWithoutWaiting(sql)
    }

    /// Sends `sql` and goes on; the returned function waits for its rows (at once if a later statement was already
    /// answered). Sent unnamed.
    func rowsLater(_ sql: PostgresSQL, types: [ColumnType], table: TableSchema?) -> () async throws -> [[Value]] {
        let (order, answer) = sendWithoutWaiting(sql)
        return { [self] in
            try decode(try await wait(for: { try await Self.answer(answer).rows }, order: order, table: table), types: types, table: table)
        }
    }

    @discardableResult
    private func sendWithoutWaiting(_ sql: PostgresSQL) -> (order: Int, answer: EventLoopFuture<PostgresQueryResult>) {
        let answer = connection.query(sql.query, logger: logger)
        sent += 1
        unanswered.append((sent, answer))
        return (sent, answer)
    }

    /// Runs one statement and waits for all its rows: under its prepared name when it has one and `prepared`
    /// allows, else unnamed. Errors come back translated, with `table` naming the relation in messages.
    private func run(_ sql: PostgresSQL, table: TableSchema?, prepared: Bool = true) async throws -> [PostgresRow] {
        sent += 1
        let order = sent
        let connection = self.connection
        let logger = self.logger
        guard prepared, let statements, let name = statements.name(for: sql.text, bindings: sql.bindings) else {
            let answer: EventLoopFuture<PostgresQueryResult> = connection.query(sql.query, logger: logger)
            return try await wait(for: { try await Self.answer(answer).rows }, order: order, table: table)
        }
        // postgres-nio's prepared-statement API is async and does not end its wait on cancellation: it runs in a
        // task of its own (on this loop), whose answer is awaited as an unnamed statement's is.
        let answer = connection.eventLoop.makePromise(of: [PostgresRow].self)
        Task(executorPreference: executor) {
            do {
                var rows: [PostgresRow] = []
                try await NamedStatement.run(sql, named: name, of: statements, on: connection, logger: logger) { rows.append($0) }
                answer.succeed(rows)
            } catch {
                answer.fail(error)
            }
        }
        return try await wait(for: { try await Self.answer(answer.futureResult) }, order: order, table: table)
    }

    /// Waits for the answer to the statement sent `order`-th, then checks the answers to those sent before it
    /// (in by then): when one of them failed, that failure is the one thrown (the transaction was aborted there,
    /// and what followed failed only for that).
    private func wait(for answer: () async throws -> [PostgresRow], order: Int, table: TableSchema?) async throws -> [PostgresRow] {
        var outcome: Result<[PostgresRow], any Error>
        do {
            outcome = .success(try await answer())
        } catch {
            outcome = .failure(error)
        }
        let earlier = unanswered.prefix { $0.order < order }
        unanswered.removeFirst(earlier.count)
        if unanswered.first?.order == order { unanswered.removeFirst() }
        // Answered before this one — unless the wait ended without its answer (the connection closed, or the
        // request was cancelled), and with it everything in flight.
        if case .failure(let error) = outcome, error is CancellationError {} else {
            for statement in earlier {
                do {
                    _ = try await Self.answer(statement.answer)
                } catch {
                    outcome = .failure(error)
                    break
                }
            }
        }
        do {
            return try outcome.get()
        } catch {
            if PostgresErrors.endsTransaction(error) { isBroken = true }
            if PostgresErrors.isConflict(error) { hasConflicted = true }
            throw PostgresErrors.translate(error, table: table)
        }
    }

    /// The answer of `future`, or `CancellationError` as soon as the task is cancelled: a statement sent on a
    /// connection the server is closing is not always answered by postgres-nio, and `withConnection` cancels the
    /// request whose connection closed under it (`LeaseWatch`), which must then not wait on.
    private static func answer<T: Sendable>(_ future: EventLoopFuture<T>) async throws -> T {
        let promise = future.eventLoop.makePromise(of: T.self)
        future.cascade(to: promise)
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
        }
    }

    func rows(_ sql: PostgresSQL, types: [ColumnType], table: TableSchema?) async throws -> [[Value]] {
        try decode(try await run(sql, table: table), types: types, table: table)
    }

    private func decode(_ rows: [PostgresRow], types: [ColumnType], table: TableSchema?) throws -> [[Value]] {
        do {
            return try PostgresRows.values(rows, types: types)
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func count(_ sql: PostgresSQL, table: TableSchema?) async throws -> Int {
        guard let row = try await run(sql, table: table).first else { throw CaravanError(.internalFailure, "a count returned no row") }
        do {
            return Int(try row.decode(Int64.self))
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func execute(_ sql: PostgresSQL, table: TableSchema?) async throws {
        _ = try await run(sql, table: table)
    }

    /// A fixed statement (transaction control): no values, no user text. Unnamed: there is nothing to plan.
    func execute(_ statement: StaticString) async throws {
        var sql = PostgresSQL()
        sql.append("\(statement)")
        _ = try await run(sql, table: nil, prepared: false)
    }
}

/// The connection closed while a request held it (the transaction is gone with it).
struct ConnectionClosed: Error {}

/// An event loop as the executor of a task's async code (`withTaskExecutorPreference`): the transaction body runs
/// on the loop of the connection it holds, so each answer resumes it without a thread switch.
final class EventLoopExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
