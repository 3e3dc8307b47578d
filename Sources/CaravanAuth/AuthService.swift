import CaravanCore
import Crypto
import Foundation
import Logging
import NIOPosix

/// Who is asking, as far as abuse limits care.
public struct AuthClient: Sendable, Hashable {
    public let ip: String

    public init(ip: String) { self.ip = ip }
}

/// An email or a phone number, normalized (emails lower-cased and trimmed; phones as E.164 digits without `+`).
public enum Contact: Sendable, Hashable {
    case email(String)
    case phone(String)

    /// Normalizes and validates; `nil` when neither is given.
    public static func from(email: String?, phone: String?) throws(AuthError) -> Contact? {
        if let email, !email.isEmpty { return .email(try normalizeEmail(email)) }
        if let phone, !phone.isEmpty { return .phone(try normalizePhone(phone)) }
        return nil
    }

    static func normalizeEmail(_ text: String) throws(AuthError) -> String {
        let email = text.trimmingSpaces.lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 255, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !email.contains(where: { $0.isWhitespace || $0.isNewline || "<>()[],;:\\\"".contains($0) }) else {
            throw AuthError.invalidField("Unable to validate email address: invalid format")
        }
        return email
    }

    static func normalizePhone(_ text: String) throws(AuthError) -> String {
        var digits = text.filter { !" -().".contains($0) }
        if digits.hasPrefix("+") { digits.removeFirst() }
        guard (8...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), !digits.hasPrefix("0") else {
            throw AuthError.invalidField("Invalid phone number format (E.164 required)")
        }
        return digits
    }

    var column: String { if case .email = self { "email" } else { "phone" } }
    var value: String { switch self { case .email(let v), .phone(let v): v } }
    var channel: MessageChannel { if case .email = self { .email } else { .sms } }
    var provider: String { if case .email = self { "email" } else { "phone" } }
    var confirmedColumn: String { if case .email = self { "email_confirmed_at" } else { "phone_confirmed_at" } }
}

/// `POST /verify`'s `type`.
public enum VerificationType: String, Sendable {
    case email, signup, magiclink, invite, recovery, sms
    case emailChange = "email_change"
    case phoneChange = "phone_change"

    /// The codes this type accepts: clients confirm a sign-up with `email` (or `sms`) as often as with `signup`.
    var purposes: [OneTimeCodePurpose] {
        switch self {
        case .email, .magiclink, .invite, .signup: [.email, .signup]
        case .sms: [.sms, .signup]
        case .recovery: [.recovery]
        case .emailChange: [.emailChange]
        case .phoneChange: [.phoneChange]
        }
    }
}

/// `POST /logout`'s scope.
public enum LogoutScope: String, Sendable {
    case global, local, others
}

/// What `PUT /user` (and the admin API) may change.
public struct UserChanges: Sendable {
    public var email: String?
    public var phone: String?
    public var password: String?
    public var userMetadata: JSONValue?
    /// Admin only.
    public var appMetadata: JSONValue?
    /// Admin only: mark the email / phone confirmed.
    public var confirmEmail = false
    public var confirmPhone = false

    public init(email: String? = nil, phone: String? = nil, password: String? = nil, userMetadata: JSONValue? = nil, appMetadata: JSONValue? = nil) {
        self.email = email
        self.phone = phone
        self.password = password
        self.userMetadata = userMetadata
        self.appMetadata = appMetadata
    }
}

/// GoTrue's flows on Caravan's store: sign-up, sign-in (password, refresh token, Apple id_token, one-time codes),
/// sessions with rotating refresh tokens, user updates, logout, and the admin API. Knows no HTTP.
public final class AuthService: Sendable {
    let store: any Store
    let pipeline: WritePipeline
    let catalog: Catalog
    let verifier: TokenVerifier
    public let configuration: AuthConfiguration
    let issuer: String
    let sender: any MessageSender
    let apple: AppleIDTokenVerifier?
    let passwords: PasswordHasher
    let policy: PasswordPolicy
    let limiter: RateLimiter
    let refreshKey: SymmetricKey
    let logger: Logger
    /// Microseconds since 1970.
    let clock: @Sendable () -> Int64

    /// - Parameters:
    ///   - baseURL: the server's public URL; tokens carry `iss = <baseURL>/auth/v1` unless `auth_external_url` is set.
    ///   - clock: microseconds since 1970.
    public init(store: any Store, pipeline: WritePipeline, catalog: Catalog, secret: SigningSecret, verifier: TokenVerifier,
                configuration: AuthConfiguration, baseURL: String, sender: any MessageSender, threadPool: NIOThreadPool,
                logger: Logger, clock: @escaping @Sendable () -> Int64) async throws {
        self.store = store
        self.pipeline = pipeline
        self.catalog = catalog
        self.verifier = verifier
        self.configuration = configuration
        self.issuer = (configuration.externalURL ?? baseURL) + "/auth/v1"
        self.sender = sender
        self.apple = configuration.apple.map { AppleIDTokenVerifier(configuration: $0, now: { clock() / 1_000_000 }) }
        self.passwords = try await PasswordHasher(cost: configuration.bcryptCost, pool: threadPool)
        self.policy = PasswordPolicy(minimumLength: configuration.minimumPasswordLength)
        self.limiter = RateLimiter(windowSeconds: configuration.rateLimitWindow)
        self.refreshKey = SymmetricKey(data: Secrets.hmacSHA256(key: SymmetricKey(data: secret.bytes), "caravan refresh tokens"))
        self.logger = logger
        self.clock = clock
    }

    var nowSeconds: Int64 { clock() / 1_000_000 }

    /// `value` when it is a JSON object, else `{}` (metadata must be an object).
    static func objectOrEmpty(_ value: JSONValue?) -> JSONValue {
        if case .object? = value, let value { return value }
        return .object([])
    }

    private var serviceAccess: AccessContext { catalog.access(for: .serviceRole) }

    /// Runs `body` in one transaction as the service role, with typed storage at the transaction's instant.
    func write<T: Sendable>(_ body: @escaping @Sendable (AuthStorage) throws -> T) async throws -> T {
        let now = Timestamp.format(microseconds: clock())
        return try await pipeline.run(serviceAccess) { tx in try body(AuthStorage(tx: tx, now: now)) }
    }

    /// Like `write`, for flows whose refusals must still commit (a failed code attempt is counted, a reused refresh
    /// token revokes its family): the body returns the refusal, which is thrown after commit.
    func writeThenCheck<T: Sendable>(_ body: @escaping @Sendable (AuthStorage) throws -> Result<T, AuthError>) async throws -> T {
        try await write(body).get()
    }

    // MARK: Abuse limits

    func limit(_ action: RateLimitedAction, client: AuthClient, identifier: String?) throws(AuthError) {
        guard let rule = configuration.rateLimits[action] else { return }
        let now = nowSeconds
        guard limiter.allow("\(action.rawValue)|ip|\(client.ip)", limit: rule.perIP, now: now) else {
            throw AuthError(.overRequestRateLimit, "Request rate limit reached")
        }
        if let identifier, let perIdentifier = rule.perIdentifier,
           !limiter.allow("\(action.rawValue)|id|\(identifier)", limit: perIdentifier, now: now) {
            throw AuthError(.overRequestRateLimit, "Request rate limit reached")
        }
    }

    // MARK: Sign-up and sign-in

    /// `POST /signup`: with an email or phone and a password, a new user (a session unless confirmation is on);
    /// with neither, an anonymous user and session.
    public func signUp(email: String?, phone: String?, password: String?, data: JSONValue?, client: AuthClient) async throws -> SignUpOutcome {
        let metadata = Self.objectOrEmpty(data)
        guard let contact = try Contact.from(email: email, phone: phone) else {
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
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Secrets.randomToken()
        let code = Secrets.sixDigitCode()
        let nowSeconds = self.nowSeconds
        let otpLifetime = configuration.otpLifetime
        let resendInterval = configuration.otpResendInterval
        let user: AuthUser = try await writeThenCheck { storage in
            let id: String
            if let existing = try storage.first(SystemModule.users, where: contact.column, .text(contact.value)).map(AuthUser.init) {
                // An address nobody has proven is not taken: with confirmation on, a repeat sign-up sets the password
                // and sends a new code (as GoTrue does), so whoever signed the address up first keeps nothing.
                guard needsConfirmation, existing.confirmedAt(of: contact) == nil else {
                    return .failure(AuthError(.userAlreadyExists, "User already registered"))
                }
                if let refusal = try Self.resendRefusal(storage, userID: existing.id, purpose: .signup, channel: contact.channel,
                                                        nowSeconds: nowSeconds, interval: resendInterval) {
                    return .failure(refusal)
                }
                try storage.update(SystemModule.users, id: existing.id, RowValues(["encrypted_password": .text(hash), "updated_at": .text(storage.now)]))
                id = existing.id
            } else {
                id = try Self.createUser(storage, contact: contact, passwordHash: hash, metadata: metadata, confirmed: !needsConfirmation)
            }
            if needsConfirmation {
                try Self.storeCode(storage, code: code, userID: id, purpose: .signup, recipient: contact.value, nowSeconds: nowSeconds, lifetime: otpLifetime)
            } else {
                try storage.startSession(userID: id, method: "password", nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            }
            guard let user = try storage.user(id: id) else { throw AuthError(.unexpectedFailure, "user vanished") }
            return .success(user)
        }
        if needsConfirmation {
            try await deliver(code, to: contact, purpose: .signup)
            return .user(user)
        }
        return .session(try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: "password"))
    }

    private func createAnonymousUser(metadata: JSONValue) async throws -> AuthSession {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Secrets.randomToken()
        let nowSeconds = self.nowSeconds
        let user: AuthUser = try await write { storage in
            let id = UUID().uuidString.lowercased()
            let app = JSONValue.object([("provider", .string("anonymous")), ("providers", .array([.string("anonymous")]))])
            try storage.insert(SystemModule.users, RowValues([
                "id": .text(id), "is_anonymous": .bool(true), "app_metadata": .json(app.jsonText), "user_metadata": .json(metadata.jsonText),
            ]))
            try storage.startSession(userID: id, method: "anonymous", nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            guard let user = try storage.user(id: id) else { throw AuthError(.unexpectedFailure, "user vanished") }
            return user
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: "anonymous")
    }

    /// Inserts a user with an email or phone identity; returns the id.
    static func createUser(_ storage: AuthStorage, contact: Contact, passwordHash: String?, metadata: JSONValue,
                           confirmed: Bool, appMetadata: JSONValue? = nil) throws -> String {
        let id = UUID().uuidString.lowercased()
        var app = JSONValue.object([("provider", .string(contact.provider)), ("providers", .array([.string(contact.provider)]))])
        if let appMetadata { app = app.merging(appMetadata) }
        var row = RowValues([
            "id": .text(id), contact.column: .text(contact.value),
            "app_metadata": .json(app.jsonText), "user_metadata": .json(metadata.jsonText),
        ])
        if let passwordHash { row.append("encrypted_password", .text(passwordHash)) }
        if confirmed { row.append(contact.confirmedColumn, .text(storage.now)) }
        do {
            try storage.insert(SystemModule.users, row)
        } catch let error as CaravanError where error.code == .uniqueViolation {
            throw AuthError(.userAlreadyExists, "User already registered")
        }
        try storage.addIdentity(userID: id, provider: contact.provider, providerID: id, data: identityData(id: id, contact: contact, confirmed: confirmed))
        return id
    }

    static func identityData(id: String, contact: Contact, confirmed: Bool) -> JSONValue {
        .object([
            ("sub", .string(id)), (contact.column, .string(contact.value)),
            ("email_verified", .bool(contact.channel == .email && confirmed)),
            ("phone_verified", .bool(contact.channel == .sms && confirmed)),
        ])
    }

    /// `POST /token?grant_type=password`.
    public func signIn(email: String?, phone: String?, password: String, client: AuthClient) async throws -> AuthSession {
        guard let contact = try Contact.from(email: email, phone: phone) else {
            throw AuthError.invalidField("Only an email address or phone number should be provided on login.")
        }
        try limit(.signIn, client: client, identifier: contact.value)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, contact.column, .text(contact.value)), limit: 1)
        let found = AuthStorage.records(try await store.fetch(plan)).first.map(AuthUser.init)
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
    func startSession(userID: String, method: String, before: (@Sendable (AuthStorage) throws -> Void)? = nil) async throws -> AuthSession {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Secrets.randomToken()
        let nowSeconds = self.nowSeconds
        let user: AuthUser = try await write { storage in
            try before?(storage)
            try storage.startSession(userID: userID, method: method, nowSeconds: nowSeconds, sessionID: sessionID, refreshToken: refreshToken)
            guard let user = try storage.user(id: userID) else { throw AuthError.wrongCredentials }
            return user
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: method)
    }

    /// Signs the access token of a session.
    func makeSession(user: AuthUser, sessionID: String, refreshToken: String, method: String, amr: JSONValue? = nil) async throws -> AuthSession {
        let issuedAt = nowSeconds
        let expiresAt = issuedAt + configuration.accessTokenLifetime
        let methods = amr ?? .array([.object([("method", .string(method)), ("timestamp", .integer(issuedAt))])])
        let claims = JSONValue.object([
            ("aud", .string("authenticated")), ("exp", .integer(expiresAt)), ("iat", .integer(issuedAt)), ("iss", .string(issuer)),
            ("sub", .string(user.id)), ("email", .string(user.email ?? "")), ("phone", .string(user.phone ?? "")),
            ("app_metadata", user.appMetadata), ("user_metadata", user.userMetadata), ("role", .string("authenticated")),
            ("aal", .string("aal1")), ("amr", methods), ("session_id", .string(sessionID)), ("is_anonymous", .bool(user.isAnonymous)),
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
    public func refresh(_ token: String, client: AuthClient) async throws -> AuthSession {
        guard !token.isEmpty else { throw AuthError.invalidField("refresh_token is required") }
        try limit(.refresh, client: client, identifier: nil)
        let nowMicros = clock()
        let reuseInterval = configuration.refreshReuseInterval * 1_000_000
        let child = childToken(of: token)
        let (user, sessionID, issued, amr): (AuthUser, String, String, JSONValue) = try await writeThenCheck { storage in
            let tokens = AuthSchema.refreshTokens
            guard let presented = try storage.first(tokens, where: "token_hash", .text(Secrets.sha256Hex(token))) else {
                return .failure(AuthError(.refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found"))
            }
            guard let sessionID = presented.text("session_id"), let session = try storage.session(id: sessionID),
                  let userID = session.text("user_id") else {
                return .failure(AuthError(.sessionNotFound, "Session not found", status: 400))
            }
            // Revoke only if still live: a concurrent refresh of the same token (another instance, or Postgres'
            // row lock released by its commit) makes this touch no row, and the token counts as rotated.
            let hash = Secrets.sha256Hex(token)
            let live = BoundPredicate.and([try AuthStorage.equals(tokens, "token_hash", .text(hash)), try AuthStorage.equals(tokens, "revoked", .bool(false))])
            let rotated = try storage.tx.update(tokens, set: RowValues(["revoked": .bool(true), "revoked_at": .text(storage.now)]), where: live)
            let issued: String
            if rotated.updated == 1 {
                issued = child
                try storage.insert(tokens, RowValues(["token_hash": .text(Secrets.sha256Hex(issued)), "session_id": .text(sessionID), "parent_hash": .text(hash)]))
            } else {
                // Walk down the family (each child derives from its parent) to its active token.
                var candidate = child, depth = 1
                var active: (token: String, depth: Int)?
                while depth <= 64, let row = try storage.first(tokens, where: "token_hash", .text(Secrets.sha256Hex(candidate))) {
                    if !row.bool("revoked") { active = (candidate, depth); break }
                    candidate = self.childToken(of: candidate)
                    depth += 1
                }
                let revokedAt = try storage.first(tokens, where: "token_hash", .text(hash))?.text("revoked_at").flatMap(Timestamp.parseMicroseconds) ?? 0
                guard let active, active.depth == 1 || nowMicros - revokedAt <= reuseInterval else {
                    try storage.delete(AuthSchema.sessions, where: try AuthStorage.equals(AuthSchema.sessions, "id", .text(sessionID)))
                    return .failure(AuthError(.refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used"))
                }
                issued = active.token
            }
            try storage.update(AuthSchema.sessions, id: sessionID, RowValues(["refreshed_at": .text(storage.now)]))
            guard let user = try storage.user(id: userID) else {
                return .failure(AuthError(.sessionNotFound, "Session not found", status: 400))
            }
            return .success((user, sessionID, issued, session.json("amr")))
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: issued, method: "token_refresh", amr: amr)
    }

    // MARK: Sign in with Apple

    /// `POST /token?grant_type=id_token` with `provider: apple`.
    public func signInWithIDToken(provider: String, idToken: String, nonce: String?, client: AuthClient) async throws -> AuthSession {
        guard provider == "apple" || provider == configuration.apple?.issuer else {
            throw AuthError(.providerDisabled, "Custom OIDC provider \"\(provider.prefix(64))\" not allowed")
        }
        guard let apple else { throw AuthError(.providerDisabled, "Provider (issuer \"https://appleid.apple.com\") is not enabled") }
        try limit(.signIn, client: client, identifier: nil)
        let identity = try await apple.verify(idToken, nonce: nonce)
        let email = try identity.email.map { (e: String) throws(AuthError) in try Contact.normalizeEmail(e) }
        let signupEnabled = configuration.signupEnabled
        let userID: String = try await writeThenCheck { storage in
            let identities = AuthSchema.identities
            let filter = BoundPredicate.and([try AuthStorage.equals(identities, "provider", .text("apple")),
                                             try AuthStorage.equals(identities, "provider_id", .text(identity.subject))])
            let data = JSONValue.object([("sub", .string(identity.subject)), ("email", email.map(JSONValue.string) ?? .null),
                                         ("email_verified", .bool(identity.emailVerified)), ("iss", identity.claims["iss"] ?? .null),
                                         ("provider_id", .string(identity.subject))])
            if let existing = try storage.records(identities, filter, limit: 1).first, let id = existing.text("user_id") {
                try storage.update(identities, id: existing.text("id") ?? "", RowValues(["last_sign_in_at": .text(storage.now), "identity_data": .json(data.jsonText), "updated_at": .text(storage.now)]))
                return .success(id)
            }
            // No automatic linking to an existing user with the same email: with confirmation off, an address on an
            // account proves nothing, and linking would hand the Apple user's data to whoever registered it first.
            guard signupEnabled else { return .failure(AuthError(.signupDisabled, "Signups not allowed for this instance")) }
            let id = UUID().uuidString.lowercased()
            let app = JSONValue.object([("provider", .string("apple")), ("providers", .array([.string("apple")]))])
            var row = RowValues(["id": .text(id), "app_metadata": .json(app.jsonText)])
            if let email, try storage.userID(where: "email", is: email) == nil {
                row.append("email", .text(email))
                if identity.emailVerified { row.append("email_confirmed_at", .text(storage.now)) }
            }
            try storage.insert(SystemModule.users, row)
            try storage.addIdentity(userID: id, provider: "apple", providerID: identity.subject, data: data)
            return .success(id)
        }
        return try await startSession(userID: userID, method: "oauth")
    }

    static func addProvider(_ provider: String, toUser id: String, _ storage: AuthStorage) throws {
        guard let user = try storage.user(id: id) else { return }
        var providers: [JSONValue] = []
        if case .array(let list)? = user.appMetadata["providers"] { providers = list }
        if !providers.contains(.string(provider)) { providers.append(.string(provider)) }
        let app = user.appMetadata.merging(.object([("providers", .array(providers))]))
        try storage.update(SystemModule.users, id: id, RowValues(["app_metadata": .json(app.jsonText), "updated_at": .text(storage.now)]))
    }

    // MARK: One-time codes

    static func storeCode(_ storage: AuthStorage, code: String, userID: String, purpose: OneTimeCodePurpose, recipient: String,
                          nowSeconds: Int64, lifetime: Int64) throws {
        let codes = AuthSchema.codes
        try storage.delete(codes, where: .and([try AuthStorage.equals(codes, "user_id", .text(userID)),
                                               try AuthStorage.equals(codes, "purpose", .text(purpose.rawValue))]))
        try storage.insert(codes, RowValues([
            "user_id": .text(userID), "purpose": .text(purpose.rawValue), "recipient": .text(recipient),
            "code_hash": .text(codeHash(code, userID: userID, purpose: purpose)), "attempts": .integer(0),
            "sent_at": .text(storage.now), "expires_at": .text(Timestamp.format(microseconds: (nowSeconds + lifetime) * 1_000_000)),
        ]))
    }

    static func codeHash(_ code: String, userID: String, purpose: OneTimeCodePurpose) -> String {
        Secrets.sha256Hex("\(userID):\(purpose.rawValue):\(code)")
    }

    func deliver(_ code: String, to contact: Contact, purpose: OneTimeCodePurpose) async throws {
        let minutes = configuration.otpLifetime / 60
        let subject = switch purpose {
        case .email, .sms: "Your sign-in code"
        case .signup: "Confirm your sign-up"
        case .recovery: "Reset your password"
        case .emailChange, .phoneChange: "Confirm your new address"
        }
        let body = "Your code is \(code). It expires in \(minutes) minutes. If you did not ask for it, ignore this message."
        do {
            try await sender.send(OutgoingMessage(channel: contact.channel, recipient: contact.value, subject: subject, body: body))
        } catch {
            logger.error("auth message not sent", metadata: ["error": .string("\(error)")])
            throw AuthError(.unexpectedFailure, "Error sending \(contact.channel == .email ? "confirmation email" : "sms")", internalDetail: "\(error)")
        }
    }

    /// The refusal of a new code for `userID` and `purpose` while the last one is younger than the resend interval.
    static func resendRefusal(_ storage: AuthStorage, userID: String, purpose: OneTimeCodePurpose, channel: MessageChannel,
                              nowSeconds: Int64, interval: Int64) throws -> AuthError? {
        let codes = AuthSchema.codes
        let existing = try storage.records(codes, .and([try AuthStorage.equals(codes, "user_id", .text(userID)),
                                                       try AuthStorage.equals(codes, "purpose", .text(purpose.rawValue))]), limit: 1).first
        guard let sent = existing?.text("sent_at").flatMap(Timestamp.parseMicroseconds) else { return nil }
        let wait = interval - (nowSeconds - sent / 1_000_000)
        guard wait > 0 else { return nil }
        return AuthError(channel == .email ? .overEmailSendRateLimit : .overSMSSendRateLimit,
                         "For security purposes, you can only request this after \(wait) seconds.")
    }

    /// Creates (or replaces) a code for `userID`, refusing a resend within the resend interval; returns the code.
    func issueCode(userID: String, purpose: OneTimeCodePurpose, recipient: String, channel: MessageChannel,
                   before: (@Sendable (AuthStorage) throws -> Void)? = nil) async throws -> String {
        let code = Secrets.sixDigitCode()
        let nowSeconds = self.nowSeconds
        let lifetime = configuration.otpLifetime, interval = configuration.otpResendInterval
        return try await writeThenCheck { storage in
            try before?(storage)
            if let refusal = try Self.resendRefusal(storage, userID: userID, purpose: purpose, channel: channel, nowSeconds: nowSeconds, interval: interval) {
                return .failure(refusal)
            }
            try Self.storeCode(storage, code: code, userID: userID, purpose: purpose, recipient: recipient, nowSeconds: nowSeconds, lifetime: lifetime)
            return .success(code)
        }
    }

    /// `POST /otp`: sends a sign-in code, creating the user first when `createUser` allows it.
    public func sendOTP(email: String?, phone: String?, createUser: Bool, data: JSONValue?, client: AuthClient) async throws {
        guard let contact = try Contact.from(email: email, phone: phone) else {
            throw AuthError.invalidField("An email address or phone number is required")
        }
        try limit(.otp, client: client, identifier: contact.value)
        let metadata = Self.objectOrEmpty(data)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, contact.column, .text(contact.value)), limit: 1)
        var userID = AuthStorage.records(try await store.fetch(plan)).first?.text("id")
        if userID == nil {
            guard createUser, configuration.signupEnabled else { throw AuthError(.otpDisabled, "Signups not allowed for otp") }
            userID = try await write { storage in
                if let id = try storage.userID(where: contact.column, is: contact.value) { return id }
                return try Self.createUser(storage, contact: contact, passwordHash: nil, metadata: metadata, confirmed: false)
            }
        }
        guard let userID else { throw AuthError(.unexpectedFailure, "user vanished") }
        let purpose: OneTimeCodePurpose = contact.channel == .email ? .email : .sms
        let code = try await issueCode(userID: userID, purpose: purpose, recipient: contact.value, channel: contact.channel)
        try await deliver(code, to: contact, purpose: purpose)
    }

    /// `POST /recover`: a recovery code for an existing email; silent for unknown ones (no account enumeration).
    public func recover(email: String, client: AuthClient) async throws {
        let contact = Contact.email(try Contact.normalizeEmail(email))
        try limit(.otp, client: client, identifier: contact.value)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, "email", .text(contact.value)), limit: 1)
        guard let userID = AuthStorage.records(try await store.fetch(plan)).first?.text("id") else { return }
        let code = try await issueCode(userID: userID, purpose: .recovery, recipient: contact.value, channel: .email)
        try await deliver(code, to: contact, purpose: .recovery)
    }

    /// `POST /resend` for `signup` / `sms` confirmations of an existing, unconfirmed user (silent otherwise).
    public func resend(type: String, email: String?, phone: String?, client: AuthClient) async throws {
        guard let contact = try Contact.from(email: email, phone: phone) else {
            throw AuthError.invalidField("An email address or phone number is required")
        }
        guard ["signup", "sms", "email_change", "phone_change"].contains(type) else {
            throw AuthError.invalidField("Missing one of these types: signup, email_change, sms, phone_change")
        }
        try limit(.otp, client: client, identifier: contact.value)
        let userID: String?
        let purpose: OneTimeCodePurpose
        switch type {
        case "email_change", "phone_change":
            // The pending change's code names the new address.
            purpose = type == "email_change" ? .emailChange : .phoneChange
            let codes = AuthSchema.codes
            let plan = try AuthStorage.plan(codes, .and([try AuthStorage.equals(codes, "recipient", .text(contact.value)),
                                                         try AuthStorage.equals(codes, "purpose", .text(purpose.rawValue))]), limit: 1)
            userID = AuthStorage.records(try await store.fetch(plan)).first?.text("user_id")
        default:
            // A sign-up confirmation, for a user whose address is still unconfirmed.
            purpose = .signup
            let users = SystemModule.users
            let plan = try AuthStorage.plan(users, try AuthStorage.equals(users, contact.column, .text(contact.value)), limit: 1)
            let user = AuthStorage.records(try await store.fetch(plan)).first.map(AuthUser.init)
            userID = user.flatMap { $0.confirmedAt(of: contact) == nil ? $0.id : nil }
        }
        guard let userID else { return }
        let code = try await issueCode(userID: userID, purpose: purpose, recipient: contact.value, channel: contact.channel)
        try await deliver(code, to: contact, purpose: purpose)
    }

    /// `POST /verify`: checks a code (at most `otpMaxAttempts` tries, until it expires), applies what it proves
    /// (confirmation, email or phone change) and signs the user in.
    public func verify(email: String?, phone: String?, token: String, type: VerificationType, client: AuthClient) async throws -> AuthSession {
        guard let contact = try Contact.from(email: email, phone: phone) else {
            throw AuthError.invalidField("Only an email address or phone number should be provided on verify")
        }
        try limit(.verify, client: client, identifier: contact.value)
        let purposes = type.purposes
        let nowMicros = clock()
        let maxAttempts = configuration.otpMaxAttempts
        let (userID, purpose): (String, OneTimeCodePurpose) = try await writeThenCheck { storage in
            let codes = AuthSchema.codes
            let filter = BoundPredicate.and([try AuthStorage.equals(codes, "recipient", .text(contact.value)),
                                             .inList(try AuthStorage.column(codes, "purpose"), purposes.map { .text($0.rawValue) })])
            guard let row = try storage.records(codes, filter, order: [OrderTerm(column: "sent_at", direction: .descending)], limit: 1).first,
                  let id = row.text("id"), let userID = row.text("user_id"),
                  let purpose = row.text("purpose").flatMap(OneTimeCodePurpose.init(rawValue:)) else {
                return .failure(AuthError.codeInvalid)
            }
            // An exhausted code stays until it expires, so that no new one can be asked for at once.
            let expired = (row.text("expires_at").flatMap(Timestamp.parseMicroseconds) ?? 0) <= nowMicros
            if expired || row.integer("attempts") >= Int64(maxAttempts) {
                if expired { try storage.delete(codes, where: try AuthStorage.equals(codes, "id", .text(id))) }
                return .failure(AuthError.codeInvalid)
            }
            let expected = row.text("code_hash") ?? ""
            guard Secrets.constantTimeEquals(Self.codeHash(token.trimmingSpaces, userID: userID, purpose: purpose), expected) else {
                try storage.update(codes, id: id, RowValues(["attempts": .integer(row.integer("attempts") + 1)]))
                return .failure(AuthError.codeInvalid)
            }
            try storage.delete(codes, where: try AuthStorage.equals(codes, "id", .text(id)))
            try Self.apply(purpose, contact: contact, userID: userID, storage)
            return .success((userID, purpose))
        }
        let method = switch purpose {
        case .recovery: "recovery"
        case .emailChange: "email_change"
        case .phoneChange: "phone_change"
        case .email, .sms: "otp"
        case .signup: "email/signup"
        }
        return try await startSession(userID: userID, method: method)
    }

    /// What a verified code proves. A code proves the address; a password set on the account before anyone proved
    /// it (a stranger may have signed the address up) is cleared — except by the sign-up confirmation, whose code
    /// went out with that very password's sign-up.
    static func apply(_ purpose: OneTimeCodePurpose, contact: Contact, userID: String, _ storage: AuthStorage) throws {
        guard let user = try storage.user(id: userID) else { return }
        switch purpose {
        case .emailChange, .phoneChange:
            try setContact(contact, of: user, storage)
        case .signup, .email, .sms, .recovery:
            guard user.confirmedAt(of: contact) == nil else { return }
            var row = RowValues([contact.confirmedColumn: .text(storage.now), "updated_at": .text(storage.now)])
            if purpose != .signup, user.encryptedPassword != nil { row.append("encrypted_password", .null) }
            try storage.update(SystemModule.users, id: userID, row)
        }
    }

    /// Sets a confirmed email or phone; an anonymous user becomes a permanent one.
    static func setContact(_ contact: Contact, of user: AuthUser, _ storage: AuthStorage) throws {
        if let owner = try storage.userID(where: contact.column, is: contact.value), owner != user.id {
            throw AuthError(.userAlreadyExists, "A user with this \(contact.channel == .email ? "email address" : "phone number") has already been registered")
        }
        var row = RowValues([contact.column: .text(contact.value), contact.confirmedColumn: .text(storage.now), "updated_at": .text(storage.now)])
        if user.isAnonymous { row.append("is_anonymous", .bool(false)) }
        try storage.update(SystemModule.users, id: user.id, row)
        let data = identityData(id: user.id, contact: contact, confirmed: true)
        if let identity = user.identities.first(where: { $0.provider == contact.provider }) {
            try storage.update(AuthSchema.identities, id: identity.id, RowValues(["identity_data": .json(data.jsonText), "updated_at": .text(storage.now)]))
        } else {
            try storage.addIdentity(userID: user.id, provider: contact.provider, providerID: user.id, data: data)
            try addProvider(contact.provider, toUser: user.id, storage)
        }
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

    /// `GET /user`.
    public func currentUser(_ identity: Identity) async throws -> AuthUser {
        let (userID, _) = try await signedIn(identity)
        return try await user(id: userID)
    }

    /// The user with `id` and their identities (two reads, no write lock).
    func user(id: String) async throws -> AuthUser {
        let plans = try AuthStorage.userPlans(id: id)
        guard let user = AuthStorage.user(try await store.fetch(plans.user), identities: try await store.fetch(plans.identities)) else {
            throw AuthError(.userNotFound, "User not found")
        }
        return user
    }

    /// `PUT /user`: metadata merges; a new password is hashed; a new email or phone is confirmed by a code when
    /// confirmation is on, else set at once.
    public func updateUser(_ identity: Identity, changes: UserChanges) async throws -> AuthUser {
        let (userID, _) = try await signedIn(identity)
        var restricted = changes
        restricted.appMetadata = nil
        restricted.confirmEmail = false
        restricted.confirmPhone = false
        return try await apply(restricted, toUser: userID, confirmationsApply: true)
    }

    func apply(_ changes: UserChanges, toUser userID: String, confirmationsApply: Bool) async throws -> AuthUser {
        let email = try changes.email.map { (e: String) throws(AuthError) in try Contact.normalizeEmail(e) }
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
            guard let user = try storage.user(id: userID) else { throw AuthError(.userNotFound, "User not found") }
            var row = RowValues(["updated_at": .text(storage.now)])
            if let passwordHash { row.append("encrypted_password", .text(passwordHash)) }
            if let metadata = changes.userMetadata { row.append("user_metadata", .json(user.userMetadata.merging(metadata).jsonText)) }
            if let metadata = changes.appMetadata { row.append("app_metadata", .json(user.appMetadata.merging(metadata).jsonText)) }
            try storage.update(SystemModule.users, id: userID, row)
            for (contact, current, needsCode) in [(email.map(Contact.email), user.email, confirmEmail), (phone.map(Contact.phone), user.phone, confirmPhone)] {
                guard let contact, contact.value != current else { continue }
                if needsCode {
                    if let owner = try storage.userID(where: contact.column, is: contact.value), owner != userID {
                        throw AuthError(.userAlreadyExists, "A user with this \(contact.channel == .email ? "email address" : "phone number") has already been registered")
                    }
                } else {
                    guard let fresh = try storage.user(id: userID) else { continue }
                    try Self.setContact(contact, of: fresh, storage)
                }
            }
            if changes.confirmEmail, user.emailConfirmedAt == nil, email == nil, user.email != nil {
                try storage.update(SystemModule.users, id: userID, RowValues(["email_confirmed_at": .text(storage.now)]))
            }
            if changes.confirmPhone, user.phoneConfirmedAt == nil, phone == nil, user.phone != nil {
                try storage.update(SystemModule.users, id: userID, RowValues(["phone_confirmed_at": .text(storage.now)]))
            }
            guard let updated = try storage.user(id: userID) else { throw AuthError(.userNotFound, "User not found") }
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

    /// `POST /logout`: ends this session (local), every session of the user (global) or all but this one (others).
    public func logout(_ identity: Identity, scope: LogoutScope) async throws {
        let (userID, sessionID) = try await signedIn(identity)
        let sessions = AuthSchema.sessions
        let mine = try AuthStorage.equals(sessions, "user_id", .text(userID))
        let this = try AuthStorage.equals(sessions, "id", .text(sessionID))
        let filter: BoundPredicate = switch scope {
        case .local: this
        case .global: mine
        case .others: .and([mine, .not(this)])
        }
        try await write { storage in try storage.delete(sessions, where: filter) }
    }
}
