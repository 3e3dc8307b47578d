package import CaravanCore
import Crypto
import Foundation

/// An ES256 key that signs ID tokens, and its JWKS: the identity provider (an OIDC provider, Apple) that cannot run
/// here, for the sign-in tests.
package struct TestIDTokenSigner: Sendable {
    package let keyID: String
    private let key: P256.Signing.PrivateKey

    package init(keyID: String) {
        self.keyID = keyID
        key = P256.Signing.PrivateKey()
    }

    /// The public key as a JWK (`kty: EC`, `crv: P-256`).
    package var jwk: JSONValue {
        let raw = key.publicKey.rawRepresentation
        return .object([("kty", .string("EC")), ("crv", .string("P-256")), ("kid", .string(keyID)), ("use", .string("sig")),
                        ("alg", .string("ES256")), ("x", .string(Self.base64URL(raw.prefix(32)))), ("y", .string(Self.base64URL(raw.suffix(32))))])
    }

    /// `{"keys": [jwk]}`, as a provider's JWKS endpoint answers.
    package var jwks: JSONValue { .object([("keys", .array([jwk]))]) }

    /// A compact JWS of `claims` (an object), signed with this key.
    package func sign(_ claims: JSONValue) throws -> String {
        let header = JSONValue.object([("alg", .string("ES256")), ("typ", .string("JWT")), ("kid", .string(keyID))])
        let input = Self.base64URL(Data(header.jsonText.utf8)) + "." + Self.base64URL(Data(claims.jsonText.utf8))
        return input + "." + Self.base64URL(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    package static func base64URL(_ data: some Sequence<UInt8>) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The SHA-256 of `text` in lower-case hex (Apple's `nonce` claim is this of the raw nonce).
    package static func sha256Hex(_ text: String) -> String { SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }
}
