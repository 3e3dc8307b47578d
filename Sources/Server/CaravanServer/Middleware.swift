import CaravanAuth
import CaravanCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Logs one structured line per request: request id, method, path (no query, no headers), status, duration; and keeps
/// the request in `recent` (the console's request-log tail) with the role `APIKeyMiddleware` verified.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let clock = ContinuousClock()
    var recent: RecentRequests?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = String(UInt64.random(in: 0 ... .max), radix: 16)
        context.requestID = id
        context.logger[metadataKey: "request.id"] = .string(id)
        // The tail's own polling is left out, or it would fill the ring with itself.
        let kept = request.uri.path == AdminController.requestLogPath ? nil : recent
        let note = kept.map { _ in RequestRoleNote() }
        context.roleNote = note
        let start = clock.now
        var status: HTTPResponse.Status = .internalServerError
        defer {
            let elapsed = clock.now - start
            let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            context.logger.info("request", metadata: [
                "http.method": .string(request.method.rawValue),
                "http.path": .string(request.uri.path),
                "http.status": .stringConvertible(status.code),
                "duration_ms": .string(String(format: "%.3f", Double(micros) / 1000)),
            ])
            kept?.record(method: request.method.rawValue, path: request.uri.path, query: request.uri.query, status: status.code,
                           durationMicroseconds: micros, role: note?.value)
        }
        var response = try await next(request, context)
        status = response.status
        response.headers[HTTPField.Name("X-Request-Id")!] = id
        return response
    }
}

/// Requires an `apikey` header or a Bearer token on every request except `/health` and `/auth/v1` (which checks
/// keys itself and answers in GoTrue's error format), and puts the verified identity in the context. The role
/// comes from the Bearer token when present, else from the apikey.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let verifier: TokenVerifier
    /// Paths served without a key (`/metrics` with `metrics_public`).
    var publicPaths: Set<String> = []

    static let apikeyField = HTTPField.Name("apikey")!

    /// The admin console's static files (no data) and its sign-in, which checks credentials itself.
    static func isAdminConsolePublic(_ path: String, method: HTTPRequest.Method) -> Bool {
        if path == "/admin/api/session" { return method == .post }
        return path == "/admin" || (path.hasPrefix("/admin/") && !path.hasPrefix("/admin/api/") && path != "/admin/api")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/" || path == "/health" || path.hasPrefix("/auth/v1/") || publicPaths.contains(path) || Self.isKeyless(request)
            || Self.isAdminConsolePublic(path, method: request.method) {
            return try await next(request, context)
        }
        var context = context
        do {
            // Realtime clients send the key as the `apikey` query parameter of the WebSocket URL.
            var apikey = request.headers[Self.apikeyField]
            if apikey == nil, path.hasPrefix("/realtime/v1/") {
                apikey = request.uri.queryParameters["apikey"].map(String.init)
            }
            var bearer: String?
            if let authorization = request.headers[.authorization] {
                let parts = authorization.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                    throw CaravanError(.invalidToken, "Expected a Bearer token in the Authorization header")
                }
                bearer = String(parts[1])
            }
            var identity: Identity?
            if let apikey {
                identity = try await verifier.identity(for: apikey)
            }
            if let bearer {
                identity = try await verifier.identity(for: bearer)
            }
            guard let identity else {
                throw CaravanError(.missingCredentials, "No API key found in request", hint: "Send the anon or service_role key in the apikey header")
            }
            context.identity = identity
            context.roleNote?.value = identity.role
        } catch {
            if path.hasPrefix("/storage/v1/") { return StorageWire.response(for: error, logger: context.logger) }
            return PostgRESTError.response(for: error, role: nil, logger: context.logger)
        }
        return try await next(request, context)
    }

    /// Storage requests that need no key, as on Supabase: downloads (and image renders) of objects of public buckets
    /// and through signed URLs (the token in the URL is the credential), so a browser can load them from a link, and uploads through
    /// signed upload URLs (`PUT /object/upload/sign/…?token=…`).
    static func isKeyless(_ request: Request) -> Bool {
        let path = request.uri.path
        if request.method == .put, path.hasPrefix("/storage/v1/object/upload/sign/") { return true }
        guard request.method == .get || request.method == .head else { return false }
        return path.hasPrefix("/storage/v1/object/public/") || path.hasPrefix("/storage/v1/object/sign/")
            || path.hasPrefix("/storage/v1/object/info/public/")
            || path.hasPrefix("/storage/v1/render/image/public/") || path.hasPrefix("/storage/v1/render/image/sign/")
    }
}

/// Browsers (wire-protocol §1): `OPTIONS` preflights answer 200 without a key; every response allows any origin and
/// exposes the headers the clients read.
struct CORSHeadersMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext

    static let allowHeaders = "authorization, apikey, content-type, accept, accept-profile, content-profile, prefer, range, "
        + "range-unit, x-client-info, x-supabase-api-version, x-retry-count, x-upsert, cache-control"
    static let exposeHeaders = "Content-Range, Location, X-Supabase-Api-Version, X-Request-Id"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options {
            return Response(status: .ok, headers: [
                .accessControlAllowOrigin: "*",
                .accessControlAllowMethods: "GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS",
                .accessControlAllowHeaders: request.headers[.accessControlRequestHeaders] ?? Self.allowHeaders,
                .accessControlMaxAge: "3600",
                .contentLength: "0",
            ])
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = "*"
        response.headers[.accessControlExposeHeaders] = Self.exposeHeaders
        return response
    }
}

/// Answers `414 CARAVAN_URI_TOO_LONG` to a request whose query string is longer than `maxLength` bytes, before any
/// route parses it, in the PostgREST error shape (`{code, details, hint, message}`; its `code` and `message` are also
/// what GoTrue and storage clients read).
struct QueryLengthMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let maxLength: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let length = request.uri.query?.utf8.count ?? 0
        guard length > maxLength else { return try await next(request, context) }
        let error = CaravanError(.uriTooLong, "The query string is longer than the limit of \(maxLength) bytes",
                                 details: "It has \(length) bytes; the limit is the server's query_max_length setting",
                                 hint: "Send fewer or shorter parameters, or call an RPC function with a POST body")
        return PostgRESTError.response(for: error, role: context.identity?.role, logger: context.logger)
    }
}

/// Every response says `X-Content-Type-Options: nosniff`: a browser uses the declared type and never guesses an
/// active one from the bytes (user uploads are served from the console's origin).
struct NoSniffMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}
