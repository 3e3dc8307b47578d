import CaravanCore
import Foundation

/// Sign in with Apple (`grant_type=id_token`).
extension AuthService {

    /// `POST /token?grant_type=id_token` with `provider: apple`.
    package func signInWithIDToken(provider: String, idToken: String, nonce: String?, client: AuthClient) async throws -> AuthSession {
        if let configured = oidc.provider(provider) {
            return try await signInWithOIDCIDToken(configured, idToken: idToken, nonce: nonce, client: client)
        }
        guard provider == "apple" || provider == configuration.apple?.issuer else {
            throw AuthError(.providerDisabled, "Custom OIDC provider \"\(provider.prefix(64))\" not allowed")
        }
        guard let apple else { throw AuthError(.providerDisabled, "Provider (issuer \"https://appleid.apple.com\") is not enabled") }
        try limit(.signIn, client: client, identifier: nil)
        let identity = try await apple.verify(idToken, nonce: nonce)
        let email = try identity.email.map { (e: String) throws(AuthError) in try self.normalizedEmail(e) }
        let signupEnabled = configuration.signupEnabled, newUserID = ids.next()
        let userID: String = try await writeThenCheck { storage in
            let identities = AuthSchema.identities
            let filter = BoundPredicate.and([try AuthStorage.equals(identities, "provider", .text("apple")),
                                             try AuthStorage.equals(identities, "provider_id", .text(identity.subject))])
            let data = JSONValue.object([("sub", .string(identity.subject)), ("email", email.map(JSONValue.string) ?? .null),
                                         ("email_verified", .bool(identity.emailVerified)), ("iss", identity.claims["iss"] ?? .null),
                                         ("provider_id", .string(identity.subject))])
            if let existing = try await storage.records(identities, filter, limit: 1).first, let id = existing.text("user_id") {
                try await storage.update(identities, id: try existing.requireText("id"), RowValues(["last_sign_in_at": .text(storage.now), "identity_data": .json(data.jsonText), "updated_at": .text(storage.now)]))
                return .success(id)
            }
            // No automatic linking to an existing user with the same email: with confirmation off, an address on an
            // account proves nothing, and linking would hand the Apple user's data to whoever registered it first.
            guard signupEnabled else { return .failure(AuthError(.signupDisabled, "Signups not allowed for this instance")) }
            let id = newUserID
            let app = JSONValue.object([("provider", .string("apple")), ("providers", .array([.string("apple")]))])
            var row = RowValues(["id": .text(id), "app_metadata": .json(app.jsonText)])
            if let email, try await storage.userID(where: "email", is: email) == nil {
                row.append("email", .text(email))
                if identity.emailVerified { row.append("email_confirmed_at", .text(storage.now)) }
            }
            try await storage.insert(SystemModule.users, row)
            try await storage.addIdentity(userID: id, provider: "apple", providerID: identity.subject, data: data)
            return .success(id)
        }
        return try await startSession(userID: userID, method: "oauth")
    }

    static func addProvider(_ provider: String, toUser id: String, _ storage: AuthStorage) async throws {
        guard let user = try await storage.user(id: id) else { return }
        var providers: [JSONValue] = []
        if case .array(let list)? = user.appMetadata["providers"] { providers = list }
        if !providers.contains(.string(provider)) { providers.append(.string(provider)) }
        let app = user.appMetadata.merging(.object([("providers", .array(providers))]))
        try await storage.update(SystemModule.users, id: id, RowValues(["app_metadata": .json(app.jsonText), "updated_at": .text(storage.now)]))
    }

}
