import CaravanCore
import CaravanSync
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/sync/v1`: delta pull and idempotent push (wire-protocol §6), over the storage port and the write pipeline.
struct SyncController {
    let puller: SyncPuller
    let pusher: SyncPusher
    let metrics: ServerMetrics?
    /// The store when it reads from replicas: push answers then carry a consistency token.
    let replicated: (any ReplicatedStore)?
    let recentWrites: RecentWrites

    init(services: CaravanServices) {
        metrics = services.metrics
        replicated = (services.store as? any ReplicatedStore).flatMap { $0.hasReadReplicas ? $0 : nil }
        recentWrites = services.recentWrites
        puller = SyncPuller(store: services.store, catalog: services.catalog)
        pusher = SyncPusher(pipeline: services.pipeline, catalog: services.catalog) { error, role in
            // Permanent refusals only: transient and internal failures stop the push instead of being stored.
            PostgRESTError.body(code: PostgRESTError.status(for: error.code, role: role).1, message: error.message, details: error.details, hint: error.hint)
        }
    }

    func register(on router: Router<CaravanRequestContext>) {
        // Errors in the PostgREST shape; a refused table is 403 whatever the role; never cached. The metrics
        // count every answer, refusals included.
        var group = router.group("/sync/v1")
            .add(middleware: ResponseObserverMiddleware { [metrics] request, response in
                metrics?.syncRequest(request.method == .post ? "pushes" : "pulls", status: response.status)
            })
            .add(middleware: PostgRESTErrorMiddleware(refusalIsForbidden: true, noStore: true))
        // A push's answer carries a consistency token: the client's REST reads after it (a rejected row read back)
        // see what the push applied, even from a read replica.
        if let replicated { group = group.add(middleware: ConsistencyTokenMiddleware(store: replicated, recentWrites: recentWrites)) }
        group.get("/pull") { request, context in try await self.pull(request, context) }
        group.post("/push") { request, context in try await self.push(request, context) }
    }

    private static func identity(_ context: CaravanRequestContext) throws(CaravanError) -> Identity {
        guard let identity = context.identity else { throw CaravanError(.missingCredentials, "No API key found in request") }
        return identity
    }

    func pull(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try Self.identity(context)
        let parameters = QueryString(request.uri.query ?? "")
        var limit: Int?
        if let text = parameters.last("limit") {
            guard let value = Int(text), value > 0 else {
                throw CaravanError(.parseError, "limit must be a positive integer", hint: "At most \(SyncPuller.maximumLimit)")
            }
            limit = value
        }
        let cursor = parameters.last("cursor").flatMap { $0.isEmpty ? nil : $0 }
        let requested = parameters.last("tables").map { $0.split(separator: ",").map(String.init) } ?? puller.catalog.allTables.map(\.name)
        try await pusher.pipeline.prepareRead(of: requested, catalog: puller.catalog)
        // Every parameter with a dot is a filter on a pulled table (`places.area_id=eq.olaya`): the pull's shape.
        let filters = parameters.pairs.filter { $0.key.contains(".") }
        let page = try await puller.pull(as: identity, tables: parameters.last("tables"), filters: filters, cursor: cursor,
                                         refetch: parameters.last("refetch"), limit: limit)
        return Self.json(.ok, page.json)
    }

    func push(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try Self.identity(context)
        let buffer = try await request.body(atMost: PushBatch.maximumBytes) {
            CaravanError(.payloadTooLarge, "The push body is larger than \(PushBatch.maximumBytes) bytes", hint: "Send fewer mutations per request")
        }
        let batch = try PushBatch(bytes: Array(buffer: buffer))
        let outcome = try await pusher.push(batch, as: identity)
        if let metrics {
            for result in outcome.results { metrics.syncMutation(status: result.metricsStatus) }
        }
        var pairs: [(key: String, value: JSONValue)] = [("results", .array(outcome.results.map(\.json)))]
        guard let stop = outcome.stoppedBy else {
            var writer = JSONWriter()
            writer.write(JSONValue.object(pairs))
            return Self.json(.ok, writer.bytes)
        }
        // A transient fault: the results so far beside the error; the client retries the rest with the same ids.
        let (status, code, error) = PostgRESTError.wire(for: stop, role: identity.role, logger: context.logger)
        if case .object(let errorPairs) = error { pairs += errorPairs }
        var writer = JSONWriter()
        writer.write(JSONValue.object(pairs))
        return PostgRESTError.response(status: status, code: code, body: writer.bytes, message: stop.message)
    }

    private static func json(_ status: HTTPResponse.Status, _ bytes: [UInt8]) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(bytes.count)],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
