package import CaravanCore

/// One row read back from an auth table, by column name.
struct Record: Sendable {
    let values: [String: Value]

    init(outputs: [OutputColumn], row: [Value]) {
        var values: [String: Value] = [:]
        for (output, value) in zip(outputs, row) { values[output.name] = value }
        self.values = values
    }

    /// A nullable text column: nil when NULL (or absent).
    func text(_ name: String) -> String? {
        if case .text(let text)? = values[name] { return text }
        return nil
    }

    /// A NOT NULL text column; a NULL or a value of another type is corrupt data, never `""`.
    func requireText(_ name: String) throws(AuthError) -> String {
        guard case .text(let text)? = values[name] else { throw Self.corrupt(name, "is NULL or not text") }
        return text
    }

    /// A NOT NULL integer column.
    func requireInteger(_ name: String) throws(AuthError) -> Int64 {
        guard case .integer(let value)? = values[name] else { throw Self.corrupt(name, "is NULL or not an integer") }
        return value
    }

    /// A NOT NULL boolean column (SQLite stores booleans as 0 / 1).
    func requireBool(_ name: String) throws(AuthError) -> Bool {
        switch values[name] {
        case .bool(let value)?: return value
        case .integer(let value)?: return value != 0
        default: throw Self.corrupt(name, "is NULL or not a boolean")
        }
    }

    /// A NOT NULL JSON column, parsed; unparsable JSON is corrupt data, never `{}`.
    func json(_ name: String) throws(AuthError) -> JSONValue {
        guard case .json(let text)? = values[name] else { throw Self.corrupt(name, "is NULL or not JSON") }
        do {
            return try JSONParser.parse(text)
        } catch {
            throw Self.corrupt(name, "holds invalid JSON")
        }
    }

    /// The error of a stored auth row that does not decode: `unexpected_failure` for the client, the column named
    /// for the log only (never its value).
    static func corrupt(_ column: String, _ problem: String) -> AuthError {
        AuthError(.unexpectedFailure, "Unexpected failure, please check server logs for more information",
                  internalDetail: "stored auth record does not decode: column \(column) \(problem)")
    }
}

/// A user as auth sees it: the `users` row and its identities.
package struct AuthUser: Sendable {
    package let id: String
    package let email: String?
    package let phone: String?
    package let appMetadata: JSONValue
    package let userMetadata: JSONValue
    package let isAnonymous: Bool
    package let createdAt: String
    package let updatedAt: String
    let encryptedPassword: String?
    package let emailConfirmedAt: String?
    package let phoneConfirmedAt: String?
    package let lastSignInAt: String?
    package var identities: [AuthIdentity] = []
    /// Second factors, oldest first (GoTrue's `user.factors`, absent when there are none).
    package var factors: [MFAFactor] = []
    /// A pending email or phone change (sent back as `new_email` / `new_phone`).
    package var newEmail: String?
    package var newPhone: String?

    /// Decodes a `users` row; throws `unexpected_failure` (the column in `internalDetail`) on corrupt data.
    init(_ record: Record) throws(AuthError) {
        id = try record.requireText("id")
        email = record.text("email")
        phone = record.text("phone")
        appMetadata = try record.json("app_metadata")
        userMetadata = try record.json("user_metadata")
        isAnonymous = try record.requireBool("is_anonymous")
        createdAt = try record.requireText("created_at")
        updatedAt = try record.requireText("updated_at")
        encryptedPassword = record.text("encrypted_password")
        emailConfirmedAt = record.text("email_confirmed_at")
        phoneConfirmedAt = record.text("phone_confirmed_at")
        lastSignInAt = record.text("last_sign_in_at")
    }

    /// When the user proved `contact`'s kind of address (email or phone), if ever.
    func confirmedAt(of contact: Contact) -> String? {
        if case .email = contact { emailConfirmedAt } else { phoneConfirmedAt }
    }

    /// The app role an administrator gave the user (`app_metadata.role`), e.g. `admin`.
    package var appRole: String? {
        if case .string(let role)? = appMetadata["role"] { return role }
        return nil
    }

    /// The GoTrue User object.
    package var json: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [
            ("id", .string(id)),
            ("aud", .string("authenticated")),
            ("role", .string("authenticated")),
            ("email", .string(email ?? "")),
            ("phone", .string(phone ?? "")),
        ]
        if let emailConfirmedAt { pairs.append(("email_confirmed_at", .string(emailConfirmedAt))) }
        if let phoneConfirmedAt { pairs.append(("phone_confirmed_at", .string(phoneConfirmedAt))) }
        if let confirmed = emailConfirmedAt ?? phoneConfirmedAt { pairs.append(("confirmed_at", .string(confirmed))) }
        if let newEmail { pairs.append(("new_email", .string(newEmail))) }
        if let newPhone { pairs.append(("new_phone", .string(newPhone))) }
        if let lastSignInAt { pairs.append(("last_sign_in_at", .string(lastSignInAt))) }
        pairs += [
            ("app_metadata", appMetadata),
            ("user_metadata", userMetadata),
            ("identities", .array(identities.map(\.json))),
        ]
        if !factors.isEmpty { pairs.append(("factors", .array(factors.map(\.json)))) }
        pairs += [
            ("created_at", .string(createdAt)),
            ("updated_at", .string(updatedAt)),
            ("is_anonymous", .bool(isAnonymous)),
        ]
        return .object(pairs)
    }
}

/// A way a user signs in: email, phone or a provider such as apple.
package struct AuthIdentity: Sendable {
    package let id: String
    package let userID: String
    package let provider: String
    package let providerID: String
    package let identityData: JSONValue
    package let lastSignInAt: String?
    package let createdAt: String
    package let updatedAt: String

    /// Decodes an `identities` row; throws `unexpected_failure` on corrupt data.
    init(_ record: Record) throws(AuthError) {
        id = try record.requireText("id")
        userID = try record.requireText("user_id")
        provider = try record.requireText("provider")
        providerID = try record.requireText("provider_id")
        identityData = try record.json("identity_data")
        lastSignInAt = record.text("last_sign_in_at")
        createdAt = try record.requireText("created_at")
        updatedAt = try record.requireText("updated_at")
    }

    /// The GoTrue Identity object (`id` is the provider's subject, `identity_id` the row).
    var json: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [
            ("identity_id", .string(id)),
            ("id", .string(providerID)),
            ("user_id", .string(userID)),
            ("identity_data", identityData),
            ("provider", .string(provider)),
        ]
        if case .string(let email)? = identityData["email"] { pairs.append(("email", .string(email))) }
        if let lastSignInAt { pairs.append(("last_sign_in_at", .string(lastSignInAt))) }
        pairs += [("created_at", .string(createdAt)), ("updated_at", .string(updatedAt))]
        return .object(pairs)
    }
}

/// A signed-in session as the client receives it.
package struct AuthSession: Sendable {
    package let accessToken: String
    package let refreshToken: String
    package let expiresIn: Int64
    package let expiresAt: Int64
    package let user: AuthUser

    package var json: JSONValue {
        .object([
            ("access_token", .string(accessToken)),
            ("token_type", .string("bearer")),
            ("expires_in", .integer(expiresIn)),
            ("expires_at", .integer(expiresAt)),
            ("refresh_token", .string(refreshToken)),
            ("user", user.json),
        ])
    }
}

/// What sign-up returns: a session when no confirmation is needed, else the bare user.
package enum SignUpOutcome: Sendable {
    case session(AuthSession)
    case user(AuthUser)

    package var json: JSONValue {
        switch self {
        case .session(let session): session.json
        case .user(let user): user.json
        }
    }
}

extension JSONValue {
    /// `self` with `changes`' keys set (a `null` value removes the key), as GoTrue merges metadata.
    func merging(_ changes: JSONValue) -> JSONValue {
        guard case .object(var pairs) = self else { return changes }
        guard case .object(let updates) = changes else { return self }
        for (key, value) in updates {
            pairs.removeAll { $0.key == key }
            if value != .null { pairs.append((key, value)) }
        }
        return .object(pairs)
    }
}
