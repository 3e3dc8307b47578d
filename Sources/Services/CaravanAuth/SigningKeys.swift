package import CaravanCore
import Foundation
import JWTKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The JWT signing secret of a deployment: generated on first start, stored in the data directory with mode 0600.
/// There is no built-in default secret.
package struct SigningSecret: Sendable {
    package let bytes: [UInt8]
    /// Seconds since 1970 when the secret was made; the API keys are issued at this instant.
    package let createdAt: Int64

    static let fileName = "jwt_secret.json"

    /// A secret from raw bytes (at least 32: jwt-kit refuses shorter HMAC keys).
    package init(bytes: [UInt8], createdAt: Int64) throws(CaravanError) {
        guard bytes.count >= 32 else { throw CaravanError(.invalidValue, "a signing secret needs at least 32 bytes") }
        self.bytes = bytes
        self.createdAt = createdAt
    }

    init(validBytes: [UInt8], createdAt: Int64) {
        self.bytes = validBytes
        self.createdAt = createdAt
    }

    /// Loads the secret from `directory`, creating the directory (0700) and the secret (0600) when absent.
    package static func loadOrCreate(in directory: String, now: Int64) throws -> SigningSecret {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let existing = try existing(in: directory) { return existing }
        let secret = generate(now: now)
        let document = JSONValue.object([
            ("secret", .string(Data(secret.bytes).base64EncodedString())),
            ("created_at", .integer(now)),
        ])
        try writeExclusively(Array(document.jsonText.utf8), to: (directory as NSString).appendingPathComponent(fileName))
        return secret
    }

    /// The secret file of `directory`, or nil when there is none. A file others can read, or a malformed one, throws.
    package static func existing(in directory: String) throws -> SigningSecret? {
        let path = (directory as NSString).appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw CaravanError(.internalFailure, "\(path) is readable by other users; run chmod 600 on it")
        }
        let document = try JSONParser.parse(bytes: Array(data))
        guard case .string(let encoded)? = document["secret"], let secret = Data(base64Encoded: encoded), secret.count >= 32,
              case .integer(let createdAt)? = document["created_at"] else {
            throw CaravanError(.internalFailure, "\(path) is not a valid Caravan secret file")
        }
        return SigningSecret(validBytes: Array(secret), createdAt: createdAt)
    }

    /// 48 fresh random bytes from the system's CSPRNG.
    static func generate(now: Int64) -> SigningSecret {
        var generator = SystemRandomNumberGenerator()
        return SigningSecret(validBytes: (0..<48).map { _ in UInt8.random(in: .min ... .max, using: &generator) }, createdAt: now)
    }

    /// Creates `path` with mode 0600 (failing if it exists) and writes `bytes` durably.
    private static func writeExclusively(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw CaravanError(.internalFailure, "cannot create \(path): errno \(errno)") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else { throw CaravanError(.internalFailure, "cannot write \(path)") }
    }
}

/// The payload of a key or access token: every claim, as JSON.
struct CaravanClaims: JWTPayload {
    var raw: JSONValue

    init(_ raw: JSONValue) { self.raw = raw }

    init(from decoder: any Decoder) throws { raw = try JSONValue(from: decoder) }

    func encode(to encoder: any Encoder) throws { try raw.encode(to: encoder) }

    /// Expiry is checked by `TokenVerifier` against its injected clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    var role: String? { if case .string(let role)? = raw["role"] { role } else { nil } }
    var subject: String? { if case .string(let sub)? = raw["sub"] { sub } else { nil } }
    var expiresAt: Int64? {
        switch raw["exp"] {
        case .integer(let exp)?: exp
        case .double(let exp)?: Int64(exp)
        default: nil
        }
    }
}

/// The `anon` and `service_role` API keys: JWTs signed with the deployment's secret.
package struct APIKeys: Sendable, Hashable {
    package let anonKey: String
    package let serviceRoleKey: String
}

/// Verifies keys and tokens (HS256 with the deployment secret) and turns them into identities.
package final class TokenVerifier: Sendable {
    /// Keys are valid for ten years from the secret's creation, like Supabase's.
    static let keyLifetime: Int64 = 10 * 365 * 24 * 3600
    private let keys: JWTKeyCollection
    private let secret: SigningSecret
    private let now: @Sendable () -> Int64
    private let cache = Mutex<[String: CachedToken]>([:])

    private struct CachedToken {
        let identity: Identity
        let expiresAt: Int64?
    }

    /// - Parameter now: the clock, in seconds since 1970.
    package init(secret: SigningSecret, now: @escaping @Sendable () -> Int64) async {
        self.secret = secret
        self.now = now
        self.keys = JWTKeyCollection()
        // Sorted keys make signed tokens byte-for-byte reproducible, so the API keys never change between runs.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        await keys.add(hmac: HMACKey(from: Data(secret.bytes)), digestAlgorithm: .sha256, kid: "caravan",
                       serializer: DefaultJWTSerializer(jsonEncoder: encoder))
    }

    /// The deployment's API keys (deterministic for a given secret).
    package func apiKeys() async throws -> APIKeys {
        func sign(_ role: String) async throws -> String {
            try await issueToken(claims: .object([
                ("exp", .integer(secret.createdAt + Self.keyLifetime)), ("iat", .integer(secret.createdAt)),
                ("iss", .string("caravan")), ("role", .string(role)),
            ]))
        }
        return APIKeys(anonKey: try await sign("anon"), serviceRoleKey: try await sign("service_role"))
    }

    /// Signs `claims` (an object) with the deployment secret: access tokens (auth) and test identities.
    package func issueToken(claims: JSONValue) async throws -> String {
        try await keys.sign(CaravanClaims(claims), kid: "caravan")
    }

    /// The identity a token carries. Throws PGRST301 (undecodable, bad signature, unknown role) or PGRST303 (expired).
    package func identity(for token: String) async throws(CaravanError) -> Identity {
        let current = now()
        if let hit = cache.withLock({ $0[token] }) {
            try Self.checkExpiry(hit.expiresAt, now: current)
            return hit.identity
        }
        let claims: CaravanClaims
        do {
            claims = try await keys.verify(token, as: CaravanClaims.self)
        } catch {
            throw CaravanError(.invalidToken, "JWSError JWSInvalidSignature", internalDetail: "\(error)")
        }
        guard let roleName = claims.role, let role = Role(rawValue: roleName) else {
            throw CaravanError(.invalidToken, "role \"\((claims.role ?? "").prefix(64))\" does not exist")
        }
        try Self.checkExpiry(claims.expiresAt, now: current)
        let identity = Identity(role: role, userID: role == .authenticated ? claims.subject : nil, claims: claims.raw)
        cache.withLock { cache in
            if cache.count >= 4096 { cache.removeAll() }
            cache[token] = CachedToken(identity: identity, expiresAt: claims.expiresAt)
        }
        return identity
    }

    /// The claims of a token signed with the deployment secret and not expired, whatever it carries (the tokens of
    /// storage's signed URLs, which have no role and so are never accepted as keys by `identity(for:)`). Throws
    /// PGRST301 (undecodable, bad signature) or PGRST303 (expired).
    package func verifiedClaims(of token: String) async throws(CaravanError) -> JSONValue {
        let claims: CaravanClaims
        do {
            claims = try await keys.verify(token, as: CaravanClaims.self)
        } catch {
            throw CaravanError(.invalidToken, "invalid signature", internalDetail: "\(error)")
        }
        try Self.checkExpiry(claims.expiresAt, now: now())
        return claims.raw
    }

    private static func checkExpiry(_ expiresAt: Int64?, now: Int64) throws(CaravanError) {
        if let expiresAt, expiresAt <= now {
            throw CaravanError(.expiredToken, "JWT expired")
        }
    }
}
