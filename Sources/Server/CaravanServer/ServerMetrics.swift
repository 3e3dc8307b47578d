import CaravanCore
import CaravanRealtime
import CaravanSync
package import CoreMetrics
import HTTPTypes
import Hummingbird
import NIOCore
package import Prometheus
import Synchronization

/// The process's metrics: one Prometheus registry (never the global one), the swift-metrics factory writing into it
/// (handed to the write pipeline, the PostgreSQL pool and the change listener), and the server's own counters.
/// `GET /metrics` prints the registry in the Prometheus text format.
package final class ServerMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    package let factory: any MetricsFactory
    private let counters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// The registry in the Prometheus text exposition format (version 0.0.4).
    package func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }

    /// Adds one to the counter `label` with `dimensions` (made on first use, then cached).
    func increment(_ label: String, _ dimensions: [(String, String)]) {
        let key = Self.key(label, dimensions)
        let factory = self.factory
        let counter = counters.withLock { cache in
            if let counter = cache[key] { return counter }
            let counter = CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory)
            cache[key] = counter
            return counter
        }
        counter.increment()
    }

    /// Records one duration on the histogram `label` with `dimensions`.
    func record(_ label: String, _ dimensions: [(String, String)], nanoseconds: Int64) {
        let key = Self.key(label, dimensions)
        let factory = self.factory
        let timer = timers.withLock { cache in
            if let timer = cache[key] { return timer }
            let timer = CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
            cache[key] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        dimensions.reduce(label) { $0 + "\u{1}" + $1.0 + "=" + $1.1 }
    }

    // MARK: What the controllers count

    /// `caravan_sync_pulls_total{status}` / `caravan_sync_pushes_total{status}` (the HTTP status).
    func syncRequest(_ kind: String, status: HTTPResponse.Status) {
        increment("caravan_sync_\(kind)_total", [("status", String(status.code))])
    }

    /// `caravan_sync_mutations_total{status}`: pushed mutations by verdict (`applied`, `rejected`, …).
    func syncMutation(status: String) {
        increment("caravan_sync_mutations_total", [("status", status)])
    }

    /// `caravan_auth_sign_ins_total{method}`: sessions issued (`password`, `refresh_token`, `id_token`, `signup`,
    /// `anonymous`, `verify`).
    func signIn(method: String) {
        increment("caravan_auth_sign_ins_total", [("method", method)])
    }

    /// `caravan_auth_failures_total{route,kind}` (kind: the GoTrue error code) and, for the `over_*` codes,
    /// `caravan_rate_limit_refusals_total{route,kind}`.
    func authFailure(route: String, code: String) {
        increment("caravan_auth_failures_total", [("route", route), ("kind", code)])
        if code.hasPrefix("over_") { increment("caravan_rate_limit_refusals_total", [("route", route), ("kind", code)]) }
    }
}

/// Counts and times every request: `caravan_http_requests_total{route,method,status}` and
/// `caravan_http_request_duration_seconds{route,method,status}` (a histogram). `route` is the matched route template
/// (`/rest/v1/{table}`), so the label set stays small; requests that match no route are `unmatched`.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let metrics: ServerMetrics
    let clock = ContinuousClock()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = clock.now
        let route = context.endpointPath ?? "unmatched"
        var status = HTTPResponse.Status.internalServerError
        defer {
            let elapsed = clock.now - start
            let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            let dimensions = [("route", route), ("method", request.method.rawValue), ("status", String(status.code))]
            metrics.increment("caravan_http_requests_total", dimensions)
            metrics.record("caravan_http_request_duration_seconds", dimensions, nanoseconds: nanoseconds)
        }
        do {
            let response = try await next(request, context)
            status = response.status
            return response
        } catch let error as any HTTPResponseError {
            status = error.status
            throw error
        }
    }
}

/// `GET /metrics`: the service role only, unless `metrics_public`.
struct MetricsController {
    let metrics: ServerMetrics
    let isPublic: Bool
    /// The realtime hub's figures, read at each scrape (nil: no realtime served).
    var realtime: RealtimeMetrics? = nil

    func register(on router: Router<CaravanRequestContext>) {
        router.get("/metrics") { _, context in
            if !isPublic, context.identity?.role != .serviceRole {
                let refusal = CaravanError(.permissionDenied, "Metrics need the service_role key", hint: "Send the service_role key, or set metrics_public")
                return PostgRESTError.response(for: refusal, role: context.identity?.role, logger: context.logger)
            }
            let body = metrics.exposition() + (realtime.map { Self.exposition(of: $0.snapshot) } ?? [])
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .contentLength: String(body.count)],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}

extension MetricsController {
    /// The realtime hub's figures in the text format: open sockets and channels as gauges; events sent, resync signals
    /// and the events those dropped as counters (since the server started).
    static func exposition(of snapshot: RealtimeMetrics.Snapshot) -> [UInt8] {
        let families: [(name: String, type: String, help: String, value: Int)] = [
            ("caravan_realtime_sockets", "gauge", "Open realtime WebSockets.", snapshot.sockets),
            ("caravan_realtime_channels", "gauge", "Joined realtime channels.", snapshot.channels),
            ("caravan_realtime_events_sent_total", "counter", "Realtime frames sent to sockets.", snapshot.eventsSent),
            ("caravan_realtime_resyncs_total", "counter", "Channels told to resync (a socket fell behind).", snapshot.resyncs),
            ("caravan_realtime_events_dropped_by_resync_total", "counter", "Events not sent because their channel was told to resync.",
             snapshot.eventsDroppedByResync),
        ]
        // As swift-prometheus writes its own counters: the TYPE line names the sample, `_total` included.
        let text = families.map { family in
            "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n\(family.name) \(family.value)\n"
        }.joined()
        return Array(text.utf8)
    }
}

extension MutationResult {
    /// The verdict as a metric label: `applied`, `rejected`, or either with `_replayed`.
    var metricsStatus: String {
        let verdict = if case .applied = status { "applied" } else { "rejected" }
        return replayed ? verdict + "_replayed" : verdict
    }
}
