package import CaravanCore
import Crypto
import Foundation

/// Session issuing and rotation: password sign-in, access tokens, refresh-token rotation, the signed-in session, logout.
extension AuthService {
    /// `POST /token?grant_type=password`.
    package func signIn(email: String?, phone: String?, password: String, client: AuthClient) async throws -> AuthSession {
        guard let contact = try self.contact(email: email, phone: phone) else {
            throw AuthError.invalidField("Only an email address or phone number should be provided on login.")
        }
        try limit(.signIn, client: client, identifier: contact.value)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, contact.column, .text(contact.value)), limit: 1)
        let found = try AuthStorage.records(try await store.fetch(plan)).first.map(AuthUser.init)
        guard try await passwords.verify(password, hash: found?.encryptedPassword), let found else {
            throw AuthError.wrongCredentials
        }
        switch contact {
        case .email where configuration.confirmEmail && found.emailConfirmedAt == nil:
            throw AuthError(.emailNotConfirmed, "Email not confirmed")
        case .phone where configuration.confirmPhone && found.phoneConfirmedAt == nil:
            throw AuthError(.phoneNotConfirmed, "Phone not confirmed")
        default: break
        }
        return try await startSession(userID: found.id, method: "password")
    }

    /// A new session for an existing user.
    func startSession(userID: String, method: String, before: (@Sendable (AuthStorage) async throws -> Void)? = nil) async throws -> AuthSession {
        let sessionID = ids.next()
        let refreshToken = Secrets.randomToken()
        let nowSeconds = self.nowSeconds
        let user: AuthUser = try await write { storage in
            try await before?(storage)
            try await storage.startSession(userID: userID, method: method, nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            guard let user = try await storage.user(id: userID) else { throw AuthError.wrongCredentials }
            return user
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: method)
    }

    /// Signs the access token of a session: its assurance level (`aal1`, or `aal2` after a second factor) and its
    /// authentication methods (`amr`, newest first) are the session's.
    func makeSession(user: AuthUser, sessionID: String, refreshToken: String, method: String, amr: JSONValue? = nil, aal: String = "aal1") async throws -> AuthSession {
        let issuedAt = nowSeconds
        let expiresAt = issuedAt + configuration.accessTokenLifetime
        let methods = amr ?? .array([.object([("method", .string(method)), ("timestamp", .integer(issuedAt))])])
        let claims = JSONValue.object([
            ("aud", .string(configuration.jwtAudience)), ("exp", .integer(expiresAt)), ("iat", .integer(issuedAt)), ("iss", .string(issuer)),
            ("sub", .string(user.id)), ("email", .string(user.email ?? "")), ("phone", .string(user.phone ?? "")),
            ("app_metadata", user.appMetadata), ("user_metadata", user.userMetadata), ("role", .string("authenticated")),
            ("aal", .string(aal)), ("amr", methods), ("session_id", .string(sessionID)), ("is_anonymous", .bool(user.isAnonymous)),
        ])
        let accessToken = try await verifier.issueToken(claims: claims)
        return AuthSession(accessToken: accessToken, refreshToken: refreshToken, expiresIn: configuration.accessTokenLifetime,
                           expiresAt: expiresAt, user: user)
    }

    // MARK: Refresh tokens

    /// The child of a refresh token: derived, so that a lost reply can be answered again with the same child.
    func childToken(of token: String) -> String {
        Secrets.base64URL(Secrets.hmacSHA256(key: refreshKey, "child:" + token))
    }

    /// `POST /token?grant_type=refresh_token`: rotates the token. A rotated token presented again gets the
    /// active child when it is its parent (the reply was lost) or within the reuse interval; otherwise the whole
    /// family (the session) is revoked and the answer is `refresh_token_already_used`.
    package func refresh(_ token: String, client: AuthClient) async throws -> AuthSession {
        guard !token.isEmpty else { throw AuthError.invalidField("refresh_token is required") }
        try limit(.refresh, client: client, identifier: nil)
        let nowMicros = clock.microseconds
        let reuseInterval = configuration.refreshReuseInterval * 1_000_000
        let child = childToken(of: token)
        let (user, sessionID, issued, amr, aal): (AuthUser, String, String, JSONValue, String) = try await writeThenCheck { storage in
            let tokens = AuthSchema.refreshTokens
            guard let presented = try await storage.first(tokens, where: "token_hash", .text(Secrets.sha256Hex(token))) else {
                return .failure(AuthError(.refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found"))
            }
            guard let sessionID = presented.text("session_id"), let session = try await storage.session(id: sessionID),
                  let userID = session.text("user_id") else {
                return .failure(AuthError(.sessionNotFound, "Session not found"))
            }
            // Revoke only if still live: a concurrent refresh of the same token (another instance, or Postgres'
            // row lock released by its commit) makes this touch no row, and the token counts as rotated.
            let hash = Secrets.sha256Hex(token)
            let live = BoundPredicate.and([try AuthStorage.equals(tokens, "token_hash", .text(hash)), try AuthStorage.equals(tokens, "revoked", .bool(false))])
            let rotated = try await storage.tx.update(tokens, set: RowValues(["revoked": .bool(true), "revoked_at": .text(storage.now)]), where: live)
            let issued: String
            if rotated.updated == 1 {
                issued = child
                try await storage.insert(tokens, RowValues(["token_hash": .text(Secrets.sha256Hex(issued)), "session_id": .text(sessionID), "parent_hash": .text(hash)]))
            } else {
                // Walk down the family (each child derives from its parent) to its active token.
                var candidate = child, depth = 1
                var active: (token: String, depth: Int)?
                while depth <= 64, let row = try await storage.first(tokens, where: "token_hash", .text(Secrets.sha256Hex(candidate))) {
                    if try !row.requireBool("revoked") { active = (candidate, depth); break }
                    candidate = self.childToken(of: candidate)
                    depth += 1
                }
                let revokedAt = try await storage.first(tokens, where: "token_hash", .text(hash))?.text("revoked_at").flatMap(Timestamp.parseMicroseconds) ?? 0
                guard let active, active.depth == 1 || nowMicros - revokedAt <= reuseInterval else {
                    try await storage.delete(AuthSchema.sessions, where: try AuthStorage.equals(AuthSchema.sessions, "id", .text(sessionID)))
                    return .failure(AuthError(.refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used"))
                }
                issued = active.token
            }
            try await storage.update(AuthSchema.sessions, id: sessionID, RowValues(["refreshed_at": .text(storage.now)]))
            guard let user = try await storage.user(id: userID) else {
                return .failure(AuthError(.sessionNotFound, "Session not found"))
            }
            return .success((user, sessionID, issued, try session.json("amr"), try session.requireText("aal")))
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: issued, method: "token_refresh", amr: amr, aal: aal)
    }


    // MARK: The signed-in user

    /// The user and session a Bearer access token names; the session must still exist.
    func signedIn(_ identity: Identity) async throws -> (userID: String, sessionID: String) {
        guard identity.role == .authenticated, let userID = identity.userID else {
            throw AuthError(.badJWT, "invalid claim: missing sub claim")
        }
        guard let sessionID = identity.claimText(["session_id"]) else {
            throw AuthError(.badJWT, "invalid claim: missing session_id claim")
        }
        let plan = try AuthStorage.plan(AuthSchema.sessions, try AuthStorage.equals(AuthSchema.sessions, "id", .text(sessionID)), limit: 1)
        guard let session = AuthStorage.records(try await store.fetch(plan)).first, session.text("user_id") == userID else {
            throw AuthError(.sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        return (userID, sessionID)
    }


    /// `POST /logout`: ends this session (local), every session of the user (global) or all but this one (others).
    package func logout(_ identity: Identity, scope: LogoutScope) async throws {
        let (userID, sessionID) = try await signedIn(identity)
        let sessions = AuthSchema.sessions
        let mine = try AuthStorage.equals(sessions, "user_id", .text(userID))
        let this = try AuthStorage.equals(sessions, "id", .text(sessionID))
        let filter: BoundPredicate = switch scope {
        case .local: this
        case .global: mine
        case .others: .and([mine, .not(this)])
        }
        try await write { storage in try await storage.delete(sessions, where: filter) }
    }
}
