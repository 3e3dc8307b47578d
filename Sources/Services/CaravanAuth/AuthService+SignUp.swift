package import CaravanCore
import Foundation

/// Sign-up: users with a password, anonymous users, and the rows every new user gets.
extension AuthService {
    /// `POST /signup`: with an email or phone and a password, a new user (a session unless confirmation is on);
    /// with neither, an anonymous user and session.
    package func signUp(email: String?, phone: String?, password: String?, data: JSONValue?, client: AuthClient) async throws -> SignUpOutcome {
        let metadata = Self.objectOrEmpty(data)
        guard let contact = try self.contact(email: email, phone: phone) else {
            guard password == nil || password == "" else { throw AuthError.invalidField("Signup requires a valid email or phone") }
            guard configuration.anonymousEnabled else {
                throw AuthError(.anonymousProviderDisabled, "Anonymous sign-ins are disabled")
            }
            try limit(.signUp, client: client, identifier: nil)
            return .session(try await createAnonymousUser(metadata: metadata))
        }
        guard configuration.signupEnabled else { throw AuthError(.signupDisabled, "Signups not allowed for this instance") }
        guard let password, !password.isEmpty else { throw AuthError.invalidField("Signup requires a valid password") }
        try policy.check(password)
        try limit(.signUp, client: client, identifier: nil)
        let hash = try await passwords.hash(password)
        let needsConfirmation = contact.channel == .email ? configuration.confirmEmail : configuration.confirmPhone
        let sessionID = ids.next(), newUserID = ids.next()
        let refreshToken = Secrets.randomToken()
        let code = Secrets.sixDigitCode()
        let nowSeconds = self.nowSeconds
        let otpLifetime = configuration.otpLifetime
        let resendInterval = configuration.otpResendInterval
        let user: AuthUser = try await writeThenCheck { storage in
            let id: String
            if let existing = try await storage.first(SystemModule.users, where: contact.column, .text(contact.value)).map(AuthUser.init) {
                // An address nobody has proven is not taken: with confirmation on, a repeat sign-up sets the password
                // and sends a new code (as GoTrue does), so whoever signed the address up first keeps nothing.
                guard needsConfirmation, existing.confirmedAt(of: contact) == nil else {
                    return .failure(AuthError(.userAlreadyExists, "User already registered"))
                }
                if let refusal = try await Self.resendRefusal(storage, userID: existing.id, purpose: .signup, channel: contact.channel,
                                                        nowSeconds: nowSeconds, interval: resendInterval) {
                    return .failure(refusal)
                }
                try await storage.update(SystemModule.users, id: existing.id, RowValues(["encrypted_password": .text(hash), "updated_at": .text(storage.now)]))
                id = existing.id
            } else {
                id = try await Self.createUser(storage, id: newUserID, contact: contact, passwordHash: hash, metadata: metadata, confirmed: !needsConfirmation)
            }
            if needsConfirmation {
                try await Self.storeCode(storage, code: code, userID: id, purpose: .signup, recipient: contact.value, nowSeconds: nowSeconds, lifetime: otpLifetime)
            } else {
                try await storage.startSession(userID: id, method: "password", nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            }
            guard let user = try await storage.user(id: id) else { throw AuthError(.unexpectedFailure, "user vanished") }
            return .success(user)
        }
        if needsConfirmation {
            try await deliver(code, to: contact, purpose: .signup)
            return .user(user)
        }
        return .session(try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: "password"))
    }

    func createAnonymousUser(metadata: JSONValue) async throws -> AuthSession {
        let sessionID = ids.next(), id = ids.next()
        let refreshToken = Secrets.randomToken()
        let nowSeconds = self.nowSeconds
        let user: AuthUser = try await write { storage in
            let app = JSONValue.object([("provider", .string("anonymous")), ("providers", .array([.string("anonymous")]))])
            try await storage.insert(SystemModule.users, RowValues([
                "id": .text(id), "is_anonymous": .bool(true), "app_metadata": .json(app.jsonText), "user_metadata": .json(metadata.jsonText),
            ]))
            try await storage.startSession(userID: id, method: "anonymous", nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            guard let user = try await storage.user(id: id) else { throw AuthError(.unexpectedFailure, "user vanished") }
            return user
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: "anonymous")
    }

    /// Inserts a user with an email or phone identity; returns the id.
    static func createUser(_ storage: AuthStorage, id: String, contact: Contact, passwordHash: String?, metadata: JSONValue,
                           confirmed: Bool, appMetadata: JSONValue? = nil) async throws -> String {
        var app = JSONValue.object([("provider", .string(contact.provider)), ("providers", .array([.string(contact.provider)]))])
        if let appMetadata { app = app.merging(appMetadata) }
        var row = RowValues([
            "id": .text(id), contact.column: .text(contact.value),
            "app_metadata": .json(app.jsonText), "user_metadata": .json(metadata.jsonText),
        ])
        if let passwordHash { row.append("encrypted_password", .text(passwordHash)) }
        if confirmed { row.append(contact.confirmedColumn, .text(storage.now)) }
        do {
            try await storage.insert(SystemModule.users, row)
        } catch let error as CaravanError where error.code == .uniqueViolation {
            throw AuthError(.userAlreadyExists, "User already registered")
        }
        try await storage.addIdentity(userID: id, provider: contact.provider, providerID: id, data: identityData(id: id, contact: contact, confirmed: confirmed))
        return id
    }

    static func identityData(id: String, contact: Contact, confirmed: Bool) -> JSONValue {
        .object([
            ("sub", .string(id)), (contact.column, .string(contact.value)),
            ("email_verified", .bool(contact.channel == .email && confirmed)),
            ("phone_verified", .bool(contact.channel == .sms && confirmed)),
        ])
    }
}
