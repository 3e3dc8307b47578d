package import CaravanCore
import Foundation

/// The signed-in user: reading and updating it (`GET`/`PUT /user`, and the admin API's updates).
extension AuthService {
    /// `GET /user`.
    package func currentUser(_ identity: Identity) async throws -> AuthUser {
        let (userID, _) = try await signedIn(identity)
        return try await user(id: userID)
    }

    /// The user with `id` and their identities (two reads, no write lock).
    func user(id: String) async throws -> AuthUser {
        let plans = try AuthStorage.userPlans(id: id)
        guard let user = try AuthStorage.user(try await store.fetch(plans.user), identities: try await store.fetch(plans.identities),
                                              factors: try await store.fetch(plans.factors)) else {
            throw AuthError(.userNotFound, "User not found")
        }
        return user
    }

    /// `PUT /user`: metadata merges; a new password is hashed; a new email or phone is confirmed by a code when
    /// confirmation is on, else set at once.
    package func updateUser(_ identity: Identity, changes: UserChanges) async throws -> AuthUser {
        let (userID, sessionID) = try await signedIn(identity)
        if changes.password != nil { try await checkReauthentication(userID: userID, sessionID: sessionID, nonce: changes.nonce) }
        var restricted = changes
        restricted.appMetadata = nil
        restricted.confirmEmail = false
        restricted.confirmPhone = false
        return try await apply(restricted, toUser: userID, confirmationsApply: true)
    }

    func apply(_ changes: UserChanges, toUser userID: String, confirmationsApply: Bool) async throws -> AuthUser {
        let email = try changes.email.map { (e: String) throws(AuthError) in try self.normalizedEmail(e) }
        let phone = try changes.phone.map { (p: String) throws(AuthError) in try Contact.normalizePhone(p) }
        var hash: String?
        if let password = changes.password {
            try policy.check(password)
            hash = try await passwords.hash(password)
        }
        let confirmEmail = confirmationsApply && configuration.confirmEmail && !changes.confirmEmail
        let confirmPhone = confirmationsApply && configuration.confirmPhone && !changes.confirmPhone
        var pending: [(Contact, OneTimeCodePurpose)] = []
        let passwordHash = hash
        let user: AuthUser = try await write { storage in
            // Updates of one user run one after the other: the metadata merged into is the latest.
            try await storage.tx.serialize(on: "auth.user:\(userID)")
            guard let user = try await storage.user(id: userID) else { throw AuthError(.userNotFound, "User not found") }
            var row = RowValues(["updated_at": .text(storage.now)])
            if let passwordHash { row.append("encrypted_password", .text(passwordHash)) }
            if let metadata = changes.userMetadata { row.append("user_metadata", .json(user.userMetadata.merging(metadata).jsonText)) }
            if let metadata = changes.appMetadata { row.append("app_metadata", .json(user.appMetadata.merging(metadata).jsonText)) }
            try await storage.update(SystemModule.users, id: userID, row)
            for (contact, current, needsCode) in [(email.map(Contact.email), user.email, confirmEmail), (phone.map(Contact.phone), user.phone, confirmPhone)] {
                guard let contact, contact.value != current else { continue }
                if needsCode {
                    if let owner = try await storage.userID(where: contact.column, is: contact.value), owner != userID {
                        throw AuthError(.userAlreadyExists, "A user with this \(contact.channel == .email ? "email address" : "phone number") has already been registered")
                    }
                } else {
                    guard let fresh = try await storage.user(id: userID) else { continue }
                    try await Self.setContact(contact, of: fresh, storage)
                }
            }
            if changes.confirmEmail, user.emailConfirmedAt == nil, email == nil, user.email != nil {
                try await storage.update(SystemModule.users, id: userID, RowValues(["email_confirmed_at": .text(storage.now)]))
            }
            if changes.confirmPhone, user.phoneConfirmedAt == nil, phone == nil, user.phone != nil {
                try await storage.update(SystemModule.users, id: userID, RowValues(["phone_confirmed_at": .text(storage.now)]))
            }
            guard let updated = try await storage.user(id: userID) else { throw AuthError(.userNotFound, "User not found") }
            return updated
        }
        var result = user
        if let email, email != user.email, confirmEmail { pending.append((.email(email), .emailChange)) }
        if let phone, phone != user.phone, confirmPhone { pending.append((.phone(phone), .phoneChange)) }
        for (contact, purpose) in pending {
            let code = try await issueCode(userID: userID, purpose: purpose, recipient: contact.value, channel: contact.channel)
            try await deliver(code, to: contact, purpose: purpose)
            if case .email(let value) = contact { result.newEmail = value } else { result.newPhone = contact.value }
        }
        return result
    }

}
