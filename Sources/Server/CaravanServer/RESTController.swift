import CaravanCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/rest/v1`: PostgREST reads, writes and RPC over the storage port and the write pipeline.
struct RESTController {
    let services: CaravanServices
    let maxRows: Int?
    /// Aggregate functions in a read's `select=` (PostgREST's `db-aggregates-enabled`).
    var aggregatesEnabled = false
    /// How many conditions and embeds one request's query may have (its length is checked by `QueryLengthMiddleware`).
    var limits = QueryLimits()

    static let preferField = HTTPField.Name("Prefer")!
    static let acceptProfileField = HTTPField.Name("Accept-Profile")!
    static let contentProfileField = HTTPField.Name("Content-Profile")!
    static let contentRangeField = HTTPField.Name("Content-Range")!
    static let preferenceAppliedField = HTTPField.Name("Preference-Applied")!
    /// Largest request body accepted (bulk imports use the CLI).
    static let maxBodyBytes = 16 * 1024 * 1024

    var catalog: Catalog { services.catalog }

    func register(on router: Router<CaravanRequestContext>) {
        var group = router.group("/rest/v1").add(middleware: PostgRESTErrorMiddleware())
        if let replicated = services.store as? any ReplicatedStore, replicated.hasReadReplicas {
            group = group.add(middleware: ConsistencyTokenMiddleware(store: replicated, recentWrites: services.recentWrites))
        }
        group.get("/") { request, context in try self.openAPI(request, context) }
        group.head("/") { request, context in try self.openAPI(request, context) }
        group.get("/rpc/:function") { request, context in try await self.rpc(request, context, viaGet: true) }
        group.head("/rpc/:function") { request, context in try await self.rpc(request, context, viaGet: true) }
        group.post("/rpc/:function") { request, context in try await self.rpc(request, context, viaGet: false) }
        for method in [HTTPRequest.Method.put, .patch, .delete] {
            group.on("/rpc/:function", method: method) { _, _ -> Response in
                throw CaravanError(.methodNotAllowed, "Only GET, HEAD and POST are allowed for functions")
            }
        }
        group.get("/:table") { request, context in try await self.read(request, context) }
        group.head("/:table") { request, context in try await self.read(request, context) }
        group.post("/:table") { request, context in try await self.insert(request, context) }
        group.patch("/:table") { request, context in try await self.update(request, context) }
        group.delete("/:table") { request, context in try await self.delete(request, context) }
        group.put("/:table") { _, _ -> Response in
            throw CaravanError(.methodNotAllowed, "PUT is not supported; use POST with Prefer: resolution=merge-duplicates")
        }
    }

    /// The root: the OpenAPI description of what the caller may use (PostgREST's `application/openapi+json`).
    func openAPI(_ request: Request, _ context: CaravanRequestContext) throws -> Response {
        let identity = try access(context).identity
        var writer = JSONWriter()
        writer.write(try RESTOpenAPI.document(catalog, for: identity, host: request.head.authority))
        return Response(status: .ok, headers: [.contentType: "application/openapi+json; charset=utf-8"],
                        body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    // MARK: Helpers

    static let consistencyField = HTTPField.Name(ConsistencyToken.headerName)!

    /// Where a read may run: on a read replica, and only on one that has replayed both the request's consistency
    /// token and the caller's latest write through this instance (`RecentWrites`); a token that is not one of ours
    /// sends the read to the primary.
    static func routing(_ request: Request, _ context: CaravanRequestContext, recentWrites: RecentWrites) -> ReadRouting {
        let recent = context.identity.flatMap(recentWrites.latest(of:))
        guard let header = request.headers[consistencyField] else { return .replica(after: recent) }
        guard let token = ConsistencyToken(header: header) else { return .primary }
        return .replica(after: max(token, recent ?? token))
    }

    /// `routing(_:_:recentWrites:)`; with `read_replica_consistency=strong`, after the primary's position now as well.
    func routing(_ request: Request, _ context: CaravanRequestContext) async throws -> ReadRouting {
        let routing = Self.routing(request, context, recentWrites: services.recentWrites)
        guard services.readReplicaConsistency == .strong, case .replica(let after) = routing,
              let replicated = services.store as? any ReplicatedStore, replicated.hasReadReplicas else { return routing }
        let now = try await replicated.consistencyToken()
        return .replica(after: max(now, after ?? now))
    }

    func access(_ context: CaravanRequestContext) throws(CaravanError) -> AccessContext {
        guard let identity = context.identity else { throw CaravanError(.missingCredentials, "No API key found in request") }
        return catalog.access(for: identity)
    }

    func checkProfile(_ request: Request, _ field: HTTPField.Name) throws(CaravanError) {
        if let profile = request.headers[field], profile != "public" {
            throw CaravanError(.invalidSchema, "Invalid schema: \(profile.prefix(64))", hint: "Only the following schemas are exposed: public")
        }
    }

    static func jsonBody(_ request: Request, _ context: CaravanRequestContext) async throws -> JSONValue {
        let buffer = try await request.body(atMost: maxBodyBytes, orElse: tooLarge)
        return try JSONParser.parse(bytes: Array(buffer: buffer))
    }

    /// The refusal of a body past `maxBodyBytes`: `413 CARAVAN_PAYLOAD_TOO_LARGE` in PostgREST's shape.
    static func tooLarge() -> CaravanError {
        CaravanError(.payloadTooLarge, "The request body is larger than \(maxBodyBytes) bytes")
    }
}

/// Puts the primary's WAL position after a write (`POST`, `PATCH`, `DELETE`: rows and RPC) in the answer's
/// `X-Caravan-Consistency` header: a later read that sends it back is served only by a replica that has replayed
/// the write (`ReadRouting.replica(after:)`); the caller's later reads wait for it even without it (`RecentWrites`).
/// Only on a store with read replicas.
struct ConsistencyTokenMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let store: any ReplicatedStore
    let recentWrites: RecentWrites

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard request.method != .get, request.method != .head else { return response }
        do {
            let token = try await store.consistencyToken()
            response.headers[RESTController.consistencyField] = token.header
            if let identity = context.identity { recentWrites.record(token, by: identity) }
        } catch {
            // The write stands; without a token the client's next read has the replicas' staleness bound only.
            context.logger.warning("no consistency token for a write answer", metadata: ["error": "\(String(reflecting: error))"])
        }
        return response
    }
}

/// The `Prefer` preferences (values comma-separated, possibly in several headers).
struct Preferences {
    enum Returning { case minimal, representation, headersOnly }

    var count = false
    var returning = Returning.minimal
    var resolution: ConflictTarget.Resolution?
    var missingDefault = false
    var rollback = false
    /// `max-affected=n` under `handling=strict` (PostgREST 13): the most rows a PATCH, DELETE or set-returning RPC
    /// may touch; past it the request fails with PGRST124 and is rolled back. Ignored under lenient handling.
    var maxAffected: Int?

    init(_ headers: [String]) throws(CaravanError) {
        var strict = false
        var unknown: [String] = []
        for header in headers {
            for item in header.split(separator: ",") {
                switch String(item).trimmingSpaces {
                case "count=exact", "count=planned", "count=estimated": count = true
                case "return=minimal": returning = .minimal
                case "return=representation": returning = .representation
                case "return=headers-only": returning = .headersOnly
                case "resolution=merge-duplicates": resolution = .merge
                case "resolution=ignore-duplicates": resolution = .ignore
                case "missing=default": missingDefault = true
                case "missing=null": missingDefault = false
                case "tx=rollback": rollback = true
                case "tx=commit": rollback = false
                case "handling=strict": strict = true
                case "handling=lenient": strict = false
                case let other:
                    if other.hasPrefix("max-affected="), let limit = Int(other.dropFirst("max-affected=".count)), limit >= 0 {
                        maxAffected = limit
                    } else {
                        unknown.append(other)
                    }
                }
            }
        }
        if !strict { maxAffected = nil }
        if strict, !unknown.isEmpty {
            throw CaravanError(.invalidPreference, "Invalid preferences given with handling=strict", details: "Invalid preferences: \(unknown.joined(separator: ", "))")
        }
    }
}

extension Preferences {
    /// Refuses (PGRST124) a write or call that touched `affected` rows when `max-affected` allows fewer.
    func checkMaxAffected(_ affected: Int) throws(CaravanError) {
        guard let maxAffected, affected > maxAffected else { return }
        throw CaravanError(.maxAffectedExceeded, "Query result exceeds max-affected preference constraint",
                           details: "The query affects \(affected) rows")
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters (RFC 3986), for a query value.
    func addingPercentEncodingForQuery() -> String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}
