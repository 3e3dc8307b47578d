import CaravanCore
import CaravanSQL
import Dispatch
import Logging
import NIOCore
import PostgresNIO

/// One leased connection, driven synchronously from a thread-pool thread: each statement is sent with postgres-nio's
/// future API (no task per statement) and its collected result awaited by blocking on the future. Never used on an
/// event-loop thread (that would deadlock the loop).
final class PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// Set when a failure ended the connection (and with it the transaction).
    private(set) var isBroken = false
    /// Set when a statement failed with a serialization failure or a deadlock: the transaction may be run again.
    private(set) var hasConflicted = false

    init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The BEGIN sent by `begin()`, whose answer nobody has waited for yet.
    private var unconfirmedBegin: EventLoopFuture<PostgresQueryResult>?

    /// Sends BEGIN without waiting for its answer: the connection runs statements in order, so the transaction's
    /// first statement goes out behind it and the round trip is saved. Its answer is checked with the next one's.
    func begin() {
        unconfirmedBegin = connection.query("BEGIN", logger: logger)
    }

    /// Runs one statement and blocks this (non-event-loop) thread until its rows are all in. Errors come back
    /// translated, with `table` naming the relation in messages.
    private func run(_ sql: PostgresSQL, table: TableSchema?) throws -> PostgresQueryResult {
        let future: EventLoopFuture<PostgresQueryResult> = connection.query(sql.query, logger: logger)
        do {
            let result = try Self.waitWhileOpen(future, on: connection)
            if let begin = unconfirmedBegin {
                unconfirmedBegin = nil
                _ = try begin.wait()  // answered before `future` was
            }
            return result
        } catch {
            unconfirmedBegin = nil
            if PostgresErrors.endsTransaction(error) { isBroken = true }
            if PostgresErrors.isConflict(error) { hasConflicted = true }
            throw PostgresErrors.translate(error, table: table)
        }
    }

    /// How often a waiting statement checks that its connection is still open.
    static let liveness: DispatchTimeInterval = .seconds(1)

    /// Blocks until `future` completes — or until the connection closes: a statement sent on a connection the
    /// server is closing (`pg_ctl stop`) is not always answered by postgres-nio, and must not hang the thread.
    private static func waitWhileOpen<T: Sendable>(_ future: EventLoopFuture<T>, on connection: PostgresConnection) throws -> T {
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { _ in done.signal() }
        while done.wait(timeout: .now() + liveness) == .timedOut {
            if connection.isClosed, done.wait(timeout: .now() + liveness) == .timedOut {
                throw ConnectionClosed()
            }
        }
        return try future.wait()
    }

    func rows(_ sql: PostgresSQL, types: [ColumnType], table: TableSchema?) throws -> [[Value]] {
        let result = try run(sql, table: table)
        do {
            return try PostgresRows.values(result.rows, types: types)
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func count(_ sql: PostgresSQL, table: TableSchema?) throws -> Int {
        guard let row = try run(sql, table: table).rows.first else { throw CaravanError(.internalFailure, "a count returned no row") }
        do {
            return Int(try row.decode(Int64.self))
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func execute(_ sql: PostgresSQL, table: TableSchema?) throws {
        _ = try run(sql, table: table)
    }

    /// A fixed statement (transaction control): no values, no user text.
    func execute(_ statement: StaticString) throws {
        var sql = PostgresSQL()
        sql.append("\(statement)")
        try execute(sql, table: nil)
    }
}

/// The connection closed while a statement waited for its answer (the transaction is gone with it).
struct ConnectionClosed: Error {}
