import CaravanAuth
import CaravanCore
import CaravanRealtime
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/admin/api`: the admin console's JSON endpoints, for the service role only (the service_role key, or the
/// short-lived service-role token an admin gets from `POST /admin/api/session`). Everything else the console does
/// goes through the public endpoints (`/rest/v1`, `/auth/v1/admin/users`, `/storage/v1`, `/metrics`) as that role.
/// Errors use the PostgREST shape with the stable codes of `AdminAPIError`.
struct AdminController {
    let services: CaravanServices
    let trustForwardedFor: Bool

    static let maxBodyBytes = 64 * 1024
    static let defaultChangeLimit = 100
    static let maxChangeLimit = 1000

    func register(on router: Router<CaravanRequestContext>) {
        let group = router.group("/admin/api").add(middleware: AdminErrorMiddleware(metrics: services.metrics))
        group.post("/session") { request, context in try await self.signIn(request, context) }
        group.get("/session") { _, context in try self.session(context) }
        group.get("/overview") { _, context in try await self.overview(context) }
        group.get("/tables") { _, context in try self.tables(context) }
        group.get("/tables/:name/schema") { _, context in try self.schema(context) }
        group.get("/keys") { _, context in try await self.keys(context) }
        group.get("/requests") { request, context in try self.requestLog(request, context) }
        group.get("/changes") { request, context in try await self.changes(request, context) }
        group.get("/realtime") { _, context in try self.realtime(context) }
        group.post("/users/:id/logout") { _, context in try await self.signOutUser(context) }
    }

    /// The caller must be the service role: 401 without a key or with the anon key, 403 for a user's token.
    static func requireServiceRole(_ context: CaravanRequestContext) throws(AdminAPIError) -> Identity {
        guard let identity = context.identity else { throw .signInRequired }
        switch identity.role {
        case .serviceRole: return identity
        case .anon: throw .signInRequired
        case .authenticated: throw .adminRequired
        }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        AuthController.json(value, status: status)
    }

    // MARK: Session

    /// `POST /admin/api/session`: `{email|phone, password}` (the password grant of `/auth/v1/token`, same limits), or
    /// an admin's access token as the Bearer, exchanged for a service-role token of the access-token lifetime.
    func signIn(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        guard let auth = services.auth else { throw AdminAPIError(status: .notFound, code: "CARAVAN_AUTH_DISABLED", message: "Auth is not served") }
        let token: AdminConsoleToken
        if let bearer = try Self.bearerToken(request) {
            let identity: Identity
            do {
                identity = try await services.verifier.identity(for: bearer)
            } catch {
                throw AdminAPIError.signInRequired
            }
            switch identity.role {
            case .authenticated: break
            case .serviceRole:
                throw AdminAPIError(status: .badRequest, code: "CARAVAN_SERVICE_KEY_NEEDS_NO_SESSION", message: "The service_role key is used as it is")
            case .anon: throw AdminAPIError.signInRequired
            }
            token = try await auth.issueAdminConsoleToken(for: try await auth.requireAdmin(identity))
        } else {
            let body = try await Self.body(request)
            guard case .string(let password)? = body["password"] else { throw AuthError(.validationFailed, "password is required") }
            let address = AuthController.rateLimitKey(Self.clientAddress(request, context, trustForwardedFor: trustForwardedFor))
            token = try await auth.adminConsoleSignIn(email: Self.text(body["email"]), phone: Self.text(body["phone"]), password: password,
                                                      client: AuthClient(ip: address))
        }
        services.metrics?.signIn(method: "admin_console")
        return Self.json(.object([
            ("access_token", .string(token.accessToken)), ("token_type", .string("bearer")), ("expires_at", .integer(token.expiresAt)),
            ("role", .string(Role.serviceRole.rawValue)),
            ("user", .object([("id", .string(token.user.id)), ("email", .string(token.user.email ?? ""))])),
        ]))
    }

    /// `GET /admin/api/session`: who the console is signed in as (checks a pasted service key).
    func session(_ context: CaravanRequestContext) throws -> Response {
        let identity = try Self.requireServiceRole(context)
        var pairs: [(key: String, value: JSONValue)] = [("role", .string(identity.role.rawValue))]
        if case .integer(let expiry)? = identity.claims["exp"] { pairs.append(("expires_at", .integer(expiry))) }
        if let email = identity.claimText(["email"]), identity.claimText(["caravan_admin"]) == "true" {
            pairs.append(("user", .object([("id", .string(identity.claimText(["sub"]) ?? "")), ("email", .string(email))])))
        }
        return Self.json(.object(pairs))
    }

    private static func bearerToken(_ request: Request) throws -> String? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw AdminAPIError.signInRequired }
        return String(parts[1]).trimmingSpaces
    }

    private static func body(_ request: Request) async throws -> JSONValue {
        let buffer = try await request.body(atMost: maxBodyBytes) {
            AuthHTTPError(error: AuthError(.validationFailed, "Request body is too large"), status: .contentTooLarge)
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: Array(buffer.readableBytesView))
        } catch {
            throw AuthError(.badJSON, "Could not parse request body as JSON")
        }
        guard case .object = value else { throw AuthError(.badJSON, "Request body must be a JSON object") }
        return value
    }

    private static func text(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    private static func clientAddress(_ request: Request, _ context: CaravanRequestContext, trustForwardedFor: Bool) -> String {
        if trustForwardedFor, let forwarded = request.headers[AuthController.forwardedForField],
           let first = forwarded.split(separator: ",").first.map({ String($0).trimmingSpaces }), !first.isEmpty {
            return first
        }
        return context.clientIP
    }

    // MARK: Users

    /// `POST /admin/api/users/:id/logout`: ends every session of the user (sign out everywhere).
    func signOutUser(_ context: CaravanRequestContext) async throws -> Response {
        let identity = try Self.requireServiceRole(context)
        guard let auth = services.auth else { throw AdminAPIError(status: .notFound, code: "CARAVAN_AUTH_DISABLED", message: "Auth is not served") }
        try await auth.adminSignOut(identity, id: context.parameters.require("id"))
        return Self.json(.object([]))
    }
}
