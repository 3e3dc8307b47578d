package import CaravanCore

/// What the admin API and `caravan user create` take to create a user.
package struct NewUser: Sendable {
    package var email: String?
    package var phone: String?
    package var password: String?
    package var userMetadata: JSONValue
    package var appMetadata: JSONValue?
    package var emailConfirmed: Bool
    package var phoneConfirmed: Bool

    package init(email: String? = nil, phone: String? = nil, password: String? = nil, userMetadata: JSONValue = .object([]),
                appMetadata: JSONValue? = nil, emailConfirmed: Bool = false, phoneConfirmed: Bool = false) {
        self.email = email
        self.phone = phone
        self.password = password
        self.userMetadata = userMetadata
        self.appMetadata = appMetadata
        self.emailConfirmed = emailConfirmed
        self.phoneConfirmed = phoneConfirmed
    }
}

/// A page of the admin user list and how many users there are in all (`X-Total-Count`).
package struct AdminUserPage: Sendable {
    package let users: [AuthUser]
    package let total: Int
}

/// GoTrue's admin API (`/admin/users`), for the service role and the CLI. Only here can `app_metadata` — and so
/// the app role in `app_metadata.role` — be written.
extension AuthService {
    func requireServiceRole(_ identity: Identity) throws(AuthError) {
        guard identity.role == .serviceRole else { throw AuthError(.notAdmin, "User not allowed") }
    }

    package func adminListUsers(_ identity: Identity, page: Int, perPage: Int) async throws -> [AuthUser] {
        try await adminListUsers(identity, page: page, perPage: perPage, filter: nil).users
    }

    /// One page (from 1) of `perPage` users, oldest first, with the number of users in all — of those that match
    /// `filter` when given (as GoTrue's `filter`: a case-insensitive part of the email or the phone, or the exact id),
    /// read in one transaction.
    package func adminListUsers(_ identity: Identity, page: Int, perPage: Int, filter: String?) async throws -> AdminUserPage {
        try requireServiceRole(identity)
        let offset = max(page - 1, 0) * perPage
        let matching = try Self.matching(filter)
        return try await write { storage in
            let users = try await Self.page(storage, offset: offset, limit: perPage, matching: matching)
            let total = try await storage.tx.count(SystemModule.users, where: matching)
            return AdminUserPage(users: users, total: total)
        }
    }

    static func page(_ storage: AuthStorage, offset: Int, limit: Int, matching: BoundPredicate = .constant(true)) async throws -> [AuthUser] {
        let plan = try AuthStorage.plan(SystemModule.users, matching, order: [OrderTerm(column: "created_at"), OrderTerm(column: "id")],
                                        limit: limit, offset: offset)
        var users: [AuthUser] = []
        for record in AuthStorage.records(try await storage.tx.fetch(plan)) {
            if let user = try await storage.user(id: try record.requireText("id")) { users.append(user) }
        }
        return users
    }

    /// The users a list `filter` names: every user without one.
    static func matching(_ filter: String?) throws -> BoundPredicate {
        let needle = filter?.trimmingSpaces ?? ""
        guard !needle.isEmpty else { return .constant(true) }
        let users = SystemModule.users
        var escaped = ""
        for character in needle {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        var branches: [BoundPredicate] = [
            .like(try users.requireColumn("email"), pattern: "%" + escaped + "%", caseInsensitive: true),
            .like(try users.requireColumn("phone"), pattern: "%" + escaped + "%", caseInsensitive: true),
        ]
        if let id = ColumnType.canonicalUUID(needle) { branches.append(.compare(try users.requireColumn("id"), .eq, .text(id))) }
        return .or(branches)
    }

    package func adminCreateUser(_ identity: Identity, _ new: NewUser) async throws -> AuthUser {
        try requireServiceRole(identity)
        guard let contact = try self.contact(email: new.email, phone: new.phone) else {
            throw AuthError.invalidField("Unable to validate email address: invalid format")
        }
        var hash: String?
        if let password = new.password {
            try policy.check(password)
            hash = try await passwords.hash(password)
        }
        let passwordHash = hash, newUserID = ids.next()
        let userID: String = try await writeThenCheck { storage in
            guard try await storage.userID(where: contact.column, is: contact.value) == nil else {
                return .failure(AuthError(.userAlreadyExists, "A user with this \(contact.channel == .email ? "email address" : "phone number") has already been registered"))
            }
            let confirmed = contact.channel == .email ? new.emailConfirmed : new.phoneConfirmed
            let id = try await Self.createUser(storage, id: newUserID, contact: contact, passwordHash: passwordHash, metadata: new.userMetadata,
                                         confirmed: confirmed, appMetadata: new.appMetadata)
            // Both an email and a phone: the phone is the second address.
            if case .email = contact, let phone = try new.phone.map({ (p: String) throws(AuthError) in try Contact.normalizePhone(p) }) {
                guard try await storage.userID(where: "phone", is: phone) == nil else {
                    return .failure(AuthError(.userAlreadyExists, "A user with this phone number has already been registered"))
                }
                var row = RowValues(["phone": .text(phone)])
                if new.phoneConfirmed { row.append("phone_confirmed_at", .text(storage.now)) }
                try await storage.update(SystemModule.users, id: id, row)
            }
            return .success(id)
        }
        return try await user(id: userID)
    }

    package func adminGetUser(_ identity: Identity, id: String) async throws -> AuthUser {
        try requireServiceRole(identity)
        return try await user(id: try Self.userID(id))
    }

    package func adminUpdateUser(_ identity: Identity, id: String, changes: UserChanges) async throws -> AuthUser {
        try requireServiceRole(identity)
        return try await apply(changes, toUser: try Self.userID(id), confirmationsApply: false)
    }

    /// Deletes the user; their sessions, identities and codes go with them, and app rows cascade as the schema says.
    package func adminDeleteUser(_ identity: Identity, id: String) async throws {
        try requireServiceRole(identity)
        let userID = try Self.userID(id)
        let deleted: Bool = try await write { storage in
            guard try await storage.user(id: userID) != nil else { return false }
            try await storage.delete(SystemModule.users, where: try AuthStorage.equals(SystemModule.users, "id", .text(userID)))
            return true
        }
        guard deleted else { throw AuthError(.userNotFound, "User not found") }
    }

    /// A user id or email (the CLI accepts either), resolved to the id.
    package func resolveUser(_ identity: Identity, idOrEmail: String) async throws -> String {
        try requireServiceRole(identity)
        if let id = ColumnType.canonicalUUID(idOrEmail) { return id }
        let email = try self.normalizedEmail(idOrEmail)
        guard let id = try await write({ storage in try await storage.userID(where: "email", is: email) }) else {
            throw AuthError(.userNotFound, "User not found")
        }
        return id
    }

    static func userID(_ text: String) throws(AuthError) -> String {
        guard let id = ColumnType.canonicalUUID(text) else { throw AuthError(.validationFailed, "user id must be a UUID") }
        return id
    }
}
