import CaravanCore
import Crypto
import Foundation

/// A started OAuth sign-in, carried through the provider in `state`: sealed (ChaCha20-Poly1305 under a key derived
/// from the server secret), so the provider's PKCE verifier and nonce inside stay secret and nothing is stored
/// before the callback; it expires after `OAuthConfiguration.stateLifetime` (ten minutes).
struct OAuthState: Sendable, Equatable {
    var provider: String
    var redirectTo: String
    /// The client's PKCE challenge and method (`s256`, `plain`); nil for the implicit flow.
    var codeChallenge: String?
    var codeChallengeMethod: String?
    /// Our PKCE verifier at the provider, and the raw nonce whose SHA-256 hex went to the provider.
    var providerVerifier: String
    var nonce: String
    var expiresAt: Int64

    var json: JSONValue {
        .object([("p", .string(provider)), ("r", .string(redirectTo)), ("c", codeChallenge.map(JSONValue.string) ?? .null),
                 ("m", codeChallengeMethod.map(JSONValue.string) ?? .null), ("v", .string(providerVerifier)), ("n", .string(nonce)),
                 ("e", .integer(expiresAt))])
    }

    func sealed(key: SymmetricKey) throws -> String {
        let box = try ChaChaPoly.seal(Data(json.jsonText.utf8), using: key)
        return Secrets.base64URL(Array(box.combined))
    }

    /// The state `text` seals, if it was sealed with `key` and has not expired.
    static func open(_ text: String, key: SymmetricKey, now: Int64) throws(AuthError) -> OAuthState {
        let invalid = AuthError(.badOAuthState, "OAuth state is invalid")
        guard let bytes = base64URLDecode(text), let box = try? ChaChaPoly.SealedBox(combined: bytes),
              let plain = try? ChaChaPoly.open(box, using: key), let value = try? JSONParser.parse(bytes: Array(plain)) else { throw invalid }
        func string(_ key: String) -> String? { if case .string(let s)? = value[key] { s } else { nil } }
        guard let provider = string("p"), let redirect = string("r"), let verifier = string("v"), let nonce = string("n"),
              case .integer(let expiry)? = value["e"] else { throw invalid }
        guard expiry > now else { throw AuthError(.badOAuthState, "OAuth state has expired") }
        return OAuthState(provider: provider, redirectTo: redirect, codeChallenge: string("c"), codeChallengeMethod: string("m"),
                          providerVerifier: verifier, nonce: nonce, expiresAt: expiry)
    }

    static func base64URLDecode(_ text: String) -> Data? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard)
    }

    /// The PKCE S256 challenge of `verifier`: base64url(SHA-256(verifier)), no padding (RFC 7636 §4.2).
    static func s256(_ verifier: String) -> String {
        Secrets.base64URL(Array(SHA256.hash(data: Data(verifier.utf8))))
    }
}
