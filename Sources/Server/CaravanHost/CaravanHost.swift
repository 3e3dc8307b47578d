import CaravanAuth
public import CaravanCore
import CaravanDeployment
import CaravanPostgres
import CaravanRealtime
package import CaravanServer
import CaravanStorage
import CaravanSync
import Foundation
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// The whole Caravan server in-process: the deployment's store (the SQLite file of a data directory, or a PostgreSQL
/// database), migrations, auth, REST, sync, realtime, storage and the console, serving the given app modules.
///
/// `caravan serve` is this host behind a command line; an embedder runs it as one service of its own
/// `ServiceGroup`, which then owns the signals and the shutdown:
///
/// ```swift
/// let host = try CaravanHost(configuration: .init(settings: ["data_dir": "./data", "port": "0"]), apps: [Notes.module],
///                            logger: logger)
/// let group = ServiceGroup(configuration: .init(services: [host], gracefulShutdownSignals: [.sigterm], logger: logger))
/// try await group.run()  // meanwhile, elsewhere: let url = try await host.serving().baseURL
/// ```
///
/// Graceful shutdown stops the server first (in-flight requests finish, background services stop), then the SMTP
/// sender, then the store's connection pool.
public struct CaravanHost: Service {
    /// Where the server listens and keeps its data, and everything else `caravan serve` can be told.
    public struct Configuration: Sendable {
        package var server: ServerConfiguration

        /// The settings by their config-file names (`data_dir`, `database_url`, `host`, `port`, `apps`, `auth_…`;
        /// the operations guide lists them all), over `environment`'s `CARAVAN_…` variables. Unset settings keep
        /// their defaults (`./caravan-data`, `127.0.0.1:8080`); port `0` picks a free port (see `listeningPort()`).
        /// A bad value is refused with an error naming the setting.
        public init(settings: [String: String] = [:], environment: [String: String] = [:]) throws {
            server = try ServerConfiguration.resolve(flags: settings, environment: environment, file: [:])
        }

        package init(_ server: ServerConfiguration) {
            self.server = server
        }
    }

    private let server: ServerService
    private let deployment: Deployment
    private let logger: Logger

    /// A host serving `apps` (when the configuration names `apps`, only those of them). Nothing is opened yet but
    /// the SQLite file of a data directory; `run()` migrates and serves. An unknown app name, or two apps declaring
    /// one table, is refused with an error naming them.
    public init(configuration: Configuration, apps: [AppModule], logger: Logger) throws {
        try self.init(configuration: configuration, apps: apps, bundles: [], logger: logger)
    }

    /// A host that also serves apps opened from files of their own when it starts (`caravan serve --bundle`).
    package init(configuration: Configuration, apps: [AppModule], bundles: [@Sendable () throws -> AppModule], logger: Logger) throws {
        let settings = configuration.server
        let location = try DeploymentLocation.resolve(dataDirectory: settings.dataDirectory, databaseURL: settings.databaseURL,
                                                      poolSize: settings.databasePool.size, acquireTimeout: settings.databasePool.acquireTimeout,
                                                      warm: true, preparedStatements: settings.databasePool.preparedStatements,
                                                      listenURL: settings.databasePool.listenURL,
                                                      readReplicas: settings.databasePool.readReplicas,
                                                      readReplicaSettings: settings.databasePool.readReplicaSettings)
        deployment = try Deployment.prepare(location, logger: logger)
        server = try ServerService(deployment: deployment, configuration: settings,
                                   catalog: try Self.catalog(apps: apps, selecting: settings.apps), bundles: bundles, logger: logger)
        self.logger = logger
    }

    /// The catalog of a deployment: the system tables, auth, storage, and `apps` (those named by `names`, when given).
    package static func catalog(apps: [AppModule], selecting names: [String]?) throws -> Catalog {
        var selected = apps
        if let names {
            selected = try names.map { name in
                guard let app = apps.first(where: { $0.name == name }) else {
                    throw CaravanError(.invalidConfiguration,
                                       "unknown app \(name): the apps of this binary are \(apps.map(\.name).joined(separator: ", "))")
                }
                return app
            }
        }
        return try Catalog.validated(modules: [SystemModule.module, AuthModule.module, StorageModule.module] + selected)
    }

    /// Serves until graceful shutdown (or cancellation) of the calling task, e.g. from the embedder's `ServiceGroup`.
    public func run() async throws {
        let services: [any Service] = [deployment.storeService, server.smtp].compactMap { $0 } + [server]
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        do {
            try await group.run()
        } catch {
            server.address.fail(error)
            throw error
        }
        server.address.fail(CancellationError())  // stopped before it listened: nothing to wait for
    }

    /// Where and how to reach the server, once it listens (waits until then). Throws when the server stopped, or
    /// failed, before listening.
    public func serving() async throws -> Serving {
        try await server.address.value()
    }

    /// A listening server: its port (the chosen one when the configuration asked for port 0), its URL, and the
    /// deployment's API keys (what `caravan keys` prints).
    public struct Serving: Sendable {
        public let port: Int
        /// `http://HOST:PORT`, the base of `/rest/v1`, `/auth/v1`, `/sync/v1`, `/realtime/v1`, `/storage/v1`.
        public let baseURL: String
        /// The `anon` key: what apps send as `apikey`.
        public let anonKey: String
        /// The `service_role` key: bypasses every policy; for servers and tools, never for apps.
        public let serviceRoleKey: String
        /// Whether this start created the deployment (no migration had been applied where it points).
        public let createdDeployment: Bool
    }
}

/// The server part of a host: `init` builds the pieces that need no database (publisher, pipeline, change listener,
/// senders); `run()` migrates, loads the signing secret, builds the HTTP application and serves until graceful
/// shutdown.
struct ServerService: Service {
    let deployment: Deployment
    let configuration: ServerConfiguration
    /// The apps served from files of their own, opened when the server starts.
    let bundles: [@Sendable () throws -> AppModule]
    let logger: Logger
    let publisher = ChangePublisher()
    let metrics: ServerMetrics?
    let listener: ChangeListener?
    let pipeline: WritePipeline
    /// The SMTP sender (a service of the same group) when SMTP is configured.
    let smtp: SMTPSender?
    let sender: any MessageSender
    /// The deployment's apps, without the bundled ones.
    let baseCatalog: Catalog
    /// The port and keys, once listening.
    let address = ServingLatch()

    init(deployment: Deployment, configuration: ServerConfiguration, catalog: Catalog, bundles: [@Sendable () throws -> AppModule],
         logger: Logger) throws {
        self.deployment = deployment
        self.configuration = configuration
        self.bundles = bundles
        self.logger = logger
        baseCatalog = catalog
        let metrics = configuration.metricsEnabled ? ServerMetrics() : nil
        self.metrics = metrics
        if let metrics { deployment.record(DatabasePoolMetrics(engine: deployment.engine, factory: metrics.factory)) }
        // On PostgreSQL, several instances may write: every change reaches this instance's subscribers through the
        // change-log listener (LISTEN/NOTIFY plus catch-up reads), its own writes included, once and in seq order.
        listener = deployment.changeListener(publisher: publisher, metrics: metrics.map { ChangeListenerMetrics(factory: $0.factory) },
                                             logger: logger)
        pipeline = WritePipeline(store: deployment.store, publisher: publisher, publication: listener == nil ? .afterCommit : .byChangeLog,
                                 metrics: metrics.map { WriteMetrics(factory: $0.factory) })
        let outbox = OutboxSender(pipeline: pipeline, catalog: baseCatalog, logger: logger, clock: .system)
        smtp = configuration.auth.smtp.map { SMTPSender(configuration: $0, fallback: outbox) }
        sender = smtp ?? outbox
    }

    func run() async throws {
        let lock = try deployment.lockDataDirectory()
        defer { withExtendedLifetime(lock) {} }
        try await Self.checkPortFree(host: configuration.host, port: configuration.port)
        try await deployment.checkReachable(logger: logger)
        let created = try await deployment.isNew()
        try await deployment.migrate(baseCatalog.migrations, logger: logger)
        if created { logger.notice("created a new deployment in \(deployment.location.displayName)", metadata: deployment.location.logMetadata) }
        let store = deployment.store
        let secret = try await deployment.signingSecret(now: epochSeconds())
        let verifier = await TokenVerifier(secret: secret, rules: configuration.auth.tokenRules, now: epochSeconds)
        let modules = try baseCatalog.modules + bundles.map { try $0() }
        let catalog = try Catalog.validated(modules: modules)
        let auth = try await makeAuthService(configuration: configuration, store: store, catalog: catalog, pipeline: pipeline,
                                             secret: secret, verifier: verifier, sender: sender, logger: logger)
        let realtime = makeRealtime(catalog: catalog, verifier: verifier)
        let storage = makeStorageService(deployment: deployment, pipeline: pipeline, catalog: catalog, verifier: verifier,
                                         configuration: configuration, logger: logger)
        try await storage.createDeclaredBuckets(catalog.modules.flatMap(\.buckets))
        Self.logImageTransformations(storage.images, logger: logger)
        try await storage.removeOrphanedBytes()  // before serving: no upload is under way
        let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, pipeline: pipeline, auth: auth, metrics: metrics,
                                       realtime: realtime.service, storage: storage,
                                       recentRequests: RecentRequests(capacity: RecentRequests.defaultCapacity, clock: .system),
                                       recentWrites: RecentWrites(clock: .system), readReplicaConsistency: configuration.databasePool.readReplicaConsistency)
        if configuration.auth.smtp == nil {
            logger.warning("auth codes go to the development outbox (the auth_outbox table, and the log at debug level); set auth_smtp_host for real email")
        }
        let compactor = ChangeLogCompactor(store: store, retention: configuration.changeLogRetention, clock: ContinuousClock(),
                                           now: epochMicroseconds, logger: logger)
        // Stopped in reverse order after the server: the relay, the listener, the feed, the code deliveries under way, then
        // compaction.
        let scheduled = try ScheduledRPCService.services(catalog: catalog, pipeline: pipeline, clock: ContinuousClock(), logger: logger)
        let replicaChecker = deployment.readReplicaChecker(clock: ContinuousClock())
        let background: [any Service] = [compactor, auth.deliveries, realtime.feed] + (listener.map { [$0] } ?? []) + realtime.relay + scheduled
            + (replicaChecker.map { [$0] } ?? [])
        let served = servedConfiguration()
        let location = deployment.location.logMetadata
        let keys = try await verifier.apiKeys()
        do {
            try await buildServerService(configuration: served, services: services, background: background, logger: logger) { [address, logger] channel in
            let port = channel.localAddress?.port ?? served.port
            address.resolve(CaravanHost.Serving(port: port, baseURL: "http://\(served.host):\(port)", anonKey: keys.anonKey,
                                                serviceRoleKey: keys.serviceRoleKey, createdDeployment: created))
            let metadata: Logger.Metadata = ["server.host": .string(served.host), "server.port": .stringConvertible(port)]
            logger.info("caravan serving", metadata: metadata.merging(location) { $1 })
            }.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw Self.portInUse(host: served.host, port: served.port)
        }
    }

    /// Says once, at start, whether `/storage/v1/render/image` renders: libvips's version, or why it is off.
    static func logImageTransformations(_ images: ImageTransformations, logger: Logger) {
        switch images.renderer {
        case .success(let renderer):
            logger.info("storage image transformations on", metadata: ["storage.image_renderer": .string(renderer.description)])
        case .failure(let error):
            logger.notice("storage image transformations off: /storage/v1/render/image answers 501 FeatureNotEnabled (install libvips, Debian package libvips42, to turn them on)",
                          metadata: ["error.detail": .string(error.internalDetail ?? error.message)])
        }
    }

    /// Refuses at once a port another process listens on (before the services start and log), by binding it the way
    /// the server will; the server's own bind is still checked (`portInUse`) for a race.
    static func checkPortFree(host: String, port: Int) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close().get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw portInUse(host: host, port: port)
        } catch {
            // Any other failure (an address not on this machine) is the server's own bind's to report.
        }
    }

    static func portInUse(host: String, port: Int) -> CaravanError {
        CaravanError(.invalidConfiguration, "port \(port) on \(host) is already in use by another process",
                     hint: "stop what listens there, or choose another port with --port (0 picks a free one)")
    }

    /// The configuration with the connection cap in force: the soft descriptor limit is raised to the hard one first,
    /// and the cap kept below it (logged as `server.max_connections`).
    private func servedConfiguration() -> ServerConfiguration {
        var served = configuration
        let descriptors = DescriptorLimit.raiseSoftLimit() ?? 1024
        served.connections.maxConnections = configuration.connections.effectiveMaxConnections(descriptorLimit: descriptors)
        logger.info("connection limits", metadata: [
            "server.descriptor_limit": .stringConvertible(descriptors),
            "server.max_connections": .stringConvertible(served.connections.maxConnections ?? 0),
        ])
        return served
    }

    /// Realtime follows the change log in seq order on both engines: the feed reads the log whenever the publisher
    /// reports a commit (this process's on SQLite, every instance's through the listener on PostgreSQL). On
    /// PostgreSQL, broadcasts also reach the sockets of the other instances (NOTIFY caravan_broadcast).
    private func makeRealtime(catalog: Catalog, verifier: TokenVerifier) -> (service: RealtimeService, feed: any Service, relay: [any Service]) {
        let store = deployment.store
        let relay = deployment.notificationChannel(named: PostgresBroadcastRelay.channelName, logger: logger).map { channel in
            PostgresBroadcastRelay(channel: channel, origin: UUID().uuidString)
        }
        let realtime = makeRealtimeService(store: store, catalog: catalog, verifier: verifier, limits: configuration.realtime,
                                           relay: relay, logger: logger)
        let feed = ChangeFeed(source: StoreChangeLog(store: store), wakeups: publisher, hub: realtime.hub, logger: logger)
        let relayServices: [any Service] = relay.map { [$0.channel, BroadcastRelayReceiver(relay: $0, hub: realtime.hub, logger: logger)] } ?? []
        return (realtime, feed, relayServices)
    }
}

/// How to reach a server, told once it listens: waiters before then are resumed with it, or with the error the
/// server stopped with.
final class ServingLatch: Sendable {
    typealias Value = CaravanHost.Serving

    private enum State {
        case waiting([CheckedContinuation<Value, any Error>])
        case listening(Value)
        case failed(any Error)
    }

    private let state = Mutex(State.waiting([]))

    func resolve(_ serving: Value) { finish(.success(serving)) }

    func fail(_ error: any Error) { finish(.failure(error)) }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let known: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .waiting(let waiters):
                    state = .waiting(waiters + [continuation])
                    return nil
                case .listening(let serving): return .success(serving)
                case .failed(let error): return .failure(error)
                }
            }
            if let known { continuation.resume(with: known) }
        }
    }

    /// The first outcome wins; later ones are ignored.
    private func finish(_ outcome: Result<Value, any Error>) {
        let waiters: [CheckedContinuation<Value, any Error>] = state.withLock { state in
            guard case .waiting(let waiters) = state else { return [] }
            switch outcome {
            case .success(let serving): state = .listening(serving)
            case .failure(let error): state = .failed(error)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
