package import CaravanAuth
package import CaravanCore
package import CaravanPostgres
package import CaravanSQLite
import Foundation
package import Logging
package import ServiceLifecycle

/// Where a deployment keeps its data: the SQLite file of a data directory, or a PostgreSQL database.
package enum DeploymentLocation: Sendable {
    /// `caravan.sqlite` and `jwt_secret.json` (0600) in the directory.
    case directory(String)
    /// A PostgreSQL database shared by every instance; the signing secret lives in `caravan_secrets`.
    case database(PostgresStoreConfiguration)

    /// `databaseURL` when one is given (it must be `postgres://…`), with a pool of `poolSize` connections (and as
    /// many transaction threads) that a request waits at most `acquireTimeout` for; else the data directory.
    /// A `warm` pool keeps the connections it opens for an hour of idleness (a server); otherwise they close after
    /// a minute idle (short commands). Both open connections on demand (`PostgresStoreConfiguration.clientConfiguration`). `preparedStatements` as `PostgresStoreConfiguration.preparesStatements`.
    /// `readReplicas` (PostgreSQL only: refused with a data directory) each get a pool of `poolSize` too, that a read
    /// waits at most `replicaAcquireTimeout` for (then the primary serves it). `listenURL` (PostgreSQL only) is where
    /// the `LISTEN` connections go (`PostgresStoreConfiguration.listenConfiguration`).
    package static func resolve(dataDirectory: String, databaseURL: String?, poolSize: Int = 20, acquireTimeout: Duration = .seconds(10),
                               warm: Bool = false, preparedStatements: Bool = true, listenURL: String? = nil, readReplicas: [String] = [],
                               readReplicaSettings: ReadReplicaSettings = ReadReplicaSettings()) throws(CaravanError) -> DeploymentLocation {
        guard let databaseURL else {
            guard listenURL == nil else {
                throw CaravanError(.invalidConfiguration, "listen_url needs a PostgreSQL deployment",
                                   hint: "listen_url (--listen-url, CARAVAN_LISTEN_URL) works with database_url (--database, CARAVAN_DATABASE_URL) only")
            }
            guard readReplicas.isEmpty else {
                throw CaravanError(.invalidConfiguration, "read replicas need a PostgreSQL deployment",
                                   hint: "read_replicas (--read-replica, CARAVAN_READ_REPLICAS) works with database_url (--database, CARAVAN_DATABASE_URL) only; the SQLite data directory has no replicas")
            }
            return .directory(dataDirectory)
        }
        var configuration = try PostgresStoreConfiguration(url: databaseURL)
        configuration.maximumConnections = poolSize
        configuration.minimumConnections = warm ? poolSize : 0
        configuration.preparesStatements = preparedStatements
        configuration.connectionAcquireTimeout = acquireTimeout
        if let listenURL {
            var listen = try PostgresStoreConfiguration(url: listenURL)
            listen.connectTimeout = configuration.connectTimeout
            configuration.listenConfiguration = listen
        }
        for url in readReplicas {
            var replica = try PostgresStoreConfiguration(url: url)
            replica.maximumConnections = poolSize
            replica.preparesStatements = preparedStatements
            replica.connectionAcquireTimeout = min(acquireTimeout, replicaAcquireTimeout)
            replica.connectTimeout = min(replica.connectTimeout, replicaAcquireTimeout)
            configuration.readReplicas.append(replica)
        }
        configuration.readReplicaSettings = readReplicaSettings
        return .database(configuration)
    }

    /// The longest a read waits for a replica's connection (a replica that cannot be reached is then taken out).
    static let replicaAcquireTimeout: Duration = .seconds(2)

    /// The location for a person: the data directory, or "the database NAME on HOST:PORT" (never the URL, which may
    /// hold a password).
    package var displayName: String {
        switch self {
        case .directory(let directory): directory
        case .database(let database): "the database \(database.database) on \(database.hostsDescription)"
        }
    }

    /// Whether a deployment exists here already (the data directory's `caravan.sqlite`); nil for a database, which
    /// must be asked (`Deployment.open(_:migrations:logger:creating:)` does), and for a path that is a file (which
    /// `Deployment.prepare` names as such).
    var directoryHoldsDeployment: Bool? {
        guard case .directory(let directory) = self else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue { return nil }
        return FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("caravan.sqlite"))
    }

    /// The error of a command that needs an existing deployment and found none here.
    package var noDeployment: CaravanError {
        switch self {
        case .directory(let directory):
            CaravanError(.invalidConfiguration, "there is no Caravan deployment in \(directory)",
                         hint: "give --data-dir the directory your server runs on; `caravan serve` or `caravan migrate` creates a new deployment")
        case .database:
            CaravanError(.invalidConfiguration, "\(displayName) holds no Caravan deployment",
                         hint: "check --database-url; `caravan serve` or `caravan migrate` creates a new deployment")
        }
    }

    /// What to log about the location: the data directory, or the database's name, host and port — never the URL,
    /// which may hold a password.
    package var logMetadata: Logger.Metadata {
        switch self {
        case .directory(let directory): ["data.dir": .string(directory)]
        case .database(let database):
            ["database.name": .string(database.database), "database.host": .string(database.host), "database.port": .stringConvertible(database.port),
             "database.hosts": .string(database.hostsDescription),
             "database.pool_size": .stringConvertible(database.maximumConnections),
             "database.pool_acquire_timeout": .string(database.connectionAcquireTimeout.description),
             "database.pool_warm": .stringConvertible(database.minimumConnections > 0),
             "database.prepared_statements": .stringConvertible(database.preparesStatements),
             "database.listen": .string(database.listenConfiguration.map { "\($0.host):\($0.port)/\($0.database)" } ?? "database_url"),
             "database.read_replicas": .string(database.readReplicas.map { "\($0.host):\($0.port)/\($0.database)" }.joined(separator: ","))]
        }
    }
}

/// An open deployment: its store, migrated, and its signing secret. PostgreSQL stores run a connection pool, so
/// `close()` must be called when done (or use `withOpened`).
package final class Deployment: Sendable {
    package let location: DeploymentLocation
    /// The deployment's store (a `SQLiteStore` or a started `PostgresStore`).
    package let store: any Store
    /// The store as its engine's type, for what only that engine does (backups, benchmarks against the raw file).
    package let sqliteStore: SQLiteStore?
    package let postgresStore: PostgresStore?
    private var postgres: PostgresStore? { postgresStore }

    private init(location: DeploymentLocation, store: any Store, sqlite: SQLiteStore? = nil, postgres: PostgresStore? = nil) {
        self.location = location
        self.store = store
        sqliteStore = sqlite
        postgresStore = postgres
    }

    /// The engine the deployment runs on.
    package var engine: SQLDialect { store.dialect }

    /// Records the store's connection pool figures into `metrics`.
    package func record(_ metrics: DatabasePoolMetrics) {
        sqliteStore?.record(metrics)
        postgresStore?.record(metrics)
    }

    /// On PostgreSQL, where several instances may write, the listener that announces every instance's commits to
    /// `publisher` in seq order (LISTEN/NOTIFY plus catch-up reads); nil on SQLite, whose only writer is this process
    /// and whose pipeline announces its own commits.
    package func changeListener(publisher: ChangePublisher, metrics: ChangeListenerMetrics?, logger: Logger) -> ChangeListener? {
        guard let postgresStore else { return nil }
        var configuration = ChangeListener.Configuration()
        configuration.metrics = metrics
        return ChangeListener(store: postgresStore, publisher: publisher, configuration: configuration, logger: logger)
    }

    /// On PostgreSQL with read replicas, the service that checks them every `read_replica_check_interval` (a
    /// replica serves reads only once it has been found replaying within `read_replica_max_lag`); nil otherwise.
    package func readReplicaChecker(clock: some Clock<Duration>) -> (any Service)? {
        postgresStore?.readReplicaChecker(clock: clock)
    }

    /// On PostgreSQL, the NOTIFY channel `name` that every instance of the deployment shares (a service to run);
    /// nil on SQLite, which has one instance.
    package func notificationChannel(named name: String, logger: Logger) -> PostgresNotificationChannel? {
        postgresStore.map { PostgresNotificationChannel(store: $0, name: name, logger: logger) }
    }

    /// Opens the deployment's store for either engine and applies `migrations` not yet applied (each one logged).
    /// Unless `creating`, a location holding no deployment is refused (`DeploymentLocation.noDeployment`) and nothing
    /// is made there: only `serve` and `migrate` create deployments, so a mistyped `--data-dir` never makes a
    /// fresh one whose keys the running server would reject.
    package static func open(_ location: DeploymentLocation, migrations: [Migration], logger: Logger, creating: Bool = false) async throws -> Deployment {
        try await openReporting(location, migrations: migrations, logger: logger, creating: creating).deployment
    }

    /// `open`, saying whether the deployment was created now.
    package static func openReporting(_ location: DeploymentLocation, migrations: [Migration], logger: Logger,
                                      creating: Bool) async throws -> (deployment: Deployment, created: Bool) {
        if location.directoryHoldsDeployment == false, !creating { throw location.noDeployment }
        let deployment = try prepare(location, logger: logger)
        try await deployment.checkReachable(logger: logger)
        await deployment.postgres?.start()
        do {
            let created = try await deployment.isNew()
            if created, !creating { throw location.noDeployment }
            try await deployment.migrate(migrations, logger: logger)
            return (deployment, created)
        } catch {
            await deployment.close()
            throw error
        }
    }

    /// Whether no migration was ever applied here: a deployment being created. The store must be running.
    package func isNew() async throws -> Bool {
        try await store.appliedMigrations().isEmpty
    }

    /// The deployment with its store built but not started nor migrated, for a server whose `ServiceGroup` runs
    /// the store (`storeService`) and which then calls `migrate(_:logger:)`. Opens no connection.
    package static func prepare(_ location: DeploymentLocation, logger: Logger) throws -> Deployment {
        switch location {
        case .directory(let directory):
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw CaravanError(.invalidConfiguration, "the data directory \(directory) is a file, not a directory",
                                   hint: "give --data-dir a directory (it is created when missing)")
            }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let store = try SQLiteStore(path: (directory as NSString).appendingPathComponent("caravan.sqlite"))
            return Deployment(location: location, store: store, sqlite: store)
        case .database(let configuration):
            var postgresLogger = logger
            postgresLogger[metadataKey: "database.name"] = .string(configuration.database)
            let store = PostgresStore(configuration: configuration, logger: postgresLogger)
            return Deployment(location: location, store: store, postgres: store)
        }
    }

    /// On PostgreSQL, opens one connection and closes it, so that an unreachable server is reported at once with its
    /// host, port, database and the cause; nothing to do for SQLite.
    package func checkReachable(logger: Logger) async throws {
        try await postgres?.checkReachable(logger: logger)
    }

    /// On SQLite, the lock of the data directory that a server holds while it runs (`DataDirectoryLock`); nil on
    /// PostgreSQL, where several instances may share the database.
    package func lockDataDirectory() throws -> DataDirectoryLock? {
        guard case .directory(let directory) = location else { return nil }
        return try DataDirectoryLock(directory: directory)
    }

    /// The service that runs the store's connection pool (PostgreSQL), for a `ServiceGroup` in which it must come
    /// before everything that uses the store; nil for SQLite, which needs none.
    package var storeService: (any Service)? { postgres }

    /// Applies `migrations` not yet applied, each one logged. The store must be running (or run concurrently).
    package func migrate(_ migrations: [Migration], logger: Logger) async throws {
        for id in try await store.migrate(migrations) {
            logger.info("migration applied", metadata: ["migration.id": .string(id)])
        }
    }

    /// Opens the deployment, lends it to `body`, and closes it afterwards whatever happens.
    package static func withOpened<T: Sendable>(_ location: DeploymentLocation, migrations: [Migration], logger: Logger, creating: Bool = false,
                                               _ body: (Deployment) async throws -> T) async throws -> T {
        try await open(location, migrations: migrations, logger: logger, creating: creating).lend(to: body)
    }

    /// Lends this open deployment to `body`, and closes it afterwards whatever happens.
    package func lend<T: Sendable>(to body: (Deployment) async throws -> T) async throws -> T {
        do {
            let result = try await body(self)
            await close()
            return result
        } catch {
            await close()
            throw error
        }
    }

    /// The JWT signing secret, made on first use: the data directory's `jwt_secret.json` (SQLite), or row `jwt` of
    /// `caravan_secrets` (PostgreSQL), which every instance on the database shares.
    package func signingSecret(now: Int64) async throws -> SigningSecret {
        switch location {
        case .directory(let directory): try SigningSecret.loadOrCreate(in: directory, now: now)
        case .database: try await SigningSecret.loadOrCreate(in: store, now: now)
        }
    }

    /// Stops the PostgreSQL connection pool (connections close); nothing to do for SQLite. Idempotent.
    package func close() async {
        await postgres?.shutdown()
    }
}
