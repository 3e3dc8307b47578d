import CaravanCore
import CaravanTesting
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// An OpenID Connect provider on loopback, for the OAuth tests: discovery, an authorize endpoint that signs the next
/// user in at once (302 back with a code), a token endpoint that checks the client secret and the PKCE verifier and
/// answers an ES256 ID token, and the JWKS. Only what a real provider cannot be here.
final class FakeOIDCProvider: Sendable {
    struct User: Sendable {
        var subject: String
        var email: String?
        var emailVerified: Bool
        var name: String? = nil
    }

    struct Authorization: Sendable {
        let query: [String: String]
        let user: User
    }

    static let clientID = "caravan-web"
    static let clientSecret = "fake-secret"
    let signer = TestIDTokenSigner(keyID: "fake-1")
    /// Another key, not in the JWKS: tokens signed with it must be refused.
    let stranger = TestIDTokenSigner(keyID: "fake-1")
    let issuer = Mutex<String>("")
    let nextUser = Mutex(User(subject: "fake-user-1", email: "ada@example.com", emailVerified: true))
    /// The authorize requests seen, by the code handed out.
    let codes = Mutex<[String: Authorization]>([:])
    let lastAuthorizeQuery = Mutex<[String: String]>([:])
    let now: Int64

    init(now: Int64) {
        self.now = now
    }

    /// Runs the provider on a loopback port for the duration of `body`, which gets its issuer URL and a client of it.
    func serve(_ body: @escaping @Sendable (String, any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let issuer = "http://127.0.0.1:\(client.port ?? 0)"
            self.issuer.withLock { $0 = issuer }
            try await body(issuer, client)
        }
    }

    static func query(_ text: String?) -> [String: String] {
        var out: [String: String] = [:]
        for pair in QueryString(text ?? "").pairs { out[pair.key] = pair.value }
        return out
    }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/.well-known/openid-configuration") { _, _ in
            let issuer = self.issuer.withLock { $0 }
            return FakeOIDCProvider.json(.object([("issuer", .string(issuer)), ("authorization_endpoint", .string(issuer + "/authorize")),
                                      ("token_endpoint", .string(issuer + "/token")), ("jwks_uri", .string(issuer + "/jwks"))]))
        }
        router.get("/jwks") { _, _ in FakeOIDCProvider.json(self.signer.jwks) }
        router.get("/authorize") { request, _ in
            let query = FakeOIDCProvider.query(request.uri.query)
            self.lastAuthorizeQuery.withLock { $0 = query }
            let code = UUID().uuidString
            let user = self.nextUser.withLock { $0 }
            self.codes.withLock { $0[code] = Authorization(query: query, user: user) }
            var target = URLComponents(string: query["redirect_uri"] ?? "")!
            target.queryItems = [URLQueryItem(name: "code", value: code), URLQueryItem(name: "state", value: query["state"])]
            return Response(status: .found, headers: [.location: target.string!])
        }
        router.post("/token") { request, _ in
            let body = try await request.body.collect(upTo: 65536)
            let form = FakeOIDCProvider.query(String(buffer: body))
            guard form["grant_type"] == "authorization_code", form["client_id"] == FakeOIDCProvider.clientID, form["client_secret"] == FakeOIDCProvider.clientSecret,
                  let code = form["code"], let authorization = self.codes.withLock({ $0.removeValue(forKey: code) }),
                  form["redirect_uri"] == authorization.query["redirect_uri"],
                  let verifier = form["code_verifier"], FakeOIDCProvider.s256(verifier) == authorization.query["code_challenge"] else {
                return FakeOIDCProvider.json(.object([("error", .string("invalid_grant"))]), status: .badRequest)
            }
            let token = try self.idToken(for: authorization.user, nonce: authorization.query["nonce"])
            return FakeOIDCProvider.json(.object([("access_token", .string("provider-access")), ("token_type", .string("Bearer")), ("id_token", .string(token))]))
        }
        return router
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: value.jsonText)))
    }

    static func s256(_ verifier: String) -> String { TestIDTokenSigner.base64URL(SHA256.hash(data: Data(verifier.utf8))) }

    static func sha256Hex(_ text: String) -> String { TestIDTokenSigner.sha256Hex(text) }

    /// An ES256 ID token for `user`; every claim can be overridden (`.null` drops it).
    func idToken(for user: User, nonce: String?, audience: String = FakeOIDCProvider.clientID, issuer: String? = nil,
                 expiresAt: Int64? = nil, signedWith key: TestIDTokenSigner? = nil) throws -> String {
        var claims: [(key: String, value: JSONValue)] = [
            ("iss", .string(issuer ?? self.issuer.withLock { $0 })), ("sub", .string(user.subject)), ("aud", .string(audience)),
            ("iat", .integer(now)), ("exp", .integer(expiresAt ?? now + 600)), ("email_verified", .bool(user.emailVerified)),
        ]
        if let email = user.email { claims.append(("email", .string(email))) }
        if let name = user.name { claims.append(("name", .string(name))) }
        if let nonce { claims.append(("nonce", .string(nonce))) }
        return try (key ?? signer).sign(.object(claims))
    }
}
