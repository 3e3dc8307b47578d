import ArgumentParser
import CaravanAuth
import CaravanCore
import CaravanDeployment
import CaravanPostgres
import CaravanRealtime
import CaravanServer
import CaravanSQLite
import CaravanStorage
import CaravanSync
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (REST on /rest/v1, auth on /auth/v1) on the embedded SQLite database or, with --database, on PostgreSQL.")

    @OptionGroup var data: DataOptions
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (default 8080; 0 picks a free port).") var port: Int?
    @Option(name: .customLong("max-rows"), help: "Most rows one read returns; 0 for no cap (default 1000).") var maxRows: Int?
    @Flag(name: .customLong("aggregates-enabled"), help: "Allow aggregate functions in select= (count(), col.sum(), avg, min, max); default off (PGRST123).")
    var aggregatesEnabled = false
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel: String?
    @Option(name: .customLong("query-max-length"), help: "Longest query string, in bytes; longer is 414 (default 32768).") var queryMaxLength: Int?
    @Option(name: .customLong("query-max-filters"), help: "Most filter conditions per request; more is 400 PGRST100 (default 256).") var queryMaxFilters: Int?
    @Option(name: .customLong("query-max-embeds"), help: "Most embedded resources per request; more is 400 PGRST100 (default 32).") var queryMaxEmbeds: Int?
    @Option(name: .customLong("bundle"), help: ArgumentHelp("An app served from a file of its own, as NAME=PATH (repeatable): \(bundleHelp).", valueName: "name=path"))
    var bundles: [String] = []

    /// Runs one `ServiceGroup` until SIGTERM or SIGINT: the store's connection pool (PostgreSQL), the SMTP sender
    /// (when configured) and the server. Graceful shutdown goes in reverse: the server drains its requests and its
    /// background services (change listener, realtime feed, compaction) first, then SMTP, then the pool closes.
    func run() async throws {
        var flags: [String: String] = [:]
        if let host { flags["host"] = host }
        if let port { flags["port"] = String(port) }
        if let maxRows { flags["max_rows"] = String(maxRows) }
        if aggregatesEnabled { flags["aggregates_enabled"] = "true" }
        if let logLevel { flags["log_level"] = logLevel }
        if let queryMaxLength { flags["query_max_length"] = String(queryMaxLength) }
        if let queryMaxFilters { flags["query_max_filters"] = String(queryMaxFilters) }
        if let queryMaxEmbeds { flags["query_max_embeds"] = String(queryMaxEmbeds) }
        let configuration = try data.resolve(extraFlags: flags)
        let logger = makeLogger(level: configuration.logLevel)
        let location = try DeploymentLocation.resolve(dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL,
                                                    poolSize: configuration.databasePool.size, acquireTimeout: configuration.databasePool.acquireTimeout,
                                                    warm: true, preparedStatements: configuration.databasePool.preparedStatements)
        let deployment = try Deployment.prepare(location, logger: logger)
        let bundled = try bundles.map(BundledApp.init(argument:))
        let server = try ServeService(deployment: deployment, configuration: configuration, bundles: bundled, logger: logger)
        let services: [any Service] = [deployment.storeService, server.smtp].compactMap { $0 } + [server]
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// The server of `caravan serve` as a service: `init` builds the pieces that need no database (publisher,
/// pipeline, change listener, senders); `run()` migrates, loads the signing secret, builds the HTTP application
/// and serves until graceful shutdown.
struct ServeService: Service {
    let deployment: Deployment
    let configuration: ServerConfiguration
    /// The apps served from files of their own (`--bundle`), opened when the server starts.
    let bundles: [BundledApp]
    let logger: Logger
    let publisher = ChangePublisher()
    let metrics: ServerMetrics?
    let listener: ChangeListener?
    let pipeline: WritePipeline
    /// The SMTP sender (a service of the same group) when SMTP is configured.
    let smtp: SMTPSender?
    let sender: any MessageSender
    /// The deployment's apps (`--apps`), without the bundled ones.
    let baseCatalog: Catalog

    init(deployment: Deployment, configuration: ServerConfiguration, bundles: [BundledApp], logger: Logger) throws {
        self.deployment = deployment
        self.configuration = configuration
        self.bundles = bundles
        self.logger = logger
        baseCatalog = try deploymentCatalog(configuration)
        let store = deployment.store
        let metrics = configuration.metricsEnabled ? ServerMetrics() : nil
        self.metrics = metrics
        // On PostgreSQL, several instances may write: every change reaches this instance's subscribers through the
        // change-log listener (LISTEN/NOTIFY plus catch-up reads), its own writes included, once and in seq order.
        var listenerConfiguration = ChangeListener.Configuration()
        if let metrics, let postgres = store as? PostgresStore {
            listenerConfiguration.metrics = ChangeListenerMetrics(factory: metrics.factory)
            postgres.record(DatabasePoolMetrics(engine: .postgres, factory: metrics.factory))
        } else if let metrics, let sqlite = store as? SQLiteStore {
            sqlite.record(DatabasePoolMetrics(engine: .sqlite, factory: metrics.factory))
        }
        let publisher = self.publisher
        let listener = (store as? PostgresStore).map { ChangeListener(store: $0, publisher: publisher, configuration: listenerConfiguration, logger: logger) }
        self.listener = listener
        pipeline = WritePipeline(store: store, publisher: publisher, publication: listener == nil ? .afterCommit : .byChangeLog,
                                 metrics: metrics.map { WriteMetrics(factory: $0.factory) })
        let outbox = OutboxSender(pipeline: pipeline, catalog: baseCatalog, logger: logger, clock: .system)
        smtp = configuration.auth.smtp.map { SMTPSender(configuration: $0, fallback: outbox) }
        sender = smtp ?? outbox
    }

    func run() async throws {
        try await deployment.migrate(baseCatalog.migrations, logger: logger)
        let store = deployment.store
        let secret = try await deployment.signingSecret(now: epochSeconds())
        let verifier = await TokenVerifier(secret: secret, rules: configuration.auth.tokenRules, now: epochSeconds)
        let modules = try baseCatalog.modules + bundles.map { try $0.open() }
        let catalog = try Catalog.validated(modules: modules)
        let auth = try await makeAuthService(configuration: configuration, store: store, catalog: catalog, pipeline: pipeline,
                                             secret: secret, verifier: verifier, sender: sender, logger: logger)
        let realtime = makeRealtime(store: store, catalog: catalog, verifier: verifier)
        let storage = makeStorage(catalog: catalog, verifier: verifier)
        try await storage.createDeclaredBuckets(catalog.modules.flatMap(\.buckets))
        try await storage.removeOrphanedBytes()  // before serving: no upload is under way
        let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, pipeline: pipeline, auth: auth, metrics: metrics,
                                       realtime: realtime.service, storage: storage)
        if configuration.auth.smtp == nil {
            logger.warning("auth codes go to the development outbox (the auth_outbox table, and the log at debug level); set auth_smtp_host for real email")
        }
        let metadata: Logger.Metadata = ["server.host": .string(configuration.host), "server.port": .stringConvertible(configuration.port)]
        logger.info("caravan serving", metadata: metadata.merging(deployment.location.logMetadata) { $1 })
        let compactor = ChangeLogCompactor(store: store, retention: configuration.changeLogRetention, clock: ContinuousClock(),
                                           now: epochMicroseconds, logger: logger)
        // Stopped in reverse order after the server: the relay, the listener, the feed, then compaction.
        let scheduled = try ScheduledRPCService.services(catalog: catalog, pipeline: pipeline, clock: ContinuousClock(), logger: logger)
        let background: [any Service] = [compactor, realtime.feed] + (listener.map { [$0] } ?? []) + realtime.relay + scheduled
        try await buildServerService(configuration: servedConfiguration(), services: services, background: background, logger: logger).run()
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

    /// Storage with its bytes in the data directory (`storage/`) on SQLite, in the database on PostgreSQL.
    private func makeStorage(catalog: Catalog, verifier: TokenVerifier) -> StorageService {
        makeStorageService(deployment: deployment, pipeline: pipeline, catalog: catalog, verifier: verifier, configuration: configuration, logger: logger)
    }

    /// Realtime follows the change log in seq order on both engines: the feed reads the log whenever the publisher
    /// reports a commit (this process's on SQLite, every instance's through the listener on PostgreSQL). On
    /// PostgreSQL, broadcasts also reach the sockets of the other instances (NOTIFY caravan_broadcast).
    private func makeRealtime(store: any Store, catalog: Catalog, verifier: TokenVerifier)
        -> (service: RealtimeService, feed: any Service, relay: [any Service]) {
        let relay = (store as? PostgresStore).map { store in
            PostgresBroadcastRelay(channel: PostgresNotificationChannel(store: store, name: PostgresBroadcastRelay.channelName, logger: logger),
                                   origin: UUID().uuidString)
        }
        let realtime = makeRealtimeService(store: store, catalog: catalog, verifier: verifier, limits: configuration.realtime,
                                           relay: relay, logger: logger)
        let feed = ChangeFeed(source: StoreChangeLog(store: store), wakeups: publisher, hub: realtime.hub, logger: logger)
        let relayServices: [any Service] = relay.map { [$0.channel, BroadcastRelayReceiver(relay: $0, hub: realtime.hub, logger: logger)] } ?? []
        return (realtime, feed, relayServices)
    }
}
