@testable import CaravanAuth
import CaravanCore
import CaravanSQL
import CaravanTesting
import Foundation
import Testing

/// TOTP factors end to end on the service (both engines): enrollment, challenge, verification raising the session to
/// aal2, the ±1 step window, codes used once, expiry, unenrollment rules, and `aal` as a policy claim.
@Suite("MFA")
struct MFATests {
    static let password = "long-enough-1"

    /// A signed-up user's password session.
    static func signUp(_ fixture: AuthFixture, _ email: String) async throws -> AuthSession {
        guard case .session(let session) = try await fixture.auth.signUp(email: email, phone: nil, password: password, data: nil, client: fixture.client) else {
            throw AuthError(.unexpectedFailure, "no session")
        }
        return session
    }

    /// The `amr` methods of a token, newest first.
    static func methods(_ identity: Identity) -> [String] {
        guard case .array(let entries)? = identity.claims["amr"] else { return [] }
        return entries.compactMap { if case .string(let method)? = $0["method"] { method } else { nil } }
    }

    /// The code of `secret` at the fixture's clock, `offset` steps away.
    static func code(_ secret: String, _ fixture: AuthFixture, offset: Int64 = 0) throws -> String {
        let totp = try #require(TOTP(base32Secret: secret))
        return totp.code(step: totp.step(at: Date(timeIntervalSince1970: Double(fixture.clock.now) / 1_000_000)) + offset)
    }

    /// Enrolls and verifies a factor; returns it and the aal2 session.
    static func enrolled(_ fixture: AuthFixture, _ session: AuthSession) async throws -> (MFAEnrollment, AuthSession) {
        let identity = try await fixture.identity(session)
        let enrollment = try await fixture.auth.enrollFactor(identity, factorType: "totp", friendlyName: "phone", issuer: nil)
        let challenge = try await fixture.auth.challengeFactor(identity, factorID: enrollment.id, client: fixture.client)
        let verified = try await fixture.auth.verifyFactor(identity, factorID: enrollment.id, challengeID: challenge.id,
                                                           code: try code(enrollment.secret, fixture), client: fixture.client)
        return (enrollment, verified)
    }

    @Test(arguments: Engine.allCases) func verifyingACodeRaisesTheSessionToAAL2(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let session = try await Self.signUp(fixture, "mfa@example.com")
        let first = try await fixture.identity(session)
        #expect(first.claimText(["aal"]) == "aal1")
        #expect(Self.methods(first) == ["password"])

        let enrollment = try await fixture.auth.enrollFactor(first, factorType: "totp", friendlyName: "phone", issuer: "Caravan")
        #expect(enrollment.uri == "otpauth://totp/Caravan:mfa@example.com?algorithm=SHA1&digits=6&issuer=Caravan&period=30&secret=\(enrollment.secret)")
        #expect(enrollment.secret.count == 32)
        #expect(enrollment.qrCode.hasPrefix("<svg "))
        #expect(try await fixture.auth.currentUser(first).factors.map(\.status) == ["unverified"])

        let challenge = try await fixture.auth.challengeFactor(first, factorID: enrollment.id, client: fixture.client)
        #expect(challenge.expiresAt == fixture.clock.now / 1_000_000 + 300)
        await expectAuthError(.mfaVerificationFailed) {
            _ = try await fixture.auth.verifyFactor(first, factorID: enrollment.id, challengeID: challenge.id,
                                                    code: try Self.code(enrollment.secret, fixture, offset: 2), client: fixture.client)
        }
        let verified = try await fixture.auth.verifyFactor(first, factorID: enrollment.id, challengeID: challenge.id,
                                                           code: try Self.code(enrollment.secret, fixture), client: fixture.client)
        let raised = try await fixture.identity(verified)
        #expect(raised.claimText(["aal"]) == "aal2")
        #expect(raised.claimText(["session_id"]) == first.claimText(["session_id"]))
        #expect(Self.methods(raised) == ["totp", "password"])
        #expect(verified.user.factors.map(\.status) == ["verified"])
        guard case .array(let listed)? = verified.user.json["factors"] else { Issue.record("no factors in the user"); return }
        #expect(listed.map { $0["factor_type"] } == [.string("totp")])

        // A refresh keeps the session's level and methods.
        let refreshed = try await fixture.identity(try await fixture.auth.refresh(verified.refreshToken, client: fixture.client))
        #expect(refreshed.claimText(["aal"]) == "aal2")
        #expect(Self.methods(refreshed) == ["totp", "password"])

        // A challenge is answered once.
        await expectAuthError(.mfaIPAddressMismatch) {
            _ = try await fixture.auth.verifyFactor(raised, factorID: enrollment.id, challengeID: challenge.id,
                                                    code: try Self.code(enrollment.secret, fixture), client: fixture.client)
        }
    }

    @Test(arguments: Engine.allCases) func aTimeStepIsAcceptedOnceAndTheWindowIsOneStep(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let (enrollment, session) = try await Self.enrolled(fixture, try await Self.signUp(fixture, "steps@example.com"))
        let identity = try await fixture.identity(session)
        func attempt(_ offset: Int64) async throws -> AuthSession {
            let challenge = try await fixture.auth.challengeFactor(identity, factorID: enrollment.id, client: fixture.client)
            return try await fixture.auth.verifyFactor(identity, factorID: enrollment.id, challengeID: challenge.id,
                                                       code: try Self.code(enrollment.secret, fixture, offset: offset), client: fixture.client)
        }
        // The step just used, and the one before it, are refused; the next step is within the window.
        await expectAuthError(.mfaVerificationFailed) { _ = try await attempt(0) }
        await expectAuthError(.mfaVerificationFailed) { _ = try await attempt(-1) }
        _ = try await attempt(1)
        await expectAuthError(.mfaVerificationFailed) { _ = try await attempt(1) }
        fixture.clock.advance(seconds: 90)
        await expectAuthError(.mfaVerificationFailed) { _ = try await attempt(2) }
        _ = try await attempt(-1)
    }

    @Test(arguments: Engine.allCases) func aSecondSignInStartsAtAAL1AndIsRaisedByTheEnrolledFactor(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let (enrollment, first) = try await Self.enrolled(fixture, try await Self.signUp(fixture, "again@example.com"))
        let spare = try await fixture.auth.signIn(email: "again@example.com", phone: nil, password: Self.password, client: fixture.client)
        let login = try await fixture.auth.signIn(email: "again@example.com", phone: nil, password: Self.password, client: fixture.client)
        let aal1 = try await fixture.identity(login)
        #expect(aal1.claimText(["aal"]) == "aal1")
        // The next step (the current one was used by the enrollment), on the login's own session.
        fixture.clock.advance(seconds: 30)
        let challenge = try await fixture.auth.challengeFactor(aal1, factorID: enrollment.id, client: fixture.client)
        let raised = try await fixture.auth.verifyFactor(aal1, factorID: enrollment.id, challengeID: challenge.id,
                                                         code: try Self.code(enrollment.secret, fixture), client: fixture.client)
        let aal2 = try await fixture.identity(raised)
        #expect(aal2.claimText(["aal"]) == "aal2" && aal2.claimText(["session_id"]) == aal1.claimText(["session_id"]))
        #expect(Self.methods(aal2) == ["totp", "password"])
        // The user's other aal1 session ended; the earlier aal2 session lives on.
        do {
            _ = try await fixture.auth.refresh(spare.refreshToken, client: fixture.client)
            Issue.record("the other aal1 session still refreshes")
        } catch let error as AuthError {
            #expect([.refreshTokenNotFound, .sessionNotFound].contains(error.code))
        }
        #expect(try await fixture.identity(try await fixture.auth.refresh(first.refreshToken, client: fixture.client)).claimText(["aal"]) == "aal2")
    }

    @Test(arguments: Engine.allCases) func anExpiredChallengeIsRefused(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let identity = try await fixture.identity(try await Self.signUp(fixture, "late@example.com"))
        let enrollment = try await fixture.auth.enrollFactor(identity, factorType: "totp", friendlyName: nil, issuer: nil)
        #expect(enrollment.uri.hasPrefix("otpauth://totp/test:late@example.com?"))
        let challenge = try await fixture.auth.challengeFactor(identity, factorID: enrollment.id, client: fixture.client)
        fixture.clock.advance(seconds: 301)
        await expectAuthError(.mfaChallengeExpired) {
            _ = try await fixture.auth.verifyFactor(identity, factorID: enrollment.id, challengeID: challenge.id,
                                                    code: try Self.code(enrollment.secret, fixture), client: fixture.client)
        }
        // From another address, a fresh challenge is refused too.
        let fresh = try await fixture.auth.challengeFactor(identity, factorID: enrollment.id, client: fixture.client)
        await expectAuthError(.mfaIPAddressMismatch) {
            _ = try await fixture.auth.verifyFactor(identity, factorID: enrollment.id, challengeID: fresh.id,
                                                    code: try Self.code(enrollment.secret, fixture), client: AuthClient(ip: "192.0.2.99"))
        }
    }

    @Test(arguments: Engine.allCases) func verifiedFactorsNeedAAL2ToChangeAndBelongToTheirUser(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let (enrollment, aal2) = try await Self.enrolled(fixture, try await Self.signUp(fixture, "owner@example.com"))
        let aal1 = try await fixture.identity(try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: Self.password, client: fixture.client))
        #expect(aal1.claimText(["aal"]) == "aal1")
        await expectAuthError(.insufficientAAL) { _ = try await fixture.auth.unenrollFactor(aal1, factorID: enrollment.id) }
        await expectAuthError(.insufficientAAL) { _ = try await fixture.auth.enrollFactor(aal1, factorType: "totp", friendlyName: "second", issuer: nil) }
        await expectAuthError(.mfaFactorNameConflict) {
            _ = try await fixture.auth.enrollFactor(try await fixture.identity(aal2), factorType: "totp", friendlyName: "phone", issuer: nil)
        }

        let stranger = try await fixture.identity(try await Self.signUp(fixture, "stranger@example.com"))
        await expectAuthError(.mfaFactorNotFound) { _ = try await fixture.auth.challengeFactor(stranger, factorID: enrollment.id, client: fixture.client) }
        await expectAuthError(.mfaFactorNotFound) { _ = try await fixture.auth.unenrollFactor(stranger, factorID: enrollment.id) }
        await expectAuthError(.mfaFactorNotFound) { _ = try await fixture.auth.unenrollFactor(stranger, factorID: "not-a-uuid") }

        #expect(try await fixture.auth.unenrollFactor(try await fixture.identity(aal2), factorID: enrollment.id) == enrollment.id)
        #expect(try await fixture.count(AuthSchema.mfaFactors) == 0)
        // With no verified factor left, the session's next token is aal1 again.
        let after = try await fixture.identity(try await fixture.auth.refresh(aal2.refreshToken, client: fixture.client))
        #expect(after.claimText(["aal"]) == "aal1")
    }

    @Test(arguments: Engine.allCases) func aPolicyCanRequireAAL2(engine: Engine) async throws {
        let vault = TableSchema("vault_notes", columns: [Column("id", .text, nullable: false), Column("body", .text)], primaryKey: ["id"])
        let rule = PolicyRule.compare(.claim(["aal"]), .eq, .literal(.text("aal2")))
        let module = AppModule(name: "vault", tables: [vault], migrations: [try renderedMigration("vault-0001", [vault])],
                               policies: [vault.name: [TablePolicy("aal2 only", for: TablePolicy.allCommands, to: [.authenticated], using: rule)]])
        let fixture = try await AuthFixture(engine, modules: [module])
        _ = try await WritePipeline(store: fixture.store, publisher: fixture.changes).run(fixture.catalog.access(for: .serviceRole)) { tx in
            try await tx.insert([RowValues(["id": .text("n1"), "body": .text("secret")])], into: vault, conflict: nil)
        }
        func visible(_ identity: Identity) async throws -> Int {
            let plan = try ReadPlan(table: vault, query: Query(), access: try fixture.catalog.access(for: identity).readRule(vault), maxRows: nil, includeCount: false)
            return try await fixture.store.fetch(plan).rows.count
        }
        func insert(_ identity: Identity, _ id: String) async throws {
            _ = try await WritePipeline(store: fixture.store, publisher: fixture.changes).run(fixture.catalog.access(for: identity)) { tx in
                try await tx.insert([RowValues(["id": .text(id), "body": .text("x")])], into: vault, conflict: nil)
            }
        }
        let session = try await Self.signUp(fixture, "vault@example.com")
        let aal1 = try await fixture.identity(session)
        #expect(try await visible(aal1) == 0)
        await #expect(throws: (any Error).self) { try await insert(aal1, "n2") }
        let (_, raised) = try await Self.enrolled(fixture, session)
        let aal2 = try await fixture.identity(raised)
        #expect(try await visible(aal2) == 1)
        try await insert(aal2, "n3")
        #expect(try await visible(aal2) == 2)
    }
}

/// `GET /reauthenticate` and `auth_secure_password_change` (both engines).
@Suite("Reauthentication")
struct ReauthenticationTests {
    @Test(arguments: Engine.allCases) func offByDefaultAPasswordChangesWithoutANonce(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        let session = try await MFATests.signUp(fixture, "plain@example.com")
        fixture.clock.advance(seconds: 25 * 3600)
        let fresh = try await fixture.auth.refresh(session.refreshToken, client: fixture.client)
        var changes = UserChanges(password: "another-long-1")
        changes.nonce = nil
        _ = try await fixture.auth.updateUser(try await fixture.identity(fresh), changes: changes)
        _ = try await fixture.auth.signIn(email: "plain@example.com", phone: nil, password: "another-long-1", client: fixture.client)
    }

    @Test(arguments: Engine.allCases) func onAnOldSessionNeedsTheNonceSentByReauthenticate(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.securePasswordChange = true }
        let session = try await MFATests.signUp(fixture, "careful@example.com")
        // A session younger than a day changes the password without a nonce, as GoTrue's.
        _ = try await fixture.auth.updateUser(try await fixture.identity(session), changes: UserChanges(password: "second-long-1"))
        fixture.clock.advance(seconds: 25 * 3600)
        let old = try await fixture.identity(try await fixture.auth.refresh(session.refreshToken, client: fixture.client))
        await expectAuthError(.reauthenticationNeeded) { _ = try await fixture.auth.updateUser(old, changes: UserChanges(password: "third-long-1")) }
        var withNonce = UserChanges(password: "third-long-1")
        withNonce.nonce = "123456"
        await expectAuthError(.reauthenticationNotValid) { _ = try await fixture.auth.updateUser(old, changes: withNonce) }

        try await fixture.auth.reauthenticate(old)
        let nonce = try #require(fixture.sender.code(for: "careful@example.com"))
        #expect(fixture.sender.messages.last?.subject == "Confirm reauthentication")
        await expectAuthError(.overEmailSendRateLimit) { try await fixture.auth.reauthenticate(old) }
        withNonce.nonce = nonce == "000000" ? "111111" : "000000"
        await expectAuthError(.otpExpired) { _ = try await fixture.auth.updateUser(old, changes: withNonce) }
        withNonce.nonce = nonce
        _ = try await fixture.auth.updateUser(old, changes: withNonce)
        _ = try await fixture.auth.signIn(email: "careful@example.com", phone: nil, password: "third-long-1", client: fixture.client)
        // Used up.
        await expectAuthError(.reauthenticationNotValid) { _ = try await fixture.auth.updateUser(old, changes: withNonce) }
    }
}
