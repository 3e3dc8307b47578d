import CaravanCore
import Crypto
import Foundation
import Logging

/// OAuth with OIDC providers as GoTrue serves it: `/authorize` (to the provider), `/callback` (back from it, to the
/// app with a PKCE auth code or, in the implicit flow, the tokens), `grant_type=pkce` and `grant_type=id_token`.
extension AuthService {
    /// The key `state` is sealed with, derived from the server secret.
    var oauthStateKey: SymmetricKey { SymmetricKey(data: Secrets.hmacSHA256(key: refreshKey, "caravan oauth state")) }

    /// Where a sign-in ends when `redirect_to` is absent or not allowed: `auth_site_url`, else the server's URL.
    package var siteURL: String { configuration.oauth.siteURL ?? String(issuer.dropLast("/auth/v1".count)) }

    /// The `redirect_uri` registered at providers: `<external url>/auth/v1/callback`.
    package var callbackURL: String { issuer + "/callback" }

    /// The provider page a browser is sent to by `GET /authorize`.
    package func authorizationURL(provider name: String, redirectTo: String?, codeChallenge: String?, codeChallengeMethod: String?,
                                  scopes: String?) async throws -> String {
        guard let provider = oidc.provider(name) else {
            throw AuthError(.validationFailed, "Unsupported provider: provider \(name.prefix(64)) could not be found")
        }
        var challenge: String?, method: String?
        let givenChallenge = codeChallenge?.isEmpty == false ? codeChallenge : nil
        let givenMethod = codeChallengeMethod?.isEmpty == false ? codeChallengeMethod : nil
        switch (givenChallenge, givenMethod) {
        case (nil, nil): break
        case (let c?, let m?):
            guard ["s256", "plain"].contains(m.lowercased()) else {
                throw AuthError(.validationFailed, "code challenge method not supported")
            }
            guard (43...128).contains(c.utf8.count) else {
                throw AuthError(.validationFailed, "code challenge has to be between 43 and 128 characters")
            }
            challenge = c
            method = m.lowercased()
        default:
            throw AuthError(.validationFailed, "PKCE flow requires code_challenge_method and code_challenge")
        }
        let endpoints = try await provider.endpoints()
        let redirect = OAuthURL.allowedRedirect(redirectTo, siteURL: siteURL, allowList: configuration.oauth.allowList)
        let state = OAuthState(provider: provider.configuration.name, redirectTo: redirect, codeChallenge: challenge, codeChallengeMethod: method,
                               providerVerifier: Secrets.randomToken(), nonce: Secrets.randomToken(),
                               expiresAt: nowSeconds + configuration.oauth.stateLifetime)
        var scopeList = provider.configuration.scopes
        for scope in OAuthConfiguration.list(scopes) where !scopeList.contains(scope) { scopeList.append(scope) }
        let sealed = try state.sealed(key: oauthStateKey)
        return OAuthURL.addingQuery(endpoints.authorization, [
            ("response_type", "code"), ("client_id", provider.configuration.clientID), ("redirect_uri", callbackURL),
            ("scope", scopeList.joined(separator: " ")), ("state", sealed),
            ("code_challenge", OAuthState.s256(state.providerVerifier)), ("code_challenge_method", "S256"),
            ("nonce", Secrets.sha256Hex(state.nonce)),
        ])
    }

    /// `GET /callback`: where the browser goes next. Success sends it to `redirect_to` with `?code=` (PKCE) or
    /// `#access_token=…` (implicit); a failure with `error`, `error_code` and `error_description`, as GoTrue.
    package func completeOAuth(code: String?, state: String?, providerError: String?, providerErrorDescription: String?) async -> String {
        let opened: OAuthState
        do {
            guard let state, !state.isEmpty else { throw AuthError(.badOAuthState, "OAuth state parameter missing") }
            opened = try OAuthState.open(state, key: oauthStateKey, now: nowSeconds)
        } catch {
            return Self.errorRedirect(siteURL, error: "invalid_request", error)
        }
        if let providerError, !providerError.isEmpty {
            let pairs = [("error", providerError), ("error_code", AuthErrorCode.badOAuthCallback.rawValue),
                         ("error_description", providerErrorDescription ?? providerError)]
            return OAuthURL.withFragment(OAuthURL.addingQuery(opened.redirectTo, pairs), pairs)
        }
        do {
            guard let code, !code.isEmpty, let provider = oidc.provider(opened.provider) else {
                throw AuthError(.badOAuthCallback, "OAuth callback with missing authorization code")
            }
            let idToken = try await provider.exchange(code: code, redirectURI: callbackURL, codeVerifier: opened.providerVerifier)
            let identity = try await provider.endpoints().verifier.verify(idToken, nonce: opened.nonce)
            let userID = try await signInUserID(provider: provider.configuration.name, identity)
            if let challenge = opened.codeChallenge, let method = opened.codeChallengeMethod {
                let authCode = UUID().uuidString.lowercased()
                let expiresAt = Timestamp.format(microseconds: (nowSeconds + configuration.oauth.authCodeLifetime) * 1_000_000)
                try await write { storage in
                    try await storage.insert(AuthSchema.flowState, RowValues([
                        "user_id": .text(userID), "auth_code_hash": .text(Secrets.sha256Hex(authCode)), "code_challenge": .text(challenge),
                        "code_challenge_method": .text(method), "provider": .text(opened.provider), "expires_at": .text(expiresAt),
                    ]))
                }
                return OAuthURL.addingQuery(opened.redirectTo, [("code", authCode)])
            }
            let session = try await startSession(userID: userID, method: "oauth")
            return OAuthURL.withFragment(opened.redirectTo, [
                ("access_token", session.accessToken), ("expires_at", String(session.expiresAt)), ("expires_in", String(session.expiresIn)),
                ("provider_type", opened.provider), ("refresh_token", session.refreshToken), ("token_type", "bearer"), ("type", "oauth"),
            ])
        } catch {
            let code = (error as? AuthError)?.code
            let kind = code == nil || code == .serviceUnavailable || code == .unexpectedFailure ? "server_error" : "invalid_request"
            if let detail = (error as? AuthError)?.internalDetail { logger.warning("oauth callback failed", metadata: ["error.detail": .string(detail)]) }
            return Self.errorRedirect(opened.redirectTo, error: kind, error)
        }
    }

    static func errorRedirect(_ url: String, error kind: String, _ error: any Error) -> String {
        let authError = error as? AuthError ?? AuthError(.unexpectedFailure, "Unexpected failure")
        let pairs = [("error", kind), ("error_code", authError.code.rawValue), ("error_description", authError.message)]
        return OAuthURL.withFragment(OAuthURL.addingQuery(url, pairs), pairs)
    }

    /// `POST /token?grant_type=pkce`: the session for an auth code from `/callback`, given the verifier of its
    /// challenge. A code is good once (a wrong verifier spends it too) and for `authCodeLifetime` seconds.
    package func exchangeAuthCode(_ authCode: String?, codeVerifier: String?, client: AuthClient) async throws -> AuthSession {
        guard let authCode, !authCode.isEmpty, let codeVerifier, !codeVerifier.isEmpty else {
            throw AuthError(.validationFailed, "invalid request: both auth code and code verifier should be non-empty")
        }
        try limit(.signIn, client: client, identifier: nil)
        let now = nowSeconds
        let userID: String = try await writeThenCheck { storage in
            let table = AuthSchema.flowState
            guard let row = try await storage.first(table, where: "auth_code_hash", .text(Secrets.sha256Hex(authCode))) else {
                return .failure(AuthError(.flowStateNotFound, "invalid flow state, no valid flow state found"))
            }
            let removed = try await storage.tx.delete(from: table, where: try AuthStorage.equals(table, "id", .text(try row.requireText("id"))))
            guard removed.deleted == 1 else { return .failure(AuthError(.flowStateNotFound, "invalid flow state, no valid flow state found")) }
            guard let expiry = Timestamp.parseMicroseconds(try row.requireText("expires_at")), expiry / 1_000_000 > now else {
                return .failure(AuthError(.flowStateExpired, "invalid flow state, flow state has expired"))
            }
            let challenge = try row.requireText("code_challenge")
            let derived = try row.requireText("code_challenge_method") == "plain" ? codeVerifier : OAuthState.s256(codeVerifier)
            guard Secrets.constantTimeEquals(derived, challenge) else {
                return .failure(AuthError(.badCodeVerifier, "code challenge does not match previously saved code verifier"))
            }
            return .success(try row.requireText("user_id"))
        }
        return try await startSession(userID: userID, method: "oauth")
    }

    /// `grant_type=id_token` for a configured OIDC provider: the token checked against its JWKS, issuer, client ids,
    /// expiry and nonce; then the user signed in, linked or created.
    func signInWithOIDCIDToken(_ provider: OIDCProvider, idToken: String, nonce: String?, client: AuthClient) async throws -> AuthSession {
        try limit(.signIn, client: client, identifier: nil)
        let identity = try await provider.endpoints().verifier.verify(idToken, nonce: nonce)
        let userID = try await signInUserID(provider: provider.configuration.name, identity)
        return try await startSession(userID: userID, method: "oauth")
    }

    /// The user an identity of `provider` signs in as: the one it belongs to; else, when the provider vouches for the
    /// email and an account has that email confirmed, that account (the identity is linked, as GoTrue links); else a
    /// new user (when sign-ups are on). Linking needs `auth_confirm_email`: without it a sign-up "confirms" any
    /// address unproven, and linking would hand the provider's user to whoever registered the address first.
    func signInUserID(provider: String, _ identity: AppleIdentity) async throws -> String {
        let email = try identity.email.map { (e: String) throws(AuthError) in try self.normalizedEmail(e) }
        let signupEnabled = configuration.signupEnabled, newUserID = ids.next()
        let linkByEmail = configuration.confirmEmail && identity.emailVerified
        let metadata = Self.identityData(identity, email: email)
        return try await writeThenCheck { storage in
            let identities = AuthSchema.identities
            let filter = BoundPredicate.and([try AuthStorage.equals(identities, "provider", .text(provider)),
                                             try AuthStorage.equals(identities, "provider_id", .text(identity.subject))])
            if let existing = try await storage.records(identities, filter, limit: 1).first, let id = existing.text("user_id") {
                try await storage.update(identities, id: try existing.requireText("id"), RowValues(["last_sign_in_at": .text(storage.now), "identity_data": .json(metadata.jsonText), "updated_at": .text(storage.now)]))
                return .success(id)
            }
            if let email, linkByEmail, let ownerID = try await storage.userID(where: "email", is: email),
               let owner = try await storage.user(id: ownerID), owner.emailConfirmedAt != nil {
                try await storage.addIdentity(userID: ownerID, provider: provider, providerID: identity.subject, data: metadata)
                try await Self.addProvider(provider, toUser: ownerID, storage)
                return .success(ownerID)
            }
            guard signupEnabled else { return .failure(AuthError(.signupDisabled, "Signups not allowed for this instance")) }
            let app = JSONValue.object([("provider", .string(provider)), ("providers", .array([.string(provider)]))])
            var row = RowValues(["id": .text(newUserID), "app_metadata": .json(app.jsonText), "user_metadata": .json(metadata.jsonText)])
            if let email, try await storage.userID(where: "email", is: email) == nil {
                row.append("email", .text(email))
                if identity.emailVerified { row.append("email_confirmed_at", .text(storage.now)) }
            }
            try await storage.insert(SystemModule.users, row)
            try await storage.addIdentity(userID: newUserID, provider: provider, providerID: identity.subject, data: metadata)
            return .success(newUserID)
        }
    }

    /// GoTrue's identity data (also a new user's `user_metadata`): the standard claims it keeps.
    static func identityData(_ identity: AppleIdentity, email: String?) -> JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [("iss", identity.claims["iss"] ?? .null), ("sub", .string(identity.subject)),
                                                        ("provider_id", .string(identity.subject)), ("email", email.map(JSONValue.string) ?? .null),
                                                        ("email_verified", .bool(identity.emailVerified)), ("phone_verified", .bool(false))]
        for (claim, key) in [("name", "name"), ("name", "full_name"), ("picture", "picture"), ("picture", "avatar_url"), ("preferred_username", "preferred_username")] {
            if case .string(let value)? = identity.claims[claim] { pairs.append((key, .string(value))) }
        }
        return .object(pairs)
    }
}
