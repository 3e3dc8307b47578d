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
    ///
    /// With several servers (or a `target_session_attrs` to check), the first that qualifies as the primary must be
    /// found; the message names each server and why it did not.
    package func checkReachable(logger: Logger) async throws {
        if primaryHosts.chooses {
            do {
                try await primaryHosts.firstQualifying(logger: logger).connection.close()
            } catch let error as CaravanError {
                throw CaravanError(.storageUnavailable, "cannot reach PostgreSQL's primary, database \(configuration.database): \(error.message)",
                                   hint: "check that PostgreSQL runs there and that --database (or CARAVAN_DATABASE_URL) is right")
            }
            return
        }
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

    /// A connection outside the pool to the primary (`PrimaryHosts`' choice, waiting for one while none is made): the
    /// change listener's and the notification channel's LISTEN — on `listen_url`'s server instead when it is set (the
    /// pool behind a pooler). A failed connection to the chosen primary has the choice checked again.
    func connectToPrimary(id: Int, logger: Logger) async throws -> PostgresConnection {
        if let listen = configuration.listenConfiguration {
            return try await PostgresConnection.connect(configuration: try listen.makeConnectionConfiguration(), id: id, logger: logger)
        }
        let primary = try await primaryHosts.primary()
        do {
            return try await PostgresConnection.connect(configuration: try primaryHosts.servers[primary.index].makeConnectionConfiguration(), id: id, logger: logger)
        } catch {
            primaryHosts.suspect()
            throw error
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
