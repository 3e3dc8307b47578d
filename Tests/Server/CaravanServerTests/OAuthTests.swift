import CaravanAuth
import CaravanCore
import CaravanServer
import CaravanTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// OAuth with an OIDC provider as GoTrue serves it, against `FakeOIDCProvider` on loopback, through the real router
/// and store: `/authorize` → provider → `/callback` → `redirect_to?code=` → `grant_type=pkce` (or the implicit
/// flow's fragment), and `grant_type=id_token` for a configured provider.
@Suite struct OAuthTests {
    static let now: Int64 = 1_800_000_000
    static let siteURL = "http://app.example/home"

    /// Caravan with auth and the fake provider configured as `fake`; the clock can be moved on.
    struct Harness {
        let app: Application<RouterResponder<CaravanRequestContext>>
        let auth: AuthService
        let keys: APIKeys
        let provider: FakeOIDCProvider
        let providerClient: any TestClientProtocol
        let issuer: String
        /// Seconds the auth clock is ahead of `OAuthTests.now`.
        let offset: Offset

        final class Offset: Sendable {
            let seconds = Mutex<Int64>(0)
            func set(_ value: Int64) { seconds.withLock { $0 = value } }
        }

        static func run(engine: Engine, _ body: @escaping @Sendable (Harness) async throws -> Void) async throws {
            let provider = FakeOIDCProvider(now: OAuthTests.now)
            try await provider.serve { issuer, client in
                let harness = try await Harness(engine: engine, provider: provider, client: client, issuer: issuer)
                try await body(harness)
            }
        }

        init(engine: Engine, provider: FakeOIDCProvider, client: any TestClientProtocol, issuer: String) async throws {
            let catalog = Catalog(modules: [SystemModule.module, AuthModule.module])
            let store = try await engine.makeStore(migrations: catalog.migrations)
            let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
            let directory = NSTemporaryDirectory() + "caravan-oauth-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
            let verifier = await TokenVerifier(secret: secret, now: { OAuthTests.now })
            let lookup: [String: String] = [
                "auth_bcrypt_cost": "4", "auth_confirm_email": "true", "auth_site_url": OAuthTests.siteURL, "auth_uri_allow_list": "myapp://callback, http://localhost:3000/**",
                "auth_oidc_providers": "fake", "auth_oidc_fake_issuer": issuer, "auth_oidc_fake_client_id": FakeOIDCProvider.clientID,
                "auth_oidc_fake_secret": FakeOIDCProvider.clientSecret, "auth_oidc_fake_additional_client_ids": "ios-app",
            ]
            let configuration = try AuthConfiguration.resolve { lookup[$0] }
            let offset = Offset()
            let clock = WallClock { (OAuthTests.now + offset.seconds.withLock { $0 }) * 1_000_000 }
            let logger = Logger(label: "test")
            auth = try await AuthService(store: store, pipeline: pipeline, catalog: catalog, secret: secret, verifier: verifier,
                                         configuration: configuration, baseURL: "http://test",
                                         sender: OutboxSender(pipeline: pipeline, catalog: catalog, logger: logger, clock: .fixed(microseconds: 0)),
                                         threadPool: .singleton, logger: logger, clock: clock, ids: .random)
            let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, pipeline: pipeline, auth: auth)
            app = Application(router: buildRouter(configuration: ServerConfiguration(), services: services))
            keys = try await verifier.apiKeys()
            self.provider = provider
            self.providerClient = client
            self.issuer = issuer
            self.offset = offset
        }

        func send(_ uri: String, _ method: HTTPRequest.Method = .get, body: JSONValue? = nil, bearer: String? = nil) async throws -> TestResponse {
            var headers: HTTPFields = [.contentType: "application/json", HTTPField.Name("apikey")!: keys.anonKey]
            if let bearer { headers[.authorization] = "Bearer \(bearer)" }
            let frozen = headers
            return try await app.test(.router) { client in
                try await client.execute(uri: uri, method: method, headers: frozen, body: body.map { ByteBuffer(string: $0.jsonText) })
            }
        }

        /// `/authorize` → the provider (which signs `provider.nextUser` in) → `/callback`: the final `Location`.
        func signIn(redirectTo: String?, codeChallenge: String?, scopes: String? = nil) async throws -> String {
            var query = [("provider", "fake")]
            if let redirectTo { query.append(("redirect_to", redirectTo)) }
            if let codeChallenge { query += [("code_challenge", codeChallenge), ("code_challenge_method", "s256")] }
            if let scopes { query.append(("scopes", scopes)) }
            let authorize = try await send("/auth/v1/authorize?" + OAuthTests.form(query))
            #expect(authorize.status == .found)
            let atProvider = try #require(authorize.header("Location").flatMap(URLComponents.init(string:)))
            let back = try await providerClient.execute(uri: atProvider.path + "?" + (atProvider.percentEncodedQuery ?? ""), method: .get)
            #expect(back.status == .found)
            let callback = try #require(back.headers[.location].flatMap(URLComponents.init(string:)))
            #expect(callback.host == "test" && callback.path == "/auth/v1/callback")
            let done = try await send(callback.path + "?" + (callback.percentEncodedQuery ?? ""))
            #expect(done.status == .found)
            return try #require(done.header("Location"))
        }

        func exchange(_ code: String, verifier: String) async throws -> TestResponse {
            try await send("/auth/v1/token?grant_type=pkce", .post, body: .object([("auth_code", .string(code)), ("code_verifier", .string(verifier))]))
        }

        func idTokenSignIn(_ token: String, nonce: String?, provider: String = "fake") async throws -> TestResponse {
            var body: [(key: String, value: JSONValue)] = [("provider", .string(provider)), ("id_token", .string(token))]
            if let nonce { body.append(("nonce", .string(nonce))) }
            return try await send("/auth/v1/token?grant_type=id_token", .post, body: .object(body))
        }
    }

    static func form(_ pairs: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    static let verifier = "a-pkce-code-verifier-of-the-app-that-is-long-enough-0123456789"
    static var challenge: String { FakeOIDCProvider.s256(verifier) }

    static func queryOf(_ url: String) -> [String: String] { FakeOIDCProvider.query(URLComponents(string: url)?.percentEncodedQuery) }
    static func fragmentOf(_ url: String) -> [String: String] { FakeOIDCProvider.query(URLComponents(string: url)?.percentEncodedFragment) }

    @Test func authorizeSendsTheBrowserToTheProviderWithStatePKCEAndNonce() async throws {
        try await Harness.run(engine: .sqlite) { harness in
            let response = try await harness.send("/auth/v1/authorize?" + Self.form([
                ("provider", "fake"), ("redirect_to", "myapp://callback"), ("code_challenge", Self.challenge), ("code_challenge_method", "s256"),
                ("scopes", "calendar email")]))
            #expect(response.status == .found)
            let location = try #require(response.header("Location"))
            #expect(location.hasPrefix(harness.issuer + "/authorize?"))
            let query = Self.queryOf(location)
            #expect(query["response_type"] == "code")
            #expect(query["client_id"] == FakeOIDCProvider.clientID)
            #expect(query["redirect_uri"] == "http://test/auth/v1/callback")
            #expect(query["scope"] == "openid email profile calendar")
            #expect((query["state"]?.count ?? 0) > 40)
            // The provider gets Caravan's own PKCE challenge and a nonce hash, never the app's challenge.
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["code_challenge"]?.count == 43 && query["code_challenge"] != Self.challenge)
            #expect(query["nonce"]?.count == 64)

            let unknown = try await harness.send("/auth/v1/authorize?provider=github")
            #expect(unknown.status == .badRequest && unknown.errorCode == "validation_failed")
            let halfPKCE = try await harness.send("/auth/v1/authorize?provider=fake&code_challenge=" + Self.challenge)
            #expect(halfPKCE.status == .badRequest && halfPKCE.errorCode == "validation_failed")
            let settings = try await harness.send("/auth/v1/settings")
            #expect(settings.json?["external"]?["fake"] == .bool(true))
        }
    }

    @Test(arguments: Engine.allCases)
    func pkceFlowIssuesASessionOnceForTheRightVerifier(engine: Engine) async throws {
        try await Harness.run(engine: engine) { harness in
            harness.provider.nextUser.withLock { $0 = .init(subject: "sub-ada", email: "Ada@Example.com", emailVerified: true, name: "Ada") }
            let first = try await harness.signIn(redirectTo: "myapp://callback", codeChallenge: Self.challenge)
            #expect(first.hasPrefix("myapp://callback?code="))
            let code = try #require(Self.queryOf(first)["code"])
            let wrong = try await harness.exchange(code, verifier: Self.verifier + "x")
            #expect(wrong.status == .badRequest && wrong.errorCode == "bad_code_verifier")
            // A wrong verifier spends the code.
            let afterWrong = try await harness.exchange(code, verifier: Self.verifier)
            #expect(afterWrong.status == .notFound && afterWrong.errorCode == "flow_state_not_found")

            let second = try await harness.signIn(redirectTo: "myapp://callback", codeChallenge: Self.challenge)
            let secondCode = try #require(Self.queryOf(second)["code"])
            let session = try await harness.exchange(secondCode, verifier: Self.verifier)
            #expect(session.status == .ok)
            #expect(session.json?["token_type"] == .string("bearer"))
            #expect(session.json?["user"]?["email"] == .string("ada@example.com"))
            #expect(session.json?["user"]?["user_metadata"]?["full_name"] == .string("Ada"))
            #expect(session.json?["user"]?["app_metadata"]?["provider"] == .string("fake"))
            guard case .array(let identities)? = session.json?["user"]?["identities"] else { Issue.record("no identities"); return }
            #expect(identities.count == 1 && identities.first?["provider"] == .string("fake") && identities.first?["id"] == .string("sub-ada"))
            let reused = try await harness.exchange(secondCode, verifier: Self.verifier)
            #expect(reused.status == .notFound && reused.errorCode == "flow_state_not_found")
            // The session is a real one: its access token reads the user.
            guard case .string(let access)? = session.json?["access_token"] else { Issue.record("no token"); return }
            let user = try await harness.send("/auth/v1/user", bearer: access)
            #expect(user.json?["email"] == .string("ada@example.com"))

            let missing = try await harness.send("/auth/v1/token?grant_type=pkce", .post, body: .object([("auth_code", .string(secondCode))]))
            #expect(missing.status == .badRequest && missing.errorCode == "validation_failed")
        }
    }

    @Test(arguments: Engine.allCases)
    func anAuthCodeExpires(engine: Engine) async throws {
        try await Harness.run(engine: engine) { harness in
            let location = try await harness.signIn(redirectTo: "http://localhost:3000/auth/done?from=test", codeChallenge: Self.challenge)
            #expect(location.hasPrefix("http://localhost:3000/auth/done?from=test&code="))
            let code = try #require(Self.queryOf(location)["code"])
            harness.offset.set(301)
            let expired = try await harness.exchange(code, verifier: Self.verifier)
            #expect(expired.status == .unprocessableContent && expired.errorCode == "flow_state_expired")
        }
    }

    @Test func implicitFlowRedirectsWithTheTokensInTheFragment() async throws {
        try await Harness.run(engine: .sqlite) { harness in
            let location = try await harness.signIn(redirectTo: "myapp://callback", codeChallenge: nil)
            #expect(location.hasPrefix("myapp://callback#"))
            let fragment = Self.fragmentOf(location)
            #expect(fragment["token_type"] == "bearer" && fragment["expires_in"] == "3600" && fragment["refresh_token"] != nil)
            let access = try #require(fragment["access_token"])
            let user = try await harness.send("/auth/v1/user", bearer: access)
            #expect(user.json?["email"] == .string("ada@example.com"))
        }
    }

    @Test func redirectToOffTheAllowListFallsBackToTheSiteURL() async throws {
        try await Harness.run(engine: .sqlite) { harness in
            let evil = try await harness.signIn(redirectTo: "https://evil.example/steal", codeChallenge: Self.challenge)
            #expect(evil.hasPrefix(Self.siteURL + "?code="))
            let lookalike = try await harness.signIn(redirectTo: "http://localhost:3000.evil.example/x", codeChallenge: Self.challenge)
            #expect(lookalike.hasPrefix(Self.siteURL + "?code="))
            let none = try await harness.signIn(redirectTo: nil, codeChallenge: Self.challenge)
            #expect(none.hasPrefix(Self.siteURL + "?code="))
            let sameHost = try await harness.signIn(redirectTo: "http://app.example/other", codeChallenge: Self.challenge)
            #expect(sameHost.hasPrefix("http://app.example/other?code="))
        }
    }

    @Test func callbackFailuresRedirectWithGoTruesErrorParameters() async throws {
        try await Harness.run(engine: .sqlite) { harness in
            let garbage = try await harness.send("/auth/v1/callback?code=x&state=not-a-state")
            #expect(garbage.status == .found)
            let location = try #require(garbage.header("Location"))
            #expect(location.hasPrefix(Self.siteURL + "?"))
            #expect(Self.queryOf(location)["error"] == "invalid_request" && Self.queryOf(location)["error_code"] == "bad_oauth_state")
            #expect(Self.fragmentOf(location)["error_description"] == "OAuth state is invalid")

            // A real state, but the provider says no.
            let authorize = try await harness.send("/auth/v1/authorize?provider=fake&redirect_to=myapp%3A%2F%2Fcallback")
            let authorizeLocation = try #require(authorize.header("Location"))
            let state = try #require(Self.queryOf(authorizeLocation)["state"])
            let denied = try await harness.send("/auth/v1/callback?" + Self.form([("error", "access_denied"), ("error_description", "User said no"), ("state", state)]))
            let deniedLocation = try #require(denied.header("Location"))
            #expect(deniedLocation.hasPrefix("myapp://callback?"))
            #expect(Self.queryOf(deniedLocation)["error"] == "access_denied" && Self.queryOf(deniedLocation)["error_description"] == "User said no")
            // A code the provider never issued: its token endpoint refuses.
            let forged = try await harness.send("/auth/v1/callback?" + Self.form([("code", "forged"), ("state", state)]))
            let forgedLocation = try #require(forged.header("Location"))
            #expect(Self.queryOf(forgedLocation)["error_code"] == "bad_oauth_callback")
            // A state past its lifetime.
            harness.offset.set(601)
            let late = try await harness.send("/auth/v1/callback?" + Self.form([("code", "x"), ("state", state)]))
            let lateLocation = try #require(late.header("Location"))
            #expect(Self.queryOf(lateLocation)["error_code"] == "bad_oauth_state")
        }
    }

    @Test(arguments: Engine.allCases)
    func idTokenSignInForAConfiguredProvider(engine: Engine) async throws {
        try await Harness.run(engine: engine) { harness in
            let provider = harness.provider
            let user = FakeOIDCProvider.User(subject: "sub-grace", email: "grace@example.com", emailVerified: true)
            let nonce = "raw-nonce-of-the-app"
            let good = try await harness.idTokenSignIn(try provider.idToken(for: user, nonce: FakeOIDCProvider.sha256Hex(nonce)), nonce: nonce)
            #expect(good.status == .ok)
            #expect(good.json?["user"]?["email"] == .string("grace@example.com"))
            // The provider may also be named by its issuer; another client id of the project is accepted.
            let byIssuer = try await harness.idTokenSignIn(try provider.idToken(for: user, nonce: nil, audience: "ios-app"), nonce: nil, provider: harness.issuer)
            #expect(byIssuer.status == .ok)
            #expect(byIssuer.json?["user"]?["id"] == good.json?["user"]?["id"])

            let refusals: [(String, String?)] = [
                (try provider.idToken(for: user, nonce: nil, signedWith: provider.stranger), nil),
                (try provider.idToken(for: user, nonce: nil, audience: "someone-else"), nil),
                (try provider.idToken(for: user, nonce: nil, issuer: "https://accounts.example"), nil),
                (try provider.idToken(for: user, nonce: nil, expiresAt: OAuthTests.now - 1), nil),
                (try provider.idToken(for: user, nonce: FakeOIDCProvider.sha256Hex(nonce)), "another-nonce"),
                (try provider.idToken(for: user, nonce: FakeOIDCProvider.sha256Hex(nonce)), nil),
            ]
            for (token, sentNonce) in refusals {
                let refused = try await harness.idTokenSignIn(token, nonce: sentNonce)
                #expect(refused.status == .badRequest && refused.errorCode == "validation_failed", "\(refused.text)")
            }
            let unconfigured = try await harness.idTokenSignIn(try provider.idToken(for: user, nonce: nil), nonce: nil, provider: "google")
            #expect(unconfigured.status == .badRequest && unconfigured.errorCode == "provider_disabled")
        }
    }

    @Test(arguments: Engine.allCases)
    func identitiesLinkToAConfirmedEmailOnlyWhenTheProviderVerifiedIt(engine: Engine) async throws {
        try await Harness.run(engine: engine) { harness in
            let provider = harness.provider
            let owner = try await harness.auth.adminCreateUser(.serviceRole, NewUser(email: "lin@example.com", password: "long-enough-1", emailConfirmed: true))
            let unverified = FakeOIDCProvider.User(subject: "sub-unverified", email: "lin@example.com", emailVerified: false)
            let stranger = try await harness.idTokenSignIn(try provider.idToken(for: unverified, nonce: nil), nonce: nil)
            #expect(stranger.status == .ok)
            #expect(stranger.json?["user"]?["id"] != .string(owner.id))
            #expect(stranger.json?["user"]?["email"] == .string(""))

            let verified = FakeOIDCProvider.User(subject: "sub-lin", email: "LIN@example.com", emailVerified: true)
            let linked = try await harness.idTokenSignIn(try provider.idToken(for: verified, nonce: nil), nonce: nil)
            #expect(linked.json?["user"]?["id"] == .string(owner.id))
            guard case .array(let identities)? = linked.json?["user"]?["identities"] else { Issue.record("no identities"); return }
            #expect(Set(identities.compactMap { if case .string(let p)? = $0["provider"] { p } else { nil } }) == ["email", "fake"])
            #expect(linked.json?["user"]?["app_metadata"]?["providers"] == .array([.string("email"), .string("fake")]))
            // Signing in again through the browser flow finds the same identity.
            provider.nextUser.withLock { $0 = verified }
            let location = try await harness.signIn(redirectTo: "myapp://callback", codeChallenge: Self.challenge)
            let session = try await harness.exchange(try #require(Self.queryOf(location)["code"]), verifier: Self.verifier)
            #expect(session.json?["user"]?["id"] == .string(owner.id))

            // An unconfirmed address is not linked even to a verified identity.
            let pending = try await harness.auth.adminCreateUser(.serviceRole, NewUser(email: "mo@example.com", password: "long-enough-1"))
            let mo = FakeOIDCProvider.User(subject: "sub-mo", email: "mo@example.com", emailVerified: true)
            let notLinked = try await harness.idTokenSignIn(try provider.idToken(for: mo, nonce: nil), nonce: nil)
            #expect(notLinked.status == .ok && notLinked.json?["user"]?["id"] != .string(pending.id))
        }
    }

    @Test func providersAreConfiguredByNameInTheConfigFileAndEnvironment() throws {
        let path = NSTemporaryDirectory() + "caravan-oauth-\(UUID().uuidString).json"
        try Data(#"{"auth_oidc_providers": "corp", "auth_oidc_corp_issuer": "https://id.corp.example", "auth_oidc_corp_client_id": "web", "auth_oidc_corp_scopes": "email groups", "auth_site_url": "https://app.corp.example"}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let file = try ServerConfiguration.readFile(at: path)
        let configuration = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_AUTH_OIDC_CORP_SECRET": "s3cret"], file: file)
        let corp = try #require(configuration.auth.oauth.provider(named: "corp"))
        #expect(corp.issuer == "https://id.corp.example" && corp.clientID == "web" && corp.clientSecret == "s3cret")
        #expect(corp.scopes == ["openid", "email", "groups"])
        #expect(configuration.auth.oauth.siteURL == "https://app.corp.example")

        try Data(#"{"auth_oidc_corp_colour": "blue"}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CaravanError.self) { try ServerConfiguration.readFile(at: path) }
        #expect(throws: CaravanError.self) {
            try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_AUTH_OIDC_PROVIDERS": "corp"], file: [:])
        }
        #expect(throws: CaravanError.self) {
            try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_AUTH_OIDC_PROVIDERS": "Bad Name"], file: [:])
        }
    }
}
