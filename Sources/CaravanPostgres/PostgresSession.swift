import CaravanCore
import CaravanSQL
import Dispatch
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One leased connection, driven synchronously from a thread-pool thread. Each statement costs this thread one
/// hop to the connection's event loop (which sends it and, when its answer is in, hands the rows over) and one
/// wake-up: no future callbacks registered from off the loop, no task per unnamed statement. Never used on an
/// event-loop thread (that would deadlock the loop).
final class PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// The shapes that run as named prepared statements (nil: none).
    let statements: PreparedStatements?
    /// Set when a failure ended the connection (and with it the transaction).
    private(set) var isBroken = false
    /// Set when a statement failed with a serialization failure or a deadlock: the transaction may be run again.
    private(set) var hasConflicted = false

    init(connection: PostgresConnection, logger: Logger, statements: PreparedStatements?) {
        self.connection = connection
        self.logger = logger
        self.statements = statements
    }

    /// Statements sent without waiting for their answers (BEGIN, change-log appends), oldest first, each with its
    /// place in the order of sending. The connection answers in order: once a later statement is answered, so are
    /// they, and their failures are checked then.
    private var unanswered: [(order: Int, answer: StatementAnswer)] = []
    /// How many statements were sent so far.
    private var sent = 0

    /// Sends BEGIN without waiting for its answer: the connection runs statements in order, so the transaction's
    /// first statement goes out behind it and the round trip is saved. Its answer is checked with the next one's.
    func begin() {
        var sql = PostgresSQL()
        sql.append("BEGIN")
        sendWithoutWaiting(sql)
    }

    /// Sends `sql` and goes on; the returned function waits for its rows (at once if a later statement was already
    /// answered). Sent unnamed.
    func rowsLater(_ sql: PostgresSQL, types: [ColumnType], table: TableSchema?) -> () throws -> [[Value]] {
        let (order, answer) = sendWithoutWaiting(sql)
        return { [self] in try decode(try wait(for: answer, order: order, table: table), types: types, table: table) }
    }

    @discardableResult
    private func sendWithoutWaiting(_ sql: PostgresSQL) -> (order: Int, answer: StatementAnswer) {
        let answer = send(sql, prepared: false)
        sent += 1
        unanswered.append((sent, answer))
        return (sent, answer)
    }

    /// Runs one statement and blocks this (non-event-loop) thread until its rows are all in. Errors come back
    /// translated, with `table` naming the relation in messages.
    private func run(_ sql: PostgresSQL, table: TableSchema?, prepared: Bool = true) throws -> [PostgresRow] {
        let answer = send(sql, prepared: prepared)
        sent += 1
        return try wait(for: answer, order: sent, table: table)
    }

    /// Waits for the answer to the statement sent `order`-th, then checks the answers to those sent before it
    /// (in by then): when one of them failed, that failure is the one thrown (the transaction was aborted there,
    /// and what followed failed only for that).
    private func wait(for answer: StatementAnswer, order: Int, table: TableSchema?) throws -> [PostgresRow] {
        var outcome: Result<[PostgresRow], any Error>
        do {
            outcome = .success(try answer.wait(while: connection))
        } catch {
            outcome = .failure(error)
        }
        let earlier = unanswered.prefix { $0.order < order }
        unanswered.removeFirst(earlier.count)
        if unanswered.first?.order == order { unanswered.removeFirst() }
        // Answered before this one — unless the connection closed, and with it everything in flight.
        if case .failure(let error) = outcome, error is ConnectionClosed {} else {
            for statement in earlier {
                do {
                    _ = try statement.answer.wait(while: connection)
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

    /// Sends `sql` from the connection's event loop, where its answer is handed over: under its prepared name when
    /// it has one and `prepared` allows, else as an unnamed statement. postgres-nio's prepared-statement API is
    /// async only, so a prepared statement goes out from a task the loop starts, later than an unnamed one would:
    /// only statements waited for are prepared, so nothing sent after one can overtake it.
    private func send(_ sql: PostgresSQL, prepared: Bool) -> StatementAnswer {
        let answer = StatementAnswer()
        let connection = self.connection
        let logger = self.logger
        guard prepared, let statements, let name = statements.name(for: sql.text, bindings: sql.bindings) else {
            let query = sql.query
            connection.eventLoop.execute {
                connection.query(query, logger: logger).whenComplete { answer.deliver($0.map(\.rows)) }
            }
            return answer
        }
        connection.eventLoop.execute {
            connection.eventLoop.makeFutureWithTask {
                var rows: [PostgresRow] = []
                try await NamedStatement.run(sql, named: name, of: statements, on: connection, logger: logger) { rows.append($0) }
                return rows
            }.whenComplete(answer.deliver)
        }
        return answer
    }

    func rows(_ sql: PostgresSQL, types: [ColumnType], table: TableSchema?) throws -> [[Value]] {
        try decode(try run(sql, table: table), types: types, table: table)
    }

    private func decode(_ rows: [PostgresRow], types: [ColumnType], table: TableSchema?) throws -> [[Value]] {
        do {
            return try PostgresRows.values(rows, types: types)
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func count(_ sql: PostgresSQL, table: TableSchema?) throws -> Int {
        guard let row = try run(sql, table: table).first else { throw CaravanError(.internalFailure, "a count returned no row") }
        do {
            return Int(try row.decode(Int64.self))
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func execute(_ sql: PostgresSQL, table: TableSchema?) throws {
        _ = try run(sql, table: table)
    }

    /// A fixed statement (transaction control): no values, no user text. Unnamed: there is nothing to plan.
    func execute(_ statement: StaticString) throws {
        var sql = PostgresSQL()
        sql.append("\(statement)")
        _ = try run(sql, table: nil, prepared: false)
    }
}

/// The connection closed while a statement waited for its answer (the transaction is gone with it).
struct ConnectionClosed: Error {}

/// One statement's answer, handed over by the connection's event loop to the thread waiting for it.
final class StatementAnswer: Sendable {
    private let result = Mutex<Result<[PostgresRow], any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    /// How often a waiting statement checks that its connection is still open.
    static let liveness: DispatchTimeInterval = .seconds(1)

    /// Called once, on the event loop.
    func deliver(_ outcome: Result<[PostgresRow], any Error>) {
        result.withLock { $0 = outcome }
        ready.signal()
    }

    /// The rows, once delivered — or `ConnectionClosed` when the connection closes first: a statement sent on a
    /// connection the server is closing (`pg_ctl stop`) is not always answered by postgres-nio, and must not hang
    /// the thread.
    func wait(while connection: PostgresConnection) throws -> [PostgresRow] {
        while true {
            if let delivered = result.withLock({ $0 }) { return try delivered.get() }
            if ready.wait(timeout: .now() + Self.liveness) == .timedOut, connection.isClosed,
               ready.wait(timeout: .now() + Self.liveness) == .timedOut {
                throw ConnectionClosed()
            }
        }
    }
}
