package import CaravanCore
import Foundation
import Logging

/// Reauthentication: `GET /reauthenticate` sends a one-time nonce to the signed-in user's email (else phone), and a
/// password change through `PUT /user` must carry it when `auth_secure_password_change` is on and the session is
/// older than a day (GoTrue's `GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`).
extension AuthService {
    /// A session younger than this changes the password without a nonce, as GoTrue's.
    static let recentSessionSeconds: Int64 = 24 * 3600

    /// `GET /reauthenticate`.
    package func reauthenticate(_ identity: Identity) async throws {
        let (userID, _) = try await signedIn(identity)
        let user = try await self.user(id: userID)
        let contact: Contact
        if let email = user.email, !email.isEmpty {
            contact = .email(email)
        } else if let phone = user.phone, !phone.isEmpty {
            contact = .phone(phone)
        } else {
            throw AuthError.invalidField("Reauthentication requires the user to have an email or a phone number")
        }
        let code = Secrets.sixDigitCode()
        let nowSeconds = self.nowSeconds
        let lifetime = configuration.otpLifetime, interval = configuration.otpResendInterval
        let table = AuthSchema.reauthentications
        try await writeThenCheck { storage -> Result<Void, AuthError> in
            try await storage.tx.serialize(on: "auth.reauthentication:\(userID)")
            if let sent = try await storage.first(table, where: "user_id", .text(userID))?.text("sent_at").flatMap(Timestamp.parseMicroseconds) {
                let wait = interval - (nowSeconds - sent / 1_000_000)
                if wait > 0 {
                    return .failure(AuthError(contact.channel == .email ? .overEmailSendRateLimit : .overSMSSendRateLimit,
                                              "For security purposes, you can only request this after \(wait) seconds.", retryAfter: wait))
                }
            }
            try await storage.delete(table, where: try AuthStorage.equals(table, "user_id", .text(userID)))
            try await storage.insert(table, RowValues([
                "user_id": .text(userID), "code_hash": .text(Self.nonceHash(code, userID: userID)), "attempts": .integer(0),
                "sent_at": .text(storage.now), "expires_at": .text(Timestamp.format(microseconds: (nowSeconds + lifetime) * 1_000_000)),
            ]))
            return .success(())
        }
        let minutes = configuration.otpLifetime / 60
        do {
            try await sender.send(OutgoingMessage(channel: contact.channel, recipient: contact.value, subject: "Confirm reauthentication",
                                                  body: "Your code is \(code). It expires in \(minutes) minutes. If you did not ask for it, ignore this message."))
        } catch {
            logger.error("auth message not sent", metadata: ["error": .string("\(error)")])
            throw AuthError(.unexpectedFailure, "Error sending \(contact.channel == .email ? "reauthentication email" : "sms")", internalDetail: "\(error)")
        }
    }

    static func nonceHash(_ nonce: String, userID: String) -> String {
        Secrets.sha256Hex("\(userID):reauthentication:\(nonce)")
    }

    /// Before a password change of `sessionID`'s user: with `auth_secure_password_change` on and a session older than
    /// a day, `nonce` must be the pending reauthentication nonce (used up here; at most `otpMaxAttempts` tries).
    func checkReauthentication(userID: String, sessionID: String, nonce: String?) async throws {
        guard configuration.securePasswordChange else { return }
        let nowMicros = clock.microseconds
        let plan = try AuthStorage.plan(AuthSchema.sessions, try AuthStorage.equals(AuthSchema.sessions, "id", .text(sessionID)), limit: 1)
        guard let session = AuthStorage.records(try await store.fetch(plan)).first,
              let created = Timestamp.parseMicroseconds(try session.requireText("created_at")) else {
            throw AuthError(.sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        guard nowMicros - created > Self.recentSessionSeconds * 1_000_000 else { return }
        guard let nonce, !nonce.isEmpty else { throw AuthError(.reauthenticationNeeded, "Password update requires reauthentication") }
        let maxAttempts = configuration.otpMaxAttempts
        let table = AuthSchema.reauthentications
        try await writeThenCheck { storage -> Result<Void, AuthError> in
            try await storage.tx.serialize(on: "auth.reauthentication:\(userID)")
            guard let row = try await storage.first(table, where: "user_id", .text(userID)) else {
                return .failure(AuthError(.reauthenticationNotValid, "Requires reauthentication"))
            }
            guard let expiresAt = Timestamp.parseMicroseconds(try row.requireText("expires_at")) else {
                throw Record.corrupt("expires_at", "is not a timestamp")
            }
            let attempts = try row.requireInteger("attempts")
            if expiresAt <= nowMicros || attempts >= Int64(maxAttempts) {
                return .failure(AuthError(.reauthenticationNotValid, "Requires reauthentication"))
            }
            guard Secrets.constantTimeEquals(Self.nonceHash(nonce.trimmingSpaces, userID: userID), try row.requireText("code_hash")) else {
                try await storage.update(table, id: userID, key: "user_id", RowValues(["attempts": .integer(attempts + 1)]))
                return .failure(AuthError.codeInvalid)
            }
            try await storage.delete(table, where: try AuthStorage.equals(table, "user_id", .text(userID)))
            return .success(())
        }
    }
}
