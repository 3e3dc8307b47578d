package import CaravanCore
#if canImport(Glibc)
import Glibc
#endif
package import Logging
import NIOCore
import NIOPosix
import PostgresNIO

extension PostgresStore {
    /// Opens one connection outside the pool and closes it, so that a server that cannot be reached is reported at
    /// once, naming its host, port and database and the cause (connection refused, no such database, …), instead of
    /// as a pool timeout on the first query.
    /// - Throws: `CaravanError(.storageUnavailable)` whose message names the server and the cause, never the password.
    package func checkReachable(logger: Logger) async throws {
        do {
            let connection = try await PostgresConnection.connect(configuration: try configuration.makeConnectionConfiguration(), id: 0, logger: logger)
            try await connection.close()
        } catch {
            let where_ = configuration.usesUnixSocket ? "socket \(configuration.host), port \(configuration.port)"
                                                      : "\(configuration.host):\(configuration.port)"
            throw CaravanError(.storageUnavailable,
                               "cannot reach PostgreSQL at \(where_), database \(configuration.database): \(Self.cause(of: error))",
                               hint: "check that PostgreSQL runs there and that --database (or CARAVAN_DATABASE_URL) is right")
        }
    }

    /// The innermost readable cause of a connection failure: the OS error's text, or the server's message.
    static func cause(of error: any Error) -> String {
        switch error {
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return cause(of: underlying) }
            return "\(error.code)"
        case let error as IOError:
            return String(cString: strerror(error.errnoCode))
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return cause(of: first.error) }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "cannot resolve the host name (\(dns))" }
            return "\(error)"
        case let error as ChannelError:
            if case .connectTimeout = error { return "connection timed out" }
            return "\(error)"
        default:
            return "\(error)"
        }
    }
}
