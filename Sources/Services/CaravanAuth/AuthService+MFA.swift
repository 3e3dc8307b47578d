package import CaravanCore
import Foundation

/// A TOTP factor just enrolled: what the user's authenticator app needs (shown once).
package struct MFAEnrollment: Sendable {
    package let id: String
    package let friendlyName: String
    package let secret: String
    package let uri: String
    /// The QR code of `uri` as an SVG document (GoTrue's `totp.qr_code`; clients prefix `data:image/svg+xml;utf-8,`).
    package let qrCode: String

    package var json: JSONValue {
        .object([
            ("id", .string(id)), ("type", .string("totp")), ("friendly_name", .string(friendlyName)),
            ("totp", .object([("qr_code", .string(qrCode)), ("secret", .string(secret)), ("uri", .string(uri))])),
        ])
    }
}

/// A challenge of a factor, to be answered by `verifyFactor` before `expiresAt` (unix seconds).
package struct MFAChallenge: Sendable {
    package let id: String
    package let expiresAt: Int64

    package var json: JSONValue { .object([("id", .string(id)), ("type", .string("totp")), ("expires_at", .integer(expiresAt))]) }
}

/// Multi-factor authentication with TOTP factors, as GoTrue's `/factors` endpoints: enroll, challenge, verify (which
/// raises the session to `aal2`), unenroll.
extension AuthService {
    /// GoTrue's limits: at most this many factors (verified or not) per user, and this many verified.
    static let maxEnrolledFactors = 10
    static let maxVerifiedFactors = 10
    /// Seconds a challenge may be answered in (GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION`).
    static let challengeLifetime: Int64 = 300

    /// The signed-in user and session, with the session's assurance level as stored (not as the token claims).
    func signedInSession(_ identity: Identity) async throws -> (userID: String, sessionID: String, aal: String) {
        let (userID, sessionID) = try await signedIn(identity)
        let plan = try AuthStorage.plan(AuthSchema.sessions, try AuthStorage.equals(AuthSchema.sessions, "id", .text(sessionID)), limit: 1)
        guard let session = AuthStorage.records(try await store.fetch(plan)).first else {
            throw AuthError(.sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        return (userID, sessionID, try session.requireText("aal"))
    }

    static func factors(of userID: String, _ storage: AuthStorage) async throws -> [MFAFactor] {
        let factors = AuthSchema.mfaFactors
        return try await storage.records(factors, try AuthStorage.equals(factors, "user_id", .text(userID)), order: [OrderTerm(column: "created_at")])
            .map(MFAFactor.init)
    }

    package static let factorNotFound = AuthError(.mfaFactorNotFound, "Factor not found")

    /// The factor `id` of `userID` (another user's factor is not found).
    static func factor(_ id: String, of userID: String, _ storage: AuthStorage) async throws -> MFAFactor {
        guard UUIDText.isValid(id), let record = try await storage.first(AuthSchema.mfaFactors, where: "id", .text(id)),
              let factor = try? MFAFactor(record), factor.userID == userID else { throw factorNotFound }
        return factor
    }

    /// The host of the deployment's public URL: the default issuer shown in authenticator apps.
    var defaultTOTPIssuer: String {
        URLComponents(string: issuer)?.host ?? "caravan"
    }

    /// `POST /factors` with `factor_type: totp`: a new unverified factor, its secret and QR code.
    package func enrollFactor(_ identity: Identity, factorType: String, friendlyName: String?, issuer requestedIssuer: String?) async throws -> MFAEnrollment {
        guard factorType == "totp" else { throw AuthError.invalidField("factor_type needs to be totp") }
        let (userID, _, aal) = try await signedInSession(identity)
        let name = friendlyName ?? ""
        let secret = Base32.encode(TOTP.randomSecret())
        let issuerName = requestedIssuer.flatMap { $0.isEmpty ? nil : $0 } ?? defaultTOTPIssuer
        let factorID = ids.next()
        let account = try await write { storage -> String in
            try await storage.tx.serialize(on: "auth.user:\(userID)")
            guard let user = try await storage.user(id: userID) else { throw AuthError(.userNotFound, "User not found") }
            let existing = user.factors
            if !name.isEmpty, existing.contains(where: { $0.friendlyName == name }) {
                throw AuthError(.mfaFactorNameConflict, "A factor with the friendly name \"\(name)\" for this user already exists")
            }
            let verified = existing.filter(\.isVerified).count
            guard existing.count < Self.maxEnrolledFactors, verified < Self.maxVerifiedFactors else {
                throw AuthError(.tooManyEnrolledMFAFactors, "Maximum number of verified factors reached, unenroll to continue")
            }
            guard verified == 0 || aal == "aal2" else { throw AuthError(.insufficientAAL, "AAL2 required to enroll a new factor") }
            try await storage.insert(AuthSchema.mfaFactors, RowValues([
                "id": .text(factorID), "user_id": .text(userID), "friendly_name": .text(name), "factor_type": .text("totp"),
                "status": .text("unverified"), "secret": .text(secret),
            ]))
            return user.email ?? user.phone ?? ""
        }
        guard let totp = TOTP(base32Secret: secret) else { throw AuthError(.unexpectedFailure, "Error generating QR Code") }
        let uri = totp.uri(issuer: issuerName, account: account)
        guard let code = QRCode(text: uri) else {
            throw AuthError.invalidField("The issuer and account name are too long for a QR code")
        }
        return MFAEnrollment(id: factorID, friendlyName: name, secret: secret, uri: uri, qrCode: code.svg())
    }

    /// `POST /factors/{id}/challenge`: a challenge to be answered from the same address within five minutes.
    package func challengeFactor(_ identity: Identity, factorID: String, client: AuthClient) async throws -> MFAChallenge {
        let (userID, _, _) = try await signedInSession(identity)
        let challengeID = ids.next()
        let nowSeconds = self.nowSeconds
        try await write { storage -> Void in
            _ = try await Self.factor(factorID, of: userID, storage)
            try await storage.insert(AuthSchema.mfaChallenges, RowValues([
                "id": .text(challengeID), "factor_id": .text(factorID), "ip": .text(client.ip), "created_at": .text(storage.now),
            ]))
        }
        return MFAChallenge(id: challengeID, expiresAt: nowSeconds + Self.challengeLifetime)
    }

    /// `POST /factors/{id}/verify`: checks the code of the current time step (±1) against the factor, never accepting
    /// a step at or before the last one accepted; on success the factor is verified, the session becomes `aal2` with
    /// `totp` in its methods, the user's other `aal1` sessions and unverified factors are removed, and a new access
    /// and refresh token are issued for the session.
    package func verifyFactor(_ identity: Identity, factorID: String, challengeID: String, code: String, client: AuthClient) async throws -> AuthSession {
        guard !code.isEmpty else { throw AuthError.invalidField("Code needs to be non-empty") }
        let (userID, sessionID, _) = try await signedInSession(identity)
        try limit(.verify, client: client, identifier: "factor:\(factorID)")
        let nowMicros = clock.microseconds, nowSeconds = self.nowSeconds
        let refreshToken = Secrets.randomToken()
        let lifetime = Self.challengeLifetime
        let (user, amr) = try await writeThenCheck { storage -> Result<(AuthUser, JSONValue), AuthError> in
            // Answers for one factor run one after the other: a time step is accepted once.
            try await storage.tx.serialize(on: "auth.factor:\(factorID)")
            let factor = try await Self.factor(factorID, of: userID, storage)
            let challenges = AuthSchema.mfaChallenges
            guard UUIDText.isValid(challengeID), let challenge = try await storage.first(challenges, where: "id", .text(challengeID)),
                  challenge.text("factor_id") == factorID else {
                return .failure(AuthError(.mfaFactorNotFound, "MFA factor with the provided challenge ID not found"))
            }
            guard challenge.text("verified_at") == nil, challenge.text("ip") == client.ip else {
                return .failure(AuthError(.mfaIPAddressMismatch, "Challenge and verify IP addresses mismatch."))
            }
            guard let created = Timestamp.parseMicroseconds(try challenge.requireText("created_at")) else {
                throw Record.corrupt("created_at", "is not a timestamp")
            }
            if created + lifetime * 1_000_000 <= nowMicros {
                try await storage.delete(challenges, where: try AuthStorage.equals(challenges, "id", .text(challengeID)))
                return .failure(AuthError(.mfaChallengeExpired,
                                          "MFA challenge \(challengeID) has expired, verify against another challenge or create a new challenge."))
            }
            guard let totp = TOTP(base32Secret: factor.secret) else { throw Record.corrupt("secret", "is not base32") }
            let date = Date(timeIntervalSince1970: Double(nowMicros) / 1_000_000)
            guard let step = totp.matchingStep(code.trimmingSpaces, at: date), step > (factor.lastUsedStep ?? Int64.min) else {
                return .failure(AuthError(.mfaVerificationFailed, "Invalid TOTP code entered"))
            }
            try await storage.update(challenges, id: challengeID, RowValues(["verified_at": .text(storage.now)]))
            try await storage.update(AuthSchema.mfaFactors, id: factorID, RowValues([
                "status": .text("verified"), "last_used_step": .integer(step), "updated_at": .text(storage.now),
            ]))
            let factors = AuthSchema.mfaFactors
            try await storage.delete(factors, where: .and([try AuthStorage.equals(factors, "user_id", .text(userID)),
                                                          try AuthStorage.equals(factors, "status", .text("unverified"))]))
            let sessions = AuthSchema.sessions
            guard let session = try await storage.session(id: sessionID) else {
                return .failure(AuthError(.sessionNotFound, "Session from session_id claim in JWT does not exist"))
            }
            // Newest first, one entry per method (GoTrue's amr claims).
            var methods: [JSONValue] = [.object([("method", .string("totp")), ("timestamp", .integer(nowSeconds))])]
            if case .array(let earlier) = try session.json("amr") {
                methods += earlier.filter { $0["method"] != .string("totp") }
            }
            let amr = JSONValue.array(methods)
            try await storage.update(sessions, id: sessionID, RowValues(["aal": .text("aal2"), "amr": .json(amr.jsonText), "refreshed_at": .text(storage.now)]))
            try await storage.delete(sessions, where: .and([try AuthStorage.equals(sessions, "user_id", .text(userID)),
                                                           try AuthStorage.equals(sessions, "aal", .text("aal1"))]))
            try await storage.insert(AuthSchema.refreshTokens, RowValues([
                "token_hash": .text(Secrets.sha256Hex(refreshToken)), "session_id": .text(sessionID),
            ]))
            guard let user = try await storage.user(id: userID) else { return .failure(AuthError(.userNotFound, "User not found")) }
            return .success((user, amr))
        }
        return try await makeSession(user: user, sessionID: sessionID, refreshToken: refreshToken, method: "totp", amr: amr, aal: "aal2")
    }

    /// `DELETE /factors/{id}`: removes a factor; a verified one only from an `aal2` session. When no verified factor
    /// is left, the user's sessions drop to `aal1`.
    package func unenrollFactor(_ identity: Identity, factorID: String) async throws -> String {
        let (userID, _, aal) = try await signedInSession(identity)
        try await write { storage -> Void in
            try await storage.tx.serialize(on: "auth.user:\(userID)")
            let factor = try await Self.factor(factorID, of: userID, storage)
            if factor.isVerified, aal != "aal2" { throw AuthError(.insufficientAAL, "AAL2 required to unenroll verified factor") }
            let factors = AuthSchema.mfaFactors
            try await storage.delete(factors, where: try AuthStorage.equals(factors, "id", .text(factorID)))
            if try await Self.factors(of: userID, storage).allSatisfy({ !$0.isVerified }) {
                let sessions = AuthSchema.sessions
                _ = try await storage.tx.update(sessions, set: RowValues(["aal": .text("aal1")]),
                                                where: try AuthStorage.equals(sessions, "user_id", .text(userID)))
            }
        }
        return factorID
    }
}

/// The canonical text of a UUID (`8-4-4-4-12` hex digits), which ids in paths must be before they reach a query.
enum UUIDText {
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) else { return false }
            }
        }
        return true
    }
}
