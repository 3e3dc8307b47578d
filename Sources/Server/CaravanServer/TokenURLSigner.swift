package import CaravanAuth
package import CaravanCore
package import CaravanStorage

/// Signed URLs' tokens, signed and verified with the deployment's JWT secret (the same keys as access tokens; a
/// URL token has no role, so it is never accepted as a key, and a key has no `url`, so it never opens an object).
package struct TokenURLSigner: URLSigner {
    let verifier: TokenVerifier

    package init(verifier: TokenVerifier) {
        self.verifier = verifier
    }

    package func sign(_ claims: JSONValue) async throws -> String {
        try await verifier.issueToken(claims: claims)
    }

    package func verify(_ token: String) async throws(StorageError) -> JSONValue {
        let claims: JSONValue
        do {
            claims = try await verifier.verifiedClaims(of: token)
        } catch {
            throw error.code == .expiredToken ? StorageError(.invalidJWT, "jwt expired") : StorageError(.invalidSignature, "Invalid signature")
        }
        return claims
    }
}
