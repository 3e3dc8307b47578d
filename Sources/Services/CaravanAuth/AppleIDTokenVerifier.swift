import AsyncHTTPClient
package import CaravanCore
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import Synchronization

/// What a verified Sign in with Apple token says about the user.
package struct AppleIdentity: Sendable, Hashable {
    package let subject: String
    package let email: String?
    package let emailVerified: Bool
    package let claims: JSONValue
}

/// Verifies Apple `id_token`s (and any OIDC provider's, given its issuer, audiences and JWKS): the signature against Apple's JWKS (from a file or URL, cached, refetched when a
/// token names an unknown key), then `iss`, `aud`, `exp` and the nonce hash.
package final class AppleIDTokenVerifier: Sendable {
    let configuration: AppleConfiguration
    private let now: @Sendable () -> Int64
    private let cached = Mutex<(keys: JWTKeyCollection, loadedAt: Int64)?>(nil)
    static let cacheLifetime: Int64 = 3600
    static let minimumRefetchInterval: Int64 = 60

    package init(configuration: AppleConfiguration, now: @escaping @Sendable () -> Int64) {
        self.configuration = configuration
        self.now = now
    }

    /// - Parameter nonce: the raw nonce the client sent (its SHA-256 hex must equal the token's `nonce` claim).
    package func verify(_ token: String, nonce: String?) async throws(AuthError) -> AppleIdentity {
        let claims: CaravanClaims
        do {
            claims = try await verifySignature(token)
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(.validationFailed, "id_token signature is invalid", internalDetail: "\(error)")
        }
        let raw = claims.raw
        guard case .string(let issuer)? = raw["iss"], issuer == configuration.issuer else {
            throw AuthError(.validationFailed, "id_token was not issued by \(configuration.issuer)")
        }
        let audiences: [String]
        switch raw["aud"] {
        case .string(let audience)?: audiences = [audience]
        case .array(let items)?: audiences = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        default: audiences = []
        }
        guard audiences.contains(where: configuration.audiences.contains) else {
            throw AuthError(.validationFailed, "id_token audience is not one of this project's apps")
        }
        guard let expiry = claims.expiresAt, expiry > now() else {
            throw AuthError(.validationFailed, "id_token has expired")
        }
        let tokenNonce: String? = if case .string(let n)? = raw["nonce"] { n } else { nil }
        switch (nonce, tokenNonce) {
        case (nil, nil): break
        case (let sent?, let claimed?):
            guard Secrets.constantTimeEquals(Secrets.sha256Hex(sent), claimed.lowercased()) else {
                throw AuthError(.validationFailed, "Nonces mismatch")
            }
        default:
            throw AuthError(.validationFailed, "Passed nonce and nonce in id_token should either both exist or not.")
        }
        guard let subject = claims.subject, !subject.isEmpty else {
            throw AuthError(.validationFailed, "id_token has no subject")
        }
        let email: String? = if case .string(let e)? = raw["email"] { e } else { nil }
        let verified: Bool = switch raw["email_verified"] {
        case .bool(let b)?: b
        case .string(let s)?: s == "true"
        default: false
        }
        return AppleIdentity(subject: subject, email: email, emailVerified: verified, claims: raw)
    }

    private func verifySignature(_ token: String) async throws -> CaravanClaims {
        let keys = try await currentKeys(forceReload: false)
        do {
            return try await keys.verify(token, as: CaravanClaims.self)
        } catch let error as JWTError where error.errorType == .unknownKID {
            // Apple rotates keys: fetch the set again (at most once a minute) before refusing.
            let loadedAt = cached.withLock { $0?.loadedAt } ?? 0
            guard now() - loadedAt >= Self.minimumRefetchInterval else { throw error }
            return try await currentKeys(forceReload: true).verify(token, as: CaravanClaims.self)
        }
    }

    private func currentKeys(forceReload: Bool) async throws -> JWTKeyCollection {
        let current = now()
        if !forceReload, let hit = cached.withLock({ $0 }), current - hit.loadedAt < Self.cacheLifetime {
            return hit.keys
        }
        let json = try await fetchJWKS()
        let keys = JWTKeyCollection()
        do {
            try await keys.add(jwksJSON: json)
        } catch {
            throw AuthError(.unexpectedFailure, "Sign in with \(configuration.displayName) is misconfigured", internalDetail: "JWKS: \(error)")
        }
        cached.withLock { $0 = (keys, current) }
        return keys
    }

    private func fetchJWKS() async throws -> String {
        switch configuration.keys {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw AuthError(.unexpectedFailure, "Sign in with \(configuration.displayName) is misconfigured", internalDetail: "cannot read JWKS file \(path)")
            }
            return String(decoding: data, as: UTF8.self)
        case .url(let address):
            guard URL(string: address) != nil else {
                throw AuthError(.unexpectedFailure, "Sign in with \(configuration.displayName) is misconfigured", internalDetail: "bad JWKS URL")
            }
            // A failure to reach Apple is transient: 503, which clients retry, never a definitive refusal.
            let unavailable = { (detail: String) in AuthError(.serviceUnavailable, "\(self.configuration.displayName)'s keys are unavailable; try again", internalDetail: detail) }
            let data: Data
            do {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: address), timeout: .seconds(10))
                guard response.status == .ok else { throw unavailable("JWKS fetch: status \(response.status.code)") }
                data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            } catch let error as AuthError {
                throw error
            } catch {
                throw unavailable("JWKS fetch: \(error)")
            }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
