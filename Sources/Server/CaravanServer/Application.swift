package import CaravanAuth
package import CaravanCore
package import CaravanRealtime
package import CaravanStorage
import HTTPTypes
package import Hummingbird
import HummingbirdCore
import NIOHTTP1
package import Logging
package import NIOCore
package import ServiceLifecycle

/// Everything the HTTP layer serves, built by the executable (or a test) and passed in.
package struct CaravanServices: Sendable {
    package let store: any Store
    package let catalog: Catalog
    package let verifier: TokenVerifier
    package let pipeline: WritePipeline
    /// `/auth/v1`; nil serves no auth routes (REST-only tests).
    package let auth: AuthService?
    /// Recorded metrics and `GET /metrics`; nil records and serves none.
    package let metrics: ServerMetrics?
    /// `/realtime/v1`; nil serves no realtime routes.
    package let realtime: RealtimeService?
    /// `/storage/v1`; nil serves no storage routes.
    package let storage: StorageService?
    /// The last requests answered (the admin console's request-log tail); nil keeps none.
    package let recentRequests: RecentRequests?
    /// Each caller's latest write token (read-your-writes from replicas for clients that do not send it back).
    package let recentWrites: RecentWrites
    /// What a REST read on a replica sees beyond its token.
    package let readReplicaConsistency: ReadReplicaConsistency

    package init(store: any Store, catalog: Catalog, verifier: TokenVerifier, pipeline: WritePipeline, auth: AuthService?,
                metrics: ServerMetrics? = nil, realtime: RealtimeService? = nil, storage: StorageService? = nil,
                recentRequests: RecentRequests? = RecentRequests(), recentWrites: RecentWrites = RecentWrites(),
                readReplicaConsistency: ReadReplicaConsistency = .caller) {
        self.readReplicaConsistency = readReplicaConsistency
        self.storage = storage
        self.recentWrites = recentWrites
        self.recentRequests = recentRequests
        self.store = store
        self.catalog = catalog
        self.verifier = verifier
        self.pipeline = pipeline
        self.auth = auth
        self.metrics = metrics
        self.realtime = realtime
    }

    package init(store: any Store, catalog: Catalog, verifier: TokenVerifier, publisher: ChangePublisher) {
        self.init(store: store, catalog: catalog, verifier: verifier, pipeline: WritePipeline(store: store, publisher: publisher), auth: nil)
    }
}

/// The router with every route and middleware; `buildApplication` serves it.
package func buildRouter(configuration: ServerConfiguration, services: CaravanServices) -> Router<CaravanRequestContext> {
    let router = Router(context: CaravanRequestContext.self)
    router.add(middleware: NoSniffMiddleware())
    if let metrics = services.metrics { router.add(middleware: HTTPMetricsMiddleware(metrics: metrics)) }
    router.add(middleware: RequestLogMiddleware(recent: services.recentRequests))
    router.add(middleware: CORSHeadersMiddleware())
    router.add(middleware: NotFoundMiddleware())
    router.add(middleware: QueryLengthMiddleware(maxLength: configuration.queryLimits.maxQueryLength))
    router.add(middleware: APIKeyMiddleware(verifier: services.verifier, publicPaths: configuration.metricsPublic ? ["/metrics"] : []))
    router.get("/") { _, _ in ServiceIndex.response }
    router.get("/health") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#)))
    }
    RESTController(services: services, maxRows: configuration.maxRows, aggregatesEnabled: configuration.aggregatesEnabled,
                   limits: configuration.queryLimits).register(on: router)
    SyncController(services: services).register(on: router)
    FunctionsController(catalog: services.catalog, pipeline: services.pipeline, logger: Logger(label: "caravan.functions")).register(on: router)
    if let auth = services.auth {
        AuthController(auth: auth, verifier: services.verifier, trustForwardedFor: configuration.trustForwardedFor, metrics: services.metrics)
            .register(on: router)
    }
    if let metrics = services.metrics {
        MetricsController(metrics: metrics, isPublic: configuration.metricsPublic, realtime: services.realtime?.hub.metrics).register(on: router)
    }
    if let realtime = services.realtime {
        RealtimeController(realtime: realtime, verifier: services.verifier).register(on: router)
    }
    if let storage = services.storage {
        StorageController(storage: storage).register(on: router)
    }
    if configuration.adminConsole {
        AdminConsoleAssets.bundled.register(on: router)
        AdminController(services: services, trustForwardedFor: configuration.trustForwardedFor).register(on: router)
    }
    return router
}

/// The Caravan HTTP application on `configuration.host:port`, with the WebSocket upgrade of `/realtime/v1/websocket`
/// when `services.realtime` is set. `background` (the realtime change feed, the change listener) runs in the
/// application's service group, so it starts with the server and stops on graceful shutdown (as do the change
/// listener and change-log compaction).
package func buildApplication(configuration: ServerConfiguration, services: CaravanServices, background: [any Service] = [],
                             logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
    var accept: (@Sendable (HTTPRequestHead, any Channel) async -> RealtimeSession?)?
    var running: [any Service] = background
    if let realtime = services.realtime {
        let controller = RealtimeController(realtime: realtime, verifier: services.verifier)
        accept = { head, channel in await controller.accept(head, channel: channel) }
        // Realtime sockets are not connection tasks the server waits for: they are closed on graceful shutdown.
        running.append(RealtimeSocketsShutdown(realtime: realtime))
    }
    return Application(
        router: buildRouter(configuration: configuration, services: services),
        server: guardedServer(accept: accept, limits: configuration.connections, metrics: services.metrics, logger: logger),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Caravan"),
        services: running,
        onServerRunning: onServerRunning,
        logger: logger
    )
}

/// Closes the realtime sockets on graceful shutdown (each gets a `going away` close frame): they are served by
/// their connections' event loops, not by tasks the HTTP server would wait for.
struct RealtimeSocketsShutdown: Service {
    let realtime: RealtimeService

    func run() async throws {
        try? await gracefulShutdown()
        realtime.closeAllSockets()
    }
}

/// Serves until SIGINT or SIGTERM, then shuts down gracefully (in-flight requests finish, background services stop).
package func runServer(configuration: ServerConfiguration, services: CaravanServices, background: [any Service] = [], logger: Logger) async throws {
    let app = buildApplication(configuration: configuration, services: services, background: background, logger: logger)
    try await app.runService()  // default signals: SIGTERM and SIGINT
}

/// The application as one `Service` of the caller's `ServiceGroup`, which then owns the signals and the shutdown
/// order (`caravan serve` runs the store's pool and the SMTP sender beside it, and stops them after it).
/// `onServerRunning` is told the listening channel (its local address holds the port chosen for port 0).
package func buildServerService(configuration: ServerConfiguration, services: CaravanServices, background: [any Service] = [],
                               logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> any Service {
    buildApplication(configuration: configuration, services: services, background: background, logger: logger, onServerRunning: onServerRunning)
}

/// HTTP/1.1 with the WebSocket upgrade, behind the connection guard: heads bounded and answered, slow clients timed
/// out, connections capped (refusals counted in `caravan_http_connections_refused_total`); each refusal and timeout is
/// logged on `logger` (notice: an operator sees it at the default level).
func guardedServer(accept: (@Sendable (HTTPRequestHead, any Channel) async -> RealtimeSession?)?, limits: ConnectionLimits,
                   metrics: ServerMetrics?, logger: Logger) -> HTTPServerBuilder {
    let gate = ConnectionGate(capacity: limits.maxConnections ?? Int.max) {
        metrics?.increment("caravan_http_connections_refused_total", [])
    }
    // The parser's own limits sit above the guard's, so the guard answers first.
    let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
        maxHeaderFieldSize: limits.maxHeaderBytes + limits.maxRequestLineBytes + 1024,
        maxHeaderListSize: limits.maxHeaderBytes + limits.maxRequestLineBytes + 1024)
    let bodyTimeout = limits.bodyTimeout
    let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [RequestBodyTimeout(timeout: bodyTimeout, logger: logger)],
                                           idleTimeout: TimeAmount(limits.idleTimeout), httpDecoderConfiguration: decoder)
    // No WebSocket pings of the server's own: Phoenix clients heartbeat, and realtime drops a socket silent past its
    // heartbeat timeout.
    return HTTPServerBuilder { responder in
        GuardedHTTPChannel(inner: RealtimeUpgradeChannel(responder: responder, http1: http1, maxFrameSize: 1 << 24, accept: accept),
                           limits: limits, gate: gate, logger: logger)
    }
}

/// What `GET /` answers (without a key: it holds no data): where each API lives, for a person who opens the server's
/// address in a browser or with curl.
enum ServiceIndex {
    static let document: JSONValue = .object([
        ("name", .string("caravan")),
        ("rest", .string("/rest/v1/")),
        ("auth", .string("/auth/v1/")),
        ("realtime", .string("/realtime/v1/websocket")),
        ("storage", .string("/storage/v1/")),
        ("sync", .string("/sync/v1/")),
        ("console", .string("/admin")),
        ("health", .string("/health")),
        ("keys", .string("send the anon or service_role key as the apikey header; `caravan keys --data-dir DIR` prints them")),
    ])

    static var response: Response {
        var writer = JSONWriter()
        writer.write(document)
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }
}
