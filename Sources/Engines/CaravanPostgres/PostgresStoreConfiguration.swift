package import CaravanCore
import Foundation
import NIOCore
import NIOSSL
import PostgresNIO

/// Where and how `PostgresStore` connects, read once at the edge from a `postgres://` URL.
package struct PostgresStoreConfiguration: Sendable {
    /// One server the URL names.
    package struct Endpoint: Sendable, Hashable {
        /// A host name or address (TCP), or — starting with `/` — the directory of the server's Unix-domain socket,
        /// as libpq reads `host` (the socket is `<directory>/.s.PGSQL.<port>`).
        package var host: String
        package var port: Int

        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// The servers the primary may be on, in the order connections try them (libpq's multi-host URL,
    /// `postgres://u@a:5432,b:5432/db`): never empty. With more than one, or a `targetSessionAttributes` to check,
    /// the store keeps to the first that qualifies and looks again when it fails (`PrimaryHosts`).
    package var endpoints: [Endpoint]
    /// libpq's `target_session_attrs`: which of `endpoints` a connection keeps.
    package var targetSessionAttributes: TargetSessionAttributes = .any

    /// The first endpoint's host.
    package var host: String {
        get { endpoints[0].host }
        set { endpoints[0].host = newValue }
    }

    /// The first endpoint's port.
    package var port: Int {
        get { endpoints[0].port }
        set { endpoints[0].port = newValue }
    }
    package var username: String
    /// Never logged.
    package var password: String?
    package var database: String
    /// `sslmode`: `disable`, `prefer` (the default, as libpq) or `require`.
    package var tlsMode: TLSMode
    /// The pool's connection limit.
    package var maximumConnections = 20
    /// Above 0, a warm pool (a server's): connections, once opened, are kept for an hour of idleness rather than a
    /// minute, so a burst after a quiet spell finds them open. (Not postgres-nio's own minimum: see
    /// `clientConfiguration`.)
    package var minimumConnections = 0
    /// Named server-side prepared statements for statement shapes that repeat (`PreparedStatements`). Turn off
    /// behind a pooler that does not keep sessions (PgBouncer in transaction mode before 1.21).
    package var preparesStatements = true
    /// How long an operation waits for a pooled connection before it fails with `storageUnavailable` (while
    /// PostgreSQL is down, or every connection is busy). The pool keeps reconnecting in the background.
    /// 10 s, as PostgREST's `db-pool-acquisition-timeout`.
    package var connectionAcquireTimeout: Duration = .seconds(10)
    /// How long one connection attempt (TCP, TLS and startup) may take.
    package var connectTimeout: Duration = .seconds(5)
    /// The shortest time between two announcements of committed changes to the other instances (`CommitAnnouncer`):
    /// under load, one NOTIFY announces every commit of that time.
    package var commitAnnouncementInterval: Duration = .milliseconds(5)

    /// Where the change listener and the notification channel hold their `LISTEN` connection when not on this
    /// server: behind a pooler in transaction mode, a direct connection to PostgreSQL (`LISTEN` is session state the
    /// pooler would lose). The same database on the same server, reached without the pooler.
    package var listenConfiguration: PostgresStoreConfiguration? {
        get { listenServer.first }
        set { listenServer = newValue.map { [$0] } ?? [] }
    }
    /// `listenConfiguration`'s storage (an array: a struct cannot hold an optional of itself).
    private var listenServer: [PostgresStoreConfiguration] = []

    /// The read replicas (streaming standbys of this server): REST reads may run there (`ReadReplicas`).
    package var readReplicas: [PostgresStoreConfiguration] = []
    /// How the read replicas are checked and waited for.
    package var readReplicaSettings = ReadReplicaSettings()

    package enum TLSMode: String, Sendable { case disable, prefer, require }

    /// libpq's `target_session_attrs` values that make sense for a primary's URL.
    package enum TargetSessionAttributes: String, Sendable {
        /// The first server that accepts a connection.
        case any
        /// The first server whose sessions may write (`transaction_read_only` is off).
        case readWrite = "read-write"
        /// The first server that is not a standby (`pg_is_in_recovery()` is false).
        case primary
    }

    /// Parses `postgres://user[:password]@host[:port]/database[?sslmode=…][&host=/socket/directory]` (also
    /// `postgresql://`). A `host` parameter starting with `/` connects through the Unix-domain socket in that
    /// directory, as libpq does (`postgres://user@/database?host=/var/run/postgresql`): on one machine it costs less
    /// per statement than TCP over loopback.
    ///
    /// Several servers, as libpq: `postgres://user@hostA:5432,hostB:5433/database?target_session_attrs=read-write`
    /// (`endpoints`; a host without a port gets 5432). `target_session_attrs` is `any` (the default), `read-write`
    /// or `primary`.
    package init(url: String) throws(CaravanError) {
        let (url, hostList) = try Self.hostList(of: url)
        let components = URLComponents(string: url)
        let socketDirectory = components?.queryItems?.last { $0.name == "host" }?.value
        if let socketDirectory, !socketDirectory.hasPrefix("/") {
            throw CaravanError(.invalidValue, "the database URL's host parameter must be a socket directory starting with /")
        }
        guard let components, ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = socketDirectory ?? components.host, !host.isEmpty else {
            throw CaravanError(.invalidValue, "the database URL must look like postgres://user:password@host:port/database")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty else {
            throw CaravanError(.invalidValue, "the database URL names no database")
        }
        if let hostList {
            guard socketDirectory == nil else {
                throw CaravanError(.invalidValue, "the database URL's host parameter (a socket directory) cannot go with a list of hosts")
            }
            self.endpoints = hostList
        } else {
            self.endpoints = [Endpoint(host: host, port: components.port ?? 5432)]
        }
        self.username = components.user?.removingPercentEncoding ?? "postgres"
        self.password = components.password?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tlsMode = .prefer
        for item in components.queryItems ?? [] where item.name == "sslmode" {
            switch item.value {
            case "disable": tlsMode = .disable
            case "prefer", "allow": tlsMode = .prefer
            case "require", "verify-ca", "verify-full": tlsMode = .require
            default: throw CaravanError(.invalidValue, "sslmode must be disable, prefer or require")
            }
        }
        for item in components.queryItems ?? [] where item.name == "target_session_attrs" {
            guard let value = item.value.flatMap(TargetSessionAttributes.init(rawValue:)) else {
                throw CaravanError(.invalidValue, "target_session_attrs must be any, read-write or primary (the database URL names the primary)")
            }
            targetSessionAttributes = value
        }
    }

    /// The URL with a list of hosts (`a:1,b:2`) replaced by its first, which URLComponents reads, and the list (nil
    /// for one host: URLComponents reads it).
    private static func hostList(of url: String) throws(CaravanError) -> (String, [Endpoint]?) {
        guard let schemeEnd = url.range(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostsStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hosts = authority[hostsStart...]
        guard hosts.contains(",") else { return (url, nil) }
        var endpoints: [Endpoint] = []
        for item in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            // `host`, `host:port`, `[v6]` or `[v6]:port`.
            var host = Substring(item)
            var port = 5432
            if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") {
                guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else {
                    throw CaravanError(.invalidValue, "the database URL's host list has a bad port in '\(item)'")
                }
                port = number
                host = host[..<colon]
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else {
                throw CaravanError(.invalidValue, "the database URL's host list has an empty host", hint: "postgres://user@hostA:5432,hostB:5432/database")
            }
            endpoints.append(Endpoint(host: String(host).removingPercentEncoding ?? String(host), port: port))
        }
        return (url.replacingCharacters(in: hosts.startIndex..<hosts.endIndex, with: hosts.split(separator: ",")[0]), endpoints)
    }

    /// Whether `host` names a Unix-domain socket directory rather than a TCP host.
    package var usesUnixSocket: Bool { host.hasPrefix("/") }

    /// The socket file in `host` (libpq's naming).
    private var unixSocketPath: String { "\(host)/.s.PGSQL.\(port)" }

    /// The servers, `host:port` each (the host may be a socket directory), comma-separated: for messages and logs
    /// (never the URL, which may hold a password).
    package var hostsDescription: String {
        endpoints.map { "\($0.host):\($0.port)" }.joined(separator: ",")
    }

    /// This configuration with `endpoints[index]` only (one server's pool or connection).
    func endpoint(_ index: Int) -> PostgresStoreConfiguration {
        var copy = self
        copy.endpoints = [endpoints[index]]
        return copy
    }

    /// The same server, another database (tests create one per store).
    package func database(_ name: String) -> PostgresStoreConfiguration {
        var copy = self
        copy.database = name
        return copy
    }

    var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch tlsMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        var configuration = usesUnixSocket
            ? PostgresClient.Configuration(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
            : PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        // No minimum in the pool itself: postgres-nio 1.33.2's pool traps (a precondition,
        // PoolStateMachine+ConnectionGroup.swift:163) when a connection is asked for while fewer than its minimum are
        // open — as when PostgreSQL restarts under a warm pool and requests arrive before it has refilled. A warm
        // pool keeps the connections it opens instead (an idle timeout of an hour), and opens them on demand.
        configuration.options.minimumConnections = 0
        if minimumConnections > 0 { configuration.options.connectionIdleTimeout = .seconds(3600) }
        // No keep-alive query on idle connections: it would start (and cancel) a timer every time a connection is
        // handed back; a connection the server closed is noticed by its channel closing.
        configuration.options.keepAliveBehavior = nil
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// The same server for one dedicated connection outside the pool.
    func makeConnectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS = switch tlsMode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = usesUnixSocket
            ? PostgresConnection.Configuration(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
            : PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
        let (seconds, attoseconds) = connectTimeout.components
        configuration.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return configuration
    }
}
