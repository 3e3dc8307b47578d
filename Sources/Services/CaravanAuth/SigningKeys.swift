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
    var expiresAt: Int64? { Self.seconds(raw["exp"]) }

    /// A NumericDate claim's whole seconds; nil when absent, `null` or not a number.
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .integer(let seconds)?: seconds
        case .double(let seconds)? where seconds.isFinite && abs(seconds) < 1e15: Int64(seconds.rounded(.down))
        default: nil
        }
    }
}

/// The rules a token's text and registered claims must meet before its identity is used, as RFC 7519 and PostgREST
/// check them.
package struct TokenRules: Sendable, Hashable {
    /// The audience a token that carries `aud` must name (a string, or an array holding it).
    package var audience: String
    /// Seconds of clock skew tolerated for `nbf` and `iat`.
    package var leeway: Int64

    package init(audience: String = "authenticated", leeway: Int64 = 30) {
        self.audience = audience
        self.leeway = leeway
    }

    /// Whether `token` is a compact JWS in exact base64url: three non-empty segments of the URL alphabet, no padding,
    /// no whitespace, and no stray bits in a segment's last character, so one signature has exactly one spelling.
    static func isCanonicalCompact(_ token: String) -> Bool {
        let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else { return false }
        for segment in segments {
            guard !segment.isEmpty, segment.count % 4 != 1 else { return false }
            var last: UInt8 = 0
            for byte in segment {
                guard let value = base64URLValue(byte) else { return false }
                last = value
            }
            switch segment.count % 4 {
            case 2: if last & 0x0F != 0 { return false }
            case 3: if last & 0x03 != 0 { return false }
            default: break
            }
        }
        return true
    }

    private static func base64URLValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Checks `exp` (required, a number, in the future), `nbf` and `iat` (numbers when present, not later than now
    /// plus the leeway) and, when `checkAudience`, `aud` (a string or an array of strings naming the audience).
    /// Throws `expiredToken` (PGRST303 "JWT expired") or `invalidTokenClaims` (PGRST303) with PostgREST's messages.
    func check(_ claims: JSONValue, now: Int64, checkAudience: Bool) throws(CaravanError) {
        guard let expiresAt = CaravanClaims.seconds(claims["exp"]) else {
            throw CaravanError(.invalidTokenClaims, "The JWT 'exp' claim must be a number")
        }
        if expiresAt <= now { throw CaravanError(.expiredToken, "JWT expired") }
        if let notBefore = claims["nbf"] {
            guard let seconds = CaravanClaims.seconds(notBefore) else {
                throw CaravanError(.invalidTokenClaims, "The JWT 'nbf' claim must be a number")
            }
            if seconds > now + leeway { throw CaravanError(.invalidTokenClaims, "JWT not yet valid") }
        }
        if let issuedAt = claims["iat"] {
            guard let seconds = CaravanClaims.seconds(issuedAt) else {
                throw CaravanError(.invalidTokenClaims, "The JWT 'iat' claim must be a number")
            }
            if seconds > now + leeway { throw CaravanError(.invalidTokenClaims, "JWT issued at future") }
        }
        guard checkAudience, let audienceClaim = claims["aud"] else { return }
        let named: [String]
        switch audienceClaim {
        case .string(let audience): named = [audience]
        case .array(let items):
            named = items.compactMap { if case .string(let audience) = $0 { audience } else { nil } }
            guard named.count == items.count else {
                throw CaravanError(.invalidTokenClaims, "The JWT 'aud' claim must be a string or an array of strings")
            }
            if named.isEmpty { return }
        default:
            throw CaravanError(.invalidTokenClaims, "The JWT 'aud' claim must be a string or an array of strings")
        }
        guard named.contains(audience) else { throw CaravanError(.invalidTokenClaims, "JWT not in audience") }
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
    private let rules: TokenRules
    private let now: @Sendable () -> Int64
    private let cache = Mutex<[String: CachedToken]>([:])

    private struct CachedToken {
        let identity: Identity
        let expiresAt: Int64?
    }

    /// - Parameters:
    ///   - rules: the audience and clock leeway tokens are checked against.
    ///   - now: the clock, in seconds since 1970.
    package init(secret: SigningSecret, rules: TokenRules = TokenRules(), now: @escaping @Sendable () -> Int64) async {
        self.secret = secret
        self.rules = rules
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

    /// The identity a token carries. Throws PGRST301 (not exact base64url, bad signature, unknown role) or PGRST303
    /// (expired, `exp` missing or not a number, `nbf`/`iat` in the future, a foreign `aud`).
    package func identity(for token: String) async throws(CaravanError) -> Identity {
        let current = now()
        if let hit = cache.withLock({ $0[token] }) {
            try Self.checkExpiry(hit.expiresAt, now: current)
            return hit.identity
        }
        let claims = try await verified(token)
        guard let roleName = claims.role, let role = Role(rawValue: roleName) else {
            throw CaravanError(.invalidToken, "role \"\((claims.role ?? "").prefix(64))\" does not exist")
        }
        try rules.check(claims.raw, now: current, checkAudience: true)
        let identity = Identity(role: role, userID: role == .authenticated ? claims.subject : nil, claims: claims.raw)
        cache.withLock { cache in
            if cache.count >= 4096 { cache.removeAll() }
            cache[token] = CachedToken(identity: identity, expiresAt: claims.expiresAt)
        }
        return identity
    }

    /// The claims of a token signed with the deployment secret and not expired, whatever it carries (the tokens of
    /// storage's signed URLs, which have no role and so are never accepted as keys by `identity(for:)`); `aud` is not
    /// checked. Throws PGRST301 (undecodable, bad signature) or PGRST303 (expired, malformed time claims).
    package func verifiedClaims(of token: String) async throws(CaravanError) -> JSONValue {
        let claims = try await verified(token)
        try rules.check(claims.raw, now: now(), checkAudience: false)
        return claims.raw
    }

    /// The claims of a canonically spelled token whose signature is the deployment's. Throws PGRST301.
    private func verified(_ token: String) async throws(CaravanError) -> CaravanClaims {
        let parts = token.utf8.count(where: { $0 == UInt8(ascii: ".") }) + 1
        guard parts == 3 else { throw CaravanError(.invalidToken, "Expected 3 parts in JWT; got \(parts)") }
        guard TokenRules.isCanonicalCompact(token) else { throw CaravanError(.invalidToken, "JWT cryptographic operation failed") }
        do {
            return try await keys.verify(token, as: CaravanClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            // Most often an API key printed from another deployment (a mistyped --data-dir once made a fresh one).
            throw CaravanError(.invalidToken, "JWT cryptographic operation failed",
                               hint: "This deployment did not sign this key: print its keys with `caravan keys` and the server's own --data-dir (or --database-url)",
                               internalDetail: "\(error)")
        } catch {
            throw CaravanError(.invalidToken, "JWT cryptographic operation failed", internalDetail: "\(error)")
        }
    }

    private static func checkExpiry(_ expiresAt: Int64?, now: Int64) throws(CaravanError) {
        if let expiresAt, expiresAt <= now {
            throw CaravanError(.expiredToken, "JWT expired")
        }
    }
}
