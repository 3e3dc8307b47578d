import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird
import Logging

/// The error answers of each route group, in the shape its clients expect: handlers throw, and the group's middleware
/// turns what they throw into PostgREST, GoTrue, Storage or console JSON with a stable code. One per route group
/// (`router.group(path).add(middleware:)`), so a new route cannot forget it.

/// `/rest/v1` and `/sync/v1`: PostgREST's `{code, message, details, hint}`. A HEAD answer loses its body.
struct PostgRESTErrorMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    /// Answer a refused table 403 whatever the caller's role (sync), instead of PostgREST's 401 for anon.
    var refusalIsForbidden = false
    /// Mark every answer `Cache-Control: no-store` (sync: pages and verdicts are per caller and per moment).
    var noStore = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let refused = refusalIsForbidden && (error as? CaravanError)?.code == .permissionDenied
            response = PostgRESTError.response(for: error, role: refused ? .authenticated : context.identity?.role, logger: context.logger)
        }
        if request.method == .head { response.body = ResponseBody() }
        if noStore { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

/// `/auth/v1`: GoTrue's `{code, error_code, msg}` with its status per route, the API version header on every answer,
/// and sign-ins and auth failures counted in the metrics.
struct GoTrueErrorMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        let route = context.endpointPath ?? "unmatched"
        do {
            response = try await next(request, context)
            if let metrics, response.status == .ok, let method = AuthController.signInMethod(route: route) {
                metrics.signIn(method: method)
            }
        } catch {
            let (authError, status) = GoTrueError.wire(for: error, route: route, logger: context.logger)
            metrics?.authFailure(route: route, code: authError.code.rawValue)
            response = GoTrueError.response(authError, status: status)
        }
        response.headers[AuthController.apiVersionField] = AuthController.apiVersion
        return response
    }
}

/// `/storage/v1`: Storage's `{statusCode, error, message}`. A HEAD answer loses its body.
struct StorageErrorMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = StorageWire.response(for: error, logger: context.logger)
        }
        if request.method == .head { response.body = ResponseBody() }
        return response
    }
}

/// `/admin/api`: the console's answers in PostgREST's shape with `AdminAPIError`'s codes, never cached; a failed
/// console sign-in counts in `caravan_auth_failures_total{route="/admin/api/session"}` as auth's do.
struct AdminErrorMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    static let signInRoute = "/admin/api/session"
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let answer = AdminAPIError.answer(for: error, role: context.identity?.role, logger: context.logger)
            if request.method == .post, request.uri.path == Self.signInRoute {
                metrics?.authFailure(route: Self.signInRoute, code: answer.code)
            }
            response = answer.response
        }
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// Tells `observe` every answer of its group, errors included when it sits outside the group's error middleware.
struct ResponseObserverMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext
    let observe: @Sendable (Request, Response) -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        observe(request, response)
        return response
    }
}

/// A request no route matches gets a JSON 404 in the shape its path's clients expect — GoTrue's under `/auth/v1`,
/// PostgREST's (`PGRST125`) under `/rest/v1`, the edge runtime's under `/functions/v1`, `{"message"}` elsewhere —
/// never an empty body a client can only show as "Unexpected error".
struct NotFoundMiddleware: RouterMiddleware {
    typealias Context = CaravanRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return Self.answer(path: request.uri.path, method: request.method)
        }
    }

    static func answer(path: String, method: HTTPRequest.Method) -> Response {
        let route = "\(method.rawValue) \(path.prefix(200))"
        if path.hasPrefix("/auth/v1/") || path == "/auth/v1" {
            return GoTrueError.response(AuthError(.notFound, "No auth endpoint at \(route)"), status: .notFound)
        }
        if path.hasPrefix("/rest/v1/") || path == "/rest/v1" {
            var writer = JSONWriter()
            writer.write(PostgRESTError.body(code: "PGRST125", message: "Invalid path specified in request URL", details: route, hint: nil))
            return PostgRESTError.response(status: .notFound, code: "PGRST125", body: writer.bytes, message: "Invalid path specified in request URL")
        }
        let body: JSONValue = path.hasPrefix("/functions/v1/")
            ? .object([("code", .string("NOT_FOUND")), ("message", .string("Requested function was not found"))])
            : .object([("message", .string("Not found: \(route)"))])
        return AuthController.json(body, status: .notFound)
    }
}
