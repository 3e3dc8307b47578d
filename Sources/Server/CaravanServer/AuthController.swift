import CaravanAuth
import CaravanCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/auth/v1`: the GoTrue subset (wire-protocol §3) over `AuthService`. Every response, errors included, carries
/// `X-Supabase-Api-Version: 2024-01-01` and errors use its `{code, message}` body.
struct AuthController {
    let auth: AuthService
    let verifier: TokenVerifier
    /// Take the client address from `X-Forwarded-For` (only behind a proxy that sets it).
    let trustForwardedFor: Bool
    /// Sign-ins, failures by kind, rate-limit refusals (nil: not counted).
    var metrics: ServerMetrics? = nil

    static let apiVersionField = HTTPField.Name("X-Supabase-Api-Version")!
    static let apiVersion = "2024-01-01"
    static let maxBodyBytes = 64 * 1024

    func register(on router: Router<CaravanRequestContext>) {
        let group = router.group("/auth/v1").add(middleware: GoTrueErrorMiddleware(metrics: metrics))
        group.post("/signup") { request, context in try await self.signUp(request, context) }
        group.post("/token") { request, context in try await self.token(request, context) }
        group.post("/otp") { request, context in try await self.otp(request, context) }
        group.post("/verify") { request, context in try await self.verify(request, context) }
        group.post("/resend") { request, context in try await self.resend(request, context) }
        group.post("/recover") { request, context in try await self.recover(request, context) }
        group.get("/user") { request, context in try await self.currentUser(request, context) }
        group.put("/user") { request, context in try await self.updateUser(request, context) }
        group.post("/logout") { request, context in try await self.logout(request, context) }
        group.get("/settings") { request, context in try await self.settings(request, context) }
        group.get("/admin/users") { request, context in try await self.adminList(request, context) }
        group.post("/admin/users") { request, context in try await self.adminCreate(request, context) }
        group.get("/admin/users/:id") { request, context in try await self.adminGet(request, context) }
        group.put("/admin/users/:id") { request, context in try await self.adminUpdate(request, context) }
        group.delete("/admin/users/:id") { request, context in try await self.adminDelete(request, context) }
        registerOAuth(on: group)
        registerMFA(on: group)
    }

    // MARK: Plumbing

    /// What a successful answer of `route` counts as (`token`: any grant, `signup`, `verify`); nil for the others.
    static func signInMethod(route: String) -> String? {
        switch route {
        case "/auth/v1/token": "token"
        case "/auth/v1/signup": "signup"
        case "/auth/v1/verify": "verify"
        default: nil
        }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var writer = JSONWriter()
        writer.write(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    /// The request body as a JSON object (empty when there is none); `null` members count as absent.
    func body(_ request: Request) async throws -> JSONValue {
        let buffer = try await request.body(atMost: Self.maxBodyBytes) {
            AuthHTTPError(error: AuthError(.validationFailed, "Request body is larger than \(Self.maxBodyBytes / 1024) KiB"), status: .contentTooLarge)
        }
        guard buffer.readableBytes > 0 else { return .object([]) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: Array(buffer.readableBytesView))
        } catch {
            throw AuthError(.badJSON, "Could not parse request body as JSON: \(error.message)")
        }
        guard case .object = value else { throw AuthError(.badJSON, "Request body must be a JSON object") }
        return value
    }

    func string(_ body: JSONValue, _ key: String) throws(AuthError) -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw AuthError(.validationFailed, "\(key) must be a string")
        }
    }

    private func bool(_ body: JSONValue, _ key: String, default fallback: Bool) throws(AuthError) -> Bool {
        switch body[key] {
        case nil, .null?: return fallback
        case .bool(let value)?: return value
        default: throw AuthError(.validationFailed, "\(key) must be a boolean")
        }
    }

    private func object(_ body: JSONValue, _ key: String) throws(AuthError) -> JSONValue? {
        switch body[key] {
        case nil, .null?: return nil
        case .object?: return body[key]
        default: throw AuthError(.validationFailed, "\(key) must be an object")
        }
    }

    /// Every auth request needs a valid API key (or a valid Bearer token), like Supabase's gateway.
    private func requireAPIKey(_ request: Request) async throws {
        if let apikey = request.headers[APIKeyMiddleware.apikeyField] {
            // Only the deployment's keys are API keys; a user's access token is not.
            guard let identity = try? await verifier.identity(for: apikey), identity.role == .anon || identity.role == .serviceRole else {
                throw AuthError(.noAuthorization, "Invalid API key")
            }
            return
        }
        guard request.headers[.authorization] != nil else { throw AuthError(.noAuthorization, "No API key found in request") }
        _ = try await bearer(request)
    }

    /// The identity of the request's Bearer token: 401 without one, 403 `bad_jwt` when it does not verify.
    func bearer(_ request: Request) async throws -> Identity {
        guard let authorization = request.headers[.authorization] else {
            throw AuthError(.noAuthorization, "This endpoint requires a valid Bearer token")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw AuthError(.noAuthorization, "This endpoint requires a valid Bearer token")
        }
        do {
            return try await verifier.identity(for: String(parts[1]))
        } catch {
            let reason = switch error.code {
            case .expiredToken: "token has invalid claims: token is expired"
            case .invalidTokenClaims: "token has invalid claims: \(error.message)"
            default: "unable to parse or verify signature"
            }
            throw AuthError(.badJWT, "invalid JWT: \(reason)")
        }
    }

    /// The client for abuse limits: the TCP peer, or with `trust_forwarded_for` the first `X-Forwarded-For` address;
    /// IPv6 addresses count by their /64 (one subscriber's prefix).
    func client(_ request: Request, _ context: CaravanRequestContext) -> AuthClient {
        var address = context.clientIP
        if trustForwardedFor, let forwarded = request.headers[Self.forwardedForField],
           let first = forwarded.split(separator: ",").first.map({ String($0).trimmingSpaces }), !first.isEmpty {
            address = first
        }
        return AuthClient(ip: Self.rateLimitKey(address))
    }

    static let forwardedForField = HTTPField.Name("X-Forwarded-For")!

    /// An IPv6 address reduced to its first four groups; anything else unchanged.
    static func rateLimitKey(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var groups = address.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if let gap = groups.firstIndex(of: ""), groups.count < 8 {
            groups.replaceSubrange(gap...gap, with: Array(repeating: "0", count: 9 - groups.count))
        }
        return groups.prefix(4).joined(separator: ":") + "::/64"
    }

    // MARK: Endpoints

    func signUp(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        let outcome = try await auth.signUp(email: try string(body, "email"), phone: try string(body, "phone"),
                                            password: try string(body, "password"), data: try object(body, "data"), client: client(request, context))
        return Self.json(outcome.json)
    }

    func token(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        let grant = QueryString(request.uri.query ?? "").last("grant_type") ?? ""
        let session: AuthSession
        switch grant {
        case "password":
            guard let password = try string(body, "password") else { throw AuthError(.validationFailed, "password is required") }
            session = try await auth.signIn(email: try string(body, "email"), phone: try string(body, "phone"), password: password, client: client(request, context))
        case "refresh_token":
            session = try await auth.refresh(try string(body, "refresh_token") ?? "", client: client(request, context))
        case "pkce":
            session = try await auth.exchangeAuthCode(try string(body, "auth_code"), codeVerifier: try string(body, "code_verifier"), client: client(request, context))
        case "id_token":
            guard let provider = try string(body, "provider"), let idToken = try string(body, "id_token") else {
                throw AuthError(.validationFailed, "provider and id_token are required")
            }
            session = try await auth.signInWithIDToken(provider: provider, idToken: idToken, nonce: try string(body, "nonce"), client: client(request, context))
        default:
            throw AuthError(.validationFailed, "unsupported_grant_type")
        }
        return Self.json(session.json)
    }

    func otp(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        try await auth.sendOTP(email: try string(body, "email"), phone: try string(body, "phone"),
                               createUser: try bool(body, "create_user", default: true), data: try object(body, "data"), client: client(request, context))
        return Self.json(.object([]))
    }

    func verify(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        guard let typeName = try string(body, "type"), let type = VerificationType(rawValue: typeName) else {
            throw AuthError(.validationFailed, "Verify requires a verification type")
        }
        guard let token = try string(body, "token"), !token.isEmpty else { throw AuthError(.validationFailed, "Verify requires a token or a token hash") }
        let session = try await auth.verify(email: try string(body, "email"), phone: try string(body, "phone"), token: token, type: type, client: client(request, context))
        return Self.json(session.json)
    }

    func resend(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        try await auth.resend(type: try string(body, "type") ?? "", email: try string(body, "email"), phone: try string(body, "phone"), client: client(request, context))
        return Self.json(.object([]))
    }

    func recover(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let body = try await body(request)
        guard let email = try string(body, "email") else { throw AuthError(.validationFailed, "Password recovery requires an email") }
        try await auth.recover(email: email, client: client(request, context))
        return Self.json(.object([]))
    }

    func currentUser(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        Self.json(try await auth.currentUser(try await bearer(request)).json)
    }

    func updateUser(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let body = try await body(request)
        var changes = UserChanges(email: try string(body, "email"), phone: try string(body, "phone"),
                                  password: try string(body, "password"), userMetadata: try object(body, "data"))
        changes.nonce = try string(body, "nonce")
        return Self.json(try await auth.updateUser(identity, changes: changes).json)
    }

    func logout(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let scopeName = QueryString(request.uri.query ?? "").last("scope") ?? "global"
        guard let scope = LogoutScope(rawValue: scopeName) else {
            throw AuthError(.validationFailed, "Unsupported logout scope \"\(scopeName.prefix(32))\"")
        }
        try await auth.logout(identity, scope: scope)
        return Response(status: .noContent)
    }

    func settings(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await requireAPIKey(request)
        let configuration = auth.configuration
        return Self.json(.object([
            ("external", .object([("email", .bool(true)), ("phone", .bool(true)), ("anonymous_users", .bool(configuration.anonymousEnabled)),
                                  ("apple", .bool(configuration.apple != nil))] + configuration.oauth.providers.map { (key: $0.name, value: JSONValue.bool(true)) })),
            ("disable_signup", .bool(!configuration.signupEnabled)),
            ("mailer_autoconfirm", .bool(!configuration.confirmEmail)),
            ("phone_autoconfirm", .bool(!configuration.confirmPhone)),
        ]))
    }

    // MARK: Admin

    private func newUser(_ body: JSONValue) throws(AuthError) -> NewUser {
        let metadata = try object(body, "user_metadata")
        let data = try object(body, "data")
        return NewUser(email: try string(body, "email"), phone: try string(body, "phone"), password: try string(body, "password"),
                userMetadata: metadata ?? data ?? .object([]), appMetadata: try object(body, "app_metadata"),
                emailConfirmed: try bool(body, "email_confirm", default: false), phoneConfirmed: try bool(body, "phone_confirm", default: false))
    }

    func adminList(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let query = QueryString(request.uri.query ?? "")
        let page = max(Int(query.last("page") ?? "") ?? 1, 1)
        let perPage = min(max(Int(query.last("per_page") ?? "") ?? 50, 1), 1000)
        let filter = query.last("filter")
        let listed = try await auth.adminListUsers(identity, page: page, perPage: perPage, filter: filter)
        var response = Self.json(.object([("users", .array(listed.users.map(\.json))), ("aud", .string("authenticated"))]))
        response.headers[Self.totalCountField] = String(listed.total)
        response.headers[Self.linkField] = Self.pageLinks(path: request.uri.path, page: page, perPage: perPage, total: listed.total, filter: filter)
        return response
    }

    static let totalCountField = HTTPField.Name("X-Total-Count")!
    static let linkField = HTTPField.Name("Link")!

    /// GoTrue's `Link` header of a user list: the next page (when there is one) and the last, as
    /// `</auth/v1/admin/users?page=2&per_page=50>; rel="next", <…page=21…>; rel="last"`.
    static func pageLinks(path: String, page: Int, perPage: Int, total: Int, filter: String?) -> String {
        let last = max((total + perPage - 1) / perPage, 1)
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let filterPart = filter.flatMap { $0.addingPercentEncoding(withAllowedCharacters: allowed) }.map { "&filter=\($0)" } ?? ""
        func link(_ number: Int, _ relation: String) -> String { "<\(path)?page=\(number)&per_page=\(perPage)\(filterPart)>; rel=\"\(relation)\"" }
        return ((page < last ? [link(page + 1, "next")] : []) + [link(last, "last")]).joined(separator: ", ")
    }

    func adminCreate(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let user = try await auth.adminCreateUser(identity, try newUser(try await body(request)))
        return Self.json(user.json)
    }

    func adminGet(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        return Self.json(try await auth.adminGetUser(identity, id: context.parameters.require("id")).json)
    }

    func adminUpdate(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let body = try await body(request)
        let new = try newUser(body)
        var changes = UserChanges(email: new.email, phone: new.phone, password: new.password, appMetadata: new.appMetadata)
        changes.userMetadata = try object(body, "user_metadata")
        changes.confirmEmail = new.emailConfirmed
        changes.confirmPhone = new.phoneConfirmed
        return Self.json(try await auth.adminUpdateUser(identity, id: context.parameters.require("id"), changes: changes).json)
    }

    func adminDelete(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        try await auth.adminDeleteUser(identity, id: context.parameters.require("id"))
        return Self.json(.object([]))
    }
}
