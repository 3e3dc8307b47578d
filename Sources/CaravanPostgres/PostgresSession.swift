import CaravanCore
import CaravanSQL
import Dispatch
import Logging
import NIOCore
import PostgresNIO

/// One leased connection, driven synchronously from a thread-pool thread: each statement is started as a task and
/// awaited by blocking on its future. Never used on an event-loop thread (that would deadlock the loop).
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

    /// Runs `operation` on the connection and blocks this (non-event-loop) thread until it finishes.
    /// Errors come back translated, with `table` naming the relation in messages.
    func wait<T: Sendable>(table: TableSchema?, _ operation: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) throws -> T {
        let promise = connection.eventLoop.makePromise(of: T.self)
        let connection = self.connection
        let logger = self.logger
        promise.completeWithTask { try await operation(connection, logger) }
        do {
            return try Self.waitWhileOpen(promise.futureResult, on: connection)
        } catch {
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
        let query = sql.query
        return try wait(table: table) { connection, logger in
            try await PostgresRows.collect(try await connection.query(query, logger: logger), types: types)
        }
    }

    func count(_ sql: PostgresSQL, table: TableSchema?) throws -> Int {
        let query = sql.query
        return try wait(table: table) { connection, logger in
            try await PostgresRows.count(try await connection.query(query, logger: logger))
        }
    }

    func execute(_ sql: PostgresSQL, table: TableSchema?) throws {
        let query = sql.query
        try wait(table: table) { connection, logger in
            _ = try await connection.query(query, logger: logger).collect()
        }
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
