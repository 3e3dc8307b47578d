package import CaravanCore
import Foundation
import Logging

/// One-time codes: issuing, delivering, resending and verifying them, and what a verified code proves.
extension AuthService {

    static func storeCode(_ storage: AuthStorage, code: String, userID: String, purpose: OneTimeCodePurpose, recipient: String,
                          nowSeconds: Int64, lifetime: Int64) async throws {
        let codes = AuthSchema.codes
        try await storage.delete(codes, where: .and([try AuthStorage.equals(codes, "user_id", .text(userID)),
                                               try AuthStorage.equals(codes, "purpose", .text(purpose.rawValue))]))
        try await storage.insert(codes, RowValues([
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
                              nowSeconds: Int64, interval: Int64) async throws -> AuthError? {
        let codes = AuthSchema.codes
        let existing = try await storage.records(codes, .and([try AuthStorage.equals(codes, "user_id", .text(userID)),
                                                       try AuthStorage.equals(codes, "purpose", .text(purpose.rawValue))]), limit: 1).first
        guard let sent = existing?.text("sent_at").flatMap(Timestamp.parseMicroseconds) else { return nil }
        let wait = interval - (nowSeconds - sent / 1_000_000)
        guard wait > 0 else { return nil }
        return AuthError(channel == .email ? .overEmailSendRateLimit : .overSMSSendRateLimit,
                         "For security purposes, you can only request this after \(wait) seconds.", retryAfter: wait)
    }

    /// Creates (or replaces) a code for `userID`, refusing a resend within the resend interval; returns the code.
    func issueCode(userID: String, purpose: OneTimeCodePurpose, recipient: String, channel: MessageChannel,
                   before: (@Sendable (AuthStorage) async throws -> Void)? = nil) async throws -> String {
        let code = Secrets.sixDigitCode()
        let nowSeconds = self.nowSeconds
        let lifetime = configuration.otpLifetime, interval = configuration.otpResendInterval
        return try await writeThenCheck { storage in
            try await before?(storage)
            // Requests for one recipient's code run one after the other: a resend within the interval is refused.
            try await storage.tx.serialize(on: "auth.code:\(recipient)")
            if let refusal = try await Self.resendRefusal(storage, userID: userID, purpose: purpose, channel: channel, nowSeconds: nowSeconds, interval: interval) {
                return .failure(refusal)
            }
            try await Self.storeCode(storage, code: code, userID: userID, purpose: purpose, recipient: recipient, nowSeconds: nowSeconds, lifetime: lifetime)
            return .success(code)
        }
    }

    /// Issues and delivers a code for an address a caller asked about (`/otp`, `/recover`, `/resend`). With sign-ups
    /// off, where an unknown address is answered at once as if a code were sent, a known one is answered the same way:
    /// the code is issued and sent after the answer (`deliveries`), so neither the time a delivery takes nor its
    /// failure, nor a refusal within the resend interval, tells whether an address has an account.
    func sendCode(userID: String, purpose: OneTimeCodePurpose, to contact: Contact) async throws {
        guard configuration.signupEnabled else {
            deliveries.submit { [self] in
                do {
                    try await issueAndDeliver(userID: userID, purpose: purpose, to: contact)
                } catch let error as AuthError where error.code == .overEmailSendRateLimit || error.code == .overSMSSendRateLimit {
                    logger.debug("auth code not sent again within the resend interval")
                }
            }
            return
        }
        try await issueAndDeliver(userID: userID, purpose: purpose, to: contact)
    }

    private func issueAndDeliver(userID: String, purpose: OneTimeCodePurpose, to contact: Contact) async throws {
        let code = try await issueCode(userID: userID, purpose: purpose, recipient: contact.value, channel: contact.channel)
        try await deliver(code, to: contact, purpose: purpose)
    }

    /// `POST /otp`: sends a sign-in code, creating the user first when `createUser` allows it. With sign-ups off, an
    /// unknown address is answered as a known one is (nothing is sent), so the endpoint reveals no accounts.
    package func sendOTP(email: String?, phone: String?, createUser: Bool, data: JSONValue?, client: AuthClient) async throws {
        guard let contact = try self.contact(email: email, phone: phone) else {
            throw AuthError.invalidField("An email address or phone number is required")
        }
        try limit(.otp, client: client, identifier: contact.value)
        let metadata = Self.objectOrEmpty(data)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, contact.column, .text(contact.value)), limit: 1)
        var userID = AuthStorage.records(try await store.fetch(plan)).first?.text("id")
        if userID == nil {
            guard configuration.signupEnabled else { return }
            guard createUser else { throw AuthError(.otpDisabled, "Signups not allowed for otp") }
            let newUserID = ids.next()
            userID = try await write { storage in
                try await storage.tx.serialize(on: "auth.contact:\(contact.value)")
                if let id = try await storage.userID(where: contact.column, is: contact.value) { return id }
                return try await Self.createUser(storage, id: newUserID, contact: contact, passwordHash: nil, metadata: metadata, confirmed: false)
            }
        }
        guard let userID else { throw AuthError(.unexpectedFailure, "user vanished") }
        let purpose: OneTimeCodePurpose = contact.channel == .email ? .email : .sms
        try await sendCode(userID: userID, purpose: purpose, to: contact)
    }

    /// `POST /recover`: a recovery code for an existing email; silent for unknown ones (no account enumeration).
    package func recover(email: String, client: AuthClient) async throws {
        let contact = Contact.email(try self.normalizedEmail(email))
        try limit(.otp, client: client, identifier: contact.value)
        let plan = try AuthStorage.plan(SystemModule.users, try AuthStorage.equals(SystemModule.users, "email", .text(contact.value)), limit: 1)
        guard let userID = AuthStorage.records(try await store.fetch(plan)).first?.text("id") else { return }
        try await sendCode(userID: userID, purpose: .recovery, to: contact)
    }

    /// `POST /resend` for `signup` / `sms` confirmations of an existing, unconfirmed user (silent otherwise).
    package func resend(type: String, email: String?, phone: String?, client: AuthClient) async throws {
        guard let contact = try self.contact(email: email, phone: phone) else {
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
            let user = try AuthStorage.records(try await store.fetch(plan)).first.map(AuthUser.init)
            userID = user.flatMap { $0.confirmedAt(of: contact) == nil ? $0.id : nil }
        }
        guard let userID else { return }
        try await sendCode(userID: userID, purpose: purpose, to: contact)
    }

    /// `POST /verify`: checks a code (at most `otpMaxAttempts` tries, until it expires), applies what it proves
    /// (confirmation, email or phone change) and signs the user in.
    package func verify(email: String?, phone: String?, token: String, type: VerificationType, client: AuthClient) async throws -> AuthSession {
        guard let contact = try self.contact(email: email, phone: phone) else {
            throw AuthError.invalidField("Only an email address or phone number should be provided on verify")
        }
        try limit(.verify, client: client, identifier: contact.value)
        let purposes = type.purposes
        let nowMicros = clock.microseconds
        let maxAttempts = configuration.otpMaxAttempts
        let (userID, purpose): (String, OneTimeCodePurpose) = try await writeThenCheck { storage in
            // Guesses at one recipient's code run one after the other: each counts, and a code is used once.
            try await storage.tx.serialize(on: "auth.code:\(contact.value)")
            let codes = AuthSchema.codes
            let filter = BoundPredicate.and([try AuthStorage.equals(codes, "recipient", .text(contact.value)),
                                             .inList(try AuthStorage.column(codes, "purpose"), purposes.map { .text($0.rawValue) })])
            guard let row = try await storage.records(codes, filter, order: [OrderTerm(column: "sent_at", direction: .descending)], limit: 1).first,
                  let id = row.text("id"), let userID = row.text("user_id"),
                  let purpose = row.text("purpose").flatMap(OneTimeCodePurpose.init(rawValue:)) else {
                return .failure(AuthError.codeInvalid)
            }
            // An exhausted code stays until it expires, so that no new one can be asked for at once.
            guard let expiresAt = Timestamp.parseMicroseconds(try row.requireText("expires_at")) else {
                throw Record.corrupt("expires_at", "is not a timestamp")
            }
            let expired = expiresAt <= nowMicros, attempts = try row.requireInteger("attempts")
            if expired || attempts >= Int64(maxAttempts) {
                if expired { try await storage.delete(codes, where: try AuthStorage.equals(codes, "id", .text(id))) }
                return .failure(AuthError.codeInvalid)
            }
            let expected = try row.requireText("code_hash")
            guard Secrets.constantTimeEquals(Self.codeHash(token.trimmingSpaces, userID: userID, purpose: purpose), expected) else {
                try await storage.update(codes, id: id, RowValues(["attempts": .integer(attempts + 1)]))
                return .failure(AuthError.codeInvalid)
            }
            try await storage.delete(codes, where: try AuthStorage.equals(codes, "id", .text(id)))
            try await Self.apply(purpose, contact: contact, userID: userID, storage)
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
    static func apply(_ purpose: OneTimeCodePurpose, contact: Contact, userID: String, _ storage: AuthStorage) async throws {
        guard let user = try await storage.user(id: userID) else { return }
        switch purpose {
        case .emailChange, .phoneChange:
            try await setContact(contact, of: user, storage)
        case .signup, .email, .sms, .recovery:
            guard user.confirmedAt(of: contact) == nil else { return }
            var row = RowValues([contact.confirmedColumn: .text(storage.now), "updated_at": .text(storage.now)])
            if purpose != .signup, user.encryptedPassword != nil { row.append("encrypted_password", .null) }
            try await storage.update(SystemModule.users, id: userID, row)
        }
    }

    /// Sets a confirmed email or phone; an anonymous user becomes a permanent one.
    static func setContact(_ contact: Contact, of user: AuthUser, _ storage: AuthStorage) async throws {
        if let owner = try await storage.userID(where: contact.column, is: contact.value), owner != user.id {
            throw AuthError(.userAlreadyExists, "A user with this \(contact.channel == .email ? "email address" : "phone number") has already been registered")
        }
        var row = RowValues([contact.column: .text(contact.value), contact.confirmedColumn: .text(storage.now), "updated_at": .text(storage.now)])
        if user.isAnonymous { row.append("is_anonymous", .bool(false)) }
        try await storage.update(SystemModule.users, id: user.id, row)
        let data = identityData(id: user.id, contact: contact, confirmed: true)
        if let identity = user.identities.first(where: { $0.provider == contact.provider }) {
            try await storage.update(AuthSchema.identities, id: identity.id, RowValues(["identity_data": .json(data.jsonText), "updated_at": .text(storage.now)]))
        } else {
            try await storage.addIdentity(userID: user.id, provider: contact.provider, providerID: user.id, data: data)
            try await addProvider(contact.provider, toUser: user.id, storage)
        }
    }

}
