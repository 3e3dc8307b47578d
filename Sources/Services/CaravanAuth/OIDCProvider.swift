import AsyncHTTPClient
import CaravanCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A configured OIDC provider at run time: its endpoints (configured, or read once from the issuer's discovery
/// document), the code exchange at its token endpoint, and its ID-token verifier (JWKS cached as Apple's).
final class OIDCProvider: Sendable {
    let configuration: OIDCProviderConfiguration
    private let now: @Sendable () -> Int64
    private let discovered = Mutex<Endpoints?>(nil)

    struct Endpoints: Sendable {
        let authorization: String
        let token: String
        let verifier: AppleIDTokenVerifier
    }

    init(configuration: OIDCProviderConfiguration, now: @escaping @Sendable () -> Int64) {
        self.configuration = configuration
        self.now = now
    }

    /// The endpoints, reading the discovery document for those not configured (once; a failure is retried next time).
    func endpoints() async throws(AuthError) -> Endpoints {
        if let known = discovered.withLock({ $0 }) { return known }
        var authorization = configuration.authorizationEndpoint, token = configuration.tokenEndpoint, jwks = configuration.jwksURI
        if authorization == nil || token == nil || jwks == nil {
            let base = configuration.issuer.hasSuffix("/") ? String(configuration.issuer.dropLast()) : configuration.issuer
            let document = try await getJSON(base + "/.well-known/openid-configuration", what: "discovery")
            func member(_ key: String) -> String? { if case .string(let s)? = document[key] { s } else { nil } }
            authorization = authorization ?? member("authorization_endpoint")
            token = token ?? member("token_endpoint")
            jwks = jwks ?? member("jwks_uri")
        }
        guard let authorization, let token, let jwks else {
            throw AuthError(.unexpectedFailure, "Provider \(configuration.name) is misconfigured",
                            internalDetail: "\(configuration.name): discovery lacks authorization, token or JWKS endpoint")
        }
        let verifier = AppleIDTokenVerifier(configuration: AppleConfiguration(keys: JWKSSource(jwks), audiences: configuration.audiences,
                                                                             issuer: configuration.issuer, displayName: configuration.name),
                                            now: now)
        let endpoints = Endpoints(authorization: authorization, token: token, verifier: verifier)
        discovered.withLock { $0 = $0 ?? endpoints }
        return discovered.withLock { $0 } ?? endpoints
    }

    /// Exchanges an authorization code at the token endpoint (client secret in the body, with the provider's
    /// PKCE verifier) and returns the response's `id_token`.
    func exchange(code: String, redirectURI: String, codeVerifier: String) async throws(AuthError) -> String {
        let endpoints = try await endpoints()
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                    ("client_id", configuration.clientID), ("code_verifier", codeVerifier)]
        if let secret = configuration.clientSecret { form.append(("client_secret", secret)) }
        var request = HTTPClientRequest(url: endpoints.token)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: OAuthURL.formEncode(form)))
        let document = try await send(request, what: "token exchange", refusedIs: .badOAuthCallback)
        guard case .string(let idToken)? = document["id_token"] else {
            throw AuthError(.badOAuthCallback, "Provider \(configuration.name) returned no id_token")
        }
        return idToken
    }

    private func getJSON(_ url: String, what: String) async throws(AuthError) -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        return try await send(request, what: what, refusedIs: .serviceUnavailable)
    }

    /// Sends `request`; an unreachable provider is 503 (retry), a refusal is `refusedIs`. Secrets never reach the message.
    private func send(_ request: HTTPClientRequest, what: String, refusedIs code: AuthErrorCode) async throws(AuthError) -> JSONValue {
        let name = configuration.name
        let status: UInt, bytes: [UInt8]
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            status = response.status.code
            bytes = Array(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        } catch {
            throw AuthError(.serviceUnavailable, "Provider \(name) is unavailable; try again", internalDetail: "\(name) \(what): \(error)")
        }
        guard status == 200 else {
            throw AuthError(code, "Provider \(name) refused the \(what)", internalDetail: "\(name) \(what): status \(status)")
        }
        guard let document = try? JSONParser.parse(bytes: bytes), case .object = document else {
            throw AuthError(code, "Provider \(name) answered the \(what) with no JSON object")
        }
        return document
    }
}

/// The providers of a deployment, by name.
package final class OIDCProviders: Sendable {
    private let byName: [String: OIDCProvider]
    private let ordered: [OIDCProvider]

    package init(_ configurations: [OIDCProviderConfiguration], now: @escaping @Sendable () -> Int64) {
        ordered = configurations.map { OIDCProvider(configuration: $0, now: now) }
        byName = Dictionary(ordered.map { ($0.configuration.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The provider named `name`, or whose issuer is `name` (as GoTrue accepts an issuer for custom OIDC).
    func provider(_ name: String) -> OIDCProvider? {
        byName[name] ?? ordered.first { $0.configuration.issuer == name }
    }

    package var names: [String] { ordered.map(\.configuration.name) }
}
