package import CaravanCore

/// What the admin console works with after signing in: a short-lived service-role token.
package struct AdminConsoleToken: Sendable {
    /// A JWT with `role = service_role`, `sub` = the admin's user id and `caravan_admin = true`.
    package let accessToken: String
    /// Seconds since 1970.
    package let expiresAt: Int64
    /// The admin it was issued to.
    package let user: AuthUser
}

/// The admin console's sign-in (`/admin/api/session`) and the admin actions GoTrue's admin API lacks.
///
/// An admin is an auth user whose `app_metadata.role` is `admin` in the database (set by
/// `caravan user set-role EMAIL admin` or the admin API); the claim in a token may be stale, so the database decides.
/// An admin exchanges their credentials (or a fresh access token) for a service-role token that lives for
/// `accessTokenLifetime` seconds; every request of the console then runs as the service role, through the same
/// endpoints and policies any service-role client uses.
extension AuthService {
    /// The signed-in user behind `identity` when the database says their app role is `admin`; `not_admin` otherwise.
    package func requireAdmin(_ identity: Identity) async throws -> AuthUser {
        guard identity.role == .authenticated, let userID = identity.userID else {
            throw AuthError(.notAdmin, "The admin console needs an admin account or the service_role key")
        }
        let user: AuthUser
        do {
            user = try await self.user(id: userID)
        } catch let error as AuthError where error.code == .userNotFound {
            throw AuthError(.notAdmin, "The admin console needs an admin account or the service_role key")
        }
        guard user.appRole == "admin" else {
            throw AuthError(.notAdmin, "This account is not an admin (app_metadata.role is not admin)")
        }
        return user
    }

    /// A service-role token for `user` (who must be an admin), valid for `accessTokenLifetime` seconds.
    package func issueAdminConsoleToken(for user: AuthUser) async throws -> AdminConsoleToken {
        guard user.appRole == "admin" else { throw AuthError(.notAdmin, "This account is not an admin (app_metadata.role is not admin)") }
        let issuedAt = nowSeconds
        let expiresAt = issuedAt + configuration.accessTokenLifetime
        let claims = JSONValue.object([
            ("exp", .integer(expiresAt)), ("iat", .integer(issuedAt)), ("iss", .string(issuer)), ("role", .string("service_role")),
            ("sub", .string(user.id)), ("email", .string(user.email ?? "")), ("caravan_admin", .bool(true)),
        ])
        return AdminConsoleToken(accessToken: try await verifier.issueToken(claims: claims), expiresAt: expiresAt, user: user)
    }

    /// The console's password sign-in: the same checks and rate limits as `POST /token?grant_type=password`, then
    /// the admin check. The password session it opens is closed again at once (the console keeps only the
    /// service-role token), and a non-admin's session is closed before the refusal.
    package func adminConsoleSignIn(email: String?, phone: String?, password: String, client: AuthClient) async throws -> AdminConsoleToken {
        let session = try await signIn(email: email, phone: phone, password: password, client: client)
        let identity = try await verifier.identity(for: session.accessToken)
        let admin: AuthUser
        do {
            admin = try await requireAdmin(identity)
        } catch {
            try await logout(identity, scope: .local)
            throw error
        }
        try await logout(identity, scope: .local)
        return try await issueAdminConsoleToken(for: admin)
    }

    /// Signs the user out everywhere: every session (and so every refresh token) ends. Access tokens already issued
    /// stay valid until they expire (`accessTokenLifetime`), as in GoTrue.
    package func adminSignOut(_ identity: Identity, id: String) async throws {
        try requireServiceRole(identity)
        let userID = try Self.userID(id)
        let sessions = AuthSchema.sessions
        let mine = try AuthStorage.equals(sessions, "user_id", .text(userID))
        let found: Bool = try await write { storage in
            guard try await storage.user(id: userID) != nil else { return false }
            try await storage.delete(sessions, where: mine)
            return true
        }
        guard found else { throw AuthError(.userNotFound, "User not found") }
    }
}
