import CaravanAuth
import CaravanCore
import CaravanTesting
import Foundation
import Synchronization
import Testing

/// Limits that protect without locking owners out, refusals that say when to retry, addresses that cannot be
/// spelled twice, and code endpoints that reveal no accounts.
@Suite("Auth abuse limits and identities")
struct AbuseLimitTests {
    @Test(arguments: Engine.allCases) func anAttackersFailuresDoNotRefuseTheOwnerFromAnotherAddress(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        _ = try await fixture.auth.signUp(email: "owner@example.com", phone: nil, password: "the-right-password", data: nil, client: fixture.client)
        let attacker = AuthClient(ip: "203.0.113.9")
        for _ in 0..<10 {
            await expectAuthError(.invalidCredentials) {
                _ = try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: "a-wrong-guess", client: attacker)
            }
        }
        // The attacker's address is refused for this account, with the seconds left in its window.
        do {
            _ = try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: "the-right-password", client: attacker)
            Issue.record("expected over_request_rate_limit")
        } catch let error as AuthError {
            #expect(error.code == .overRequestRateLimit)
            #expect(error.retryAfter.map { (1...300).contains($0) } == true)
        }
        // The owner, from their own address, signs in.
        let session = try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: "the-right-password",
                                                    client: AuthClient(ip: "198.51.100.7"))
        #expect(session.user.email == "owner@example.com")
    }

    @Test(arguments: Engine.allCases) func lookAlikeAndControlCharacterAddressesAreNotNewAccounts(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        _ = try await fixture.auth.signUp(email: "admin@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
        await expectAuthError(.userAlreadyExists) {
            _ = try await fixture.auth.signUp(email: "\u{FF41}dmin@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
        }
        await expectAuthError(.userAlreadyExists) {
            _ = try await fixture.auth.signUp(email: "ADMIN@\u{FF45}xample.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
        }
        for bad in ["admin@example.com\u{0}", "ad\u{1}min@example.com", "admin\u{7F}@example.com", "ad\u{200D}min@example.com",
                    "admin@example.com\u{202E}", "\u{0}"] {
            await expectAuthError(.validationFailed) {
                _ = try await fixture.auth.signUp(email: bad, phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
            }
        }
        // The look-alike signs in to the one account.
        let session = try await fixture.auth.signIn(email: "\u{FF41}dmin@example.com", phone: nil, password: "long-enough-1", client: fixture.client)
        #expect(session.user.email == "admin@example.com")
    }

    @Test func theLookAlikeRuleFoldsRejectsOrAllows() throws {
        for text in ["\u{FF41}dmin@example.com", "admin@\u{FF45}xample.com", "\u{FB01}le@example.com", "cafe\u{301}@example.com"] {
            #expect(throws: AuthError.self) { _ = try Contact.from(email: text, phone: nil, lookalikes: .reject) }
            do {
                _ = try Contact.from(email: text, phone: nil, lookalikes: .reject)
            } catch {
                #expect(error.code == .emailAddressInvalid)
            }
        }
        // Unchanged by NFKC: ASCII in any case, and composed non-ASCII letters.
        #expect(try Contact.from(email: "Admin@Example.com", phone: nil, lookalikes: .reject) == .email("admin@example.com"))
        #expect(try Contact.from(email: "m\u{FC}ller@example.com", phone: nil, lookalikes: .reject) == .email("m\u{FC}ller@example.com"))
        // `allow`: case folded only (and composed), so the full-width letter stays.
        #expect(try Contact.from(email: "\u{FF41}dmin@Example.com", phone: nil, lookalikes: .allow) == .email("\u{FF41}dmin@example.com"))
        #expect(try Contact.from(email: "cafe\u{301}@example.com", phone: nil, lookalikes: .allow) == .email("caf\u{E9}@example.com"))
        // Control and format characters are refused under every rule.
        for rule in EmailLookalikes.allCases {
            #expect(throws: AuthError.self) { _ = try Contact.from(email: "ad\u{200D}min@example.com", phone: nil, lookalikes: rule) }
        }
        #expect(try AuthConfiguration.resolve { _ in nil }.emailLookalikes == .fold)
        #expect(try AuthConfiguration.resolve { $0 == "auth_email_lookalikes" ? "Reject" : nil }.emailLookalikes == .reject)
        #expect(throws: CaravanError.self) { _ = try AuthConfiguration.resolve { $0 == "auth_email_lookalikes" ? "nfkc" : nil } }
    }

    @Test(arguments: Engine.allCases) func rejectRefusesLookAlikeSignUpsAndAllowKeepsThemApart(engine: Engine) async throws {
        let strict = try await AuthFixture(engine) { $0.emailLookalikes = .reject }
        _ = try await strict.auth.signUp(email: "admin@example.com", phone: nil, password: "long-enough-1", data: nil, client: strict.client)
        await expectAuthError(.emailAddressInvalid) {
            _ = try await strict.auth.signUp(email: "\u{FF41}dmin@example.com", phone: nil, password: "long-enough-1", data: nil, client: strict.client)
        }
        await expectAuthError(.emailAddressInvalid) {
            _ = try await strict.auth.signIn(email: "\u{FF41}dmin@example.com", phone: nil, password: "long-enough-1", client: strict.client)
        }
        #expect(try await strict.count(SystemModule.users) == 1)

        let lenient = try await AuthFixture(engine) { $0.emailLookalikes = .allow }
        _ = try await lenient.auth.signUp(email: "admin@example.com", phone: nil, password: "long-enough-1", data: nil, client: lenient.client)
        guard case .session(let other) = try await lenient.auth.signUp(email: "\u{FF41}dmin@Example.com", phone: nil, password: "long-enough-2",
                                                                      data: nil, client: lenient.client) else {
            Issue.record("sign-up returned no session")
            return
        }
        #expect(other.user.email == "\u{FF41}dmin@example.com")
        await expectAuthError(.userAlreadyExists) {
            _ = try await lenient.auth.signUp(email: "ADMIN@example.com", phone: nil, password: "long-enough-1", data: nil, client: lenient.client)
        }
        #expect(try await lenient.count(SystemModule.users) == 2)
    }

    @Test func emailsAreFoldedAndPhonesAreE164() throws {
        #expect(try Contact.from(email: "\u{FF41}dmin@Example.com", phone: nil, lookalikes: .fold) == .email("admin@example.com"))
        #expect(try Contact.from(email: "noura@ｅｘａｍｐｌｅ.com", phone: nil, lookalikes: .fold) == .email("noura@example.com"))
        #expect(try Contact.from(email: nil, phone: "+1 (415) 555-0100", lookalikes: .fold) == .phone("14155550100"))
        for bad in ["+1 415 555 0100\u{0}", "+١٢٣٤٥٦٧٨٩", "+12345678901234567", "+0123456789"] {
            #expect(throws: AuthError.self) { _ = try Contact.from(email: nil, phone: bad, lookalikes: .fold) }
        }
    }

    @Test(arguments: Engine.allCases) func withSignUpsOffCodeEndpointsAnswerKnownAndUnknownAddressesAlike(engine: Engine) async throws {
        let off = try await AuthFixture(engine) { $0.signupEnabled = false }
        _ = try await off.auth.adminCreateUser(.serviceRole, NewUser(email: "known@example.com", password: "long-enough-1"))
        for email in ["known@example.com", "unknown@example.com"] {
            for createUser in [true, false] {
                try await off.auth.sendOTP(email: email, phone: nil, createUser: createUser, data: nil, client: off.client)
                await off.auth.deliveries.settled()
                off.clock.advance(seconds: 61)
            }
            try await off.auth.recover(email: email, client: off.client)
            try await off.auth.resend(type: "signup", email: email, phone: nil, client: off.client)
        }
        await off.auth.deliveries.settled()
        #expect(!off.sender.messages.isEmpty)
        #expect(off.sender.messages.allSatisfy { $0.recipient == "known@example.com" })
        #expect(try await off.count(SystemModule.users) == 1)
    }

    /// Asked again at once, a known address is not refused for the resend interval where an unknown one passes:
    /// every code endpoint answers both alike, email and phone.
    @Test(arguments: Engine.allCases) func withSignUpsOffRepeatedCodeRequestsAnswerKnownAndUnknownAlike(engine: Engine) async throws {
        let off = try await AuthFixture(engine) {
            $0.signupEnabled = false
            $0.rateLimits[.otp] = RateLimit(perIP: 1000, perIdentifier: 1000)
        }
        _ = try await off.auth.adminCreateUser(.serviceRole, NewUser(email: "known@example.com", password: "long-enough-1"))
        _ = try await off.auth.adminCreateUser(.serviceRole, NewUser(phone: "+14155550100", password: "long-enough-1"))
        for (email, phone) in [("known@example.com", nil), ("unknown@example.com", nil), (nil, "+14155550100"), (nil, "+14155550199")] {
            for _ in 0..<3 {
                try await off.auth.sendOTP(email: email, phone: phone, createUser: false, data: nil, client: off.client)
                try await off.auth.sendOTP(email: email, phone: phone, createUser: true, data: nil, client: off.client)
                try await off.auth.resend(type: email == nil ? "sms" : "signup", email: email, phone: phone, client: off.client)
                if let email { try await off.auth.recover(email: email, client: off.client) }
            }
        }
        await off.auth.deliveries.settled()
        // Each known address got its codes once per purpose; the unknown ones got nothing and no account.
        #expect(Set(off.sender.messages.map(\.recipient)) == ["known@example.com", "14155550100"])
        #expect(off.sender.messages.count == 5)
        #expect(try await off.count(SystemModule.users) == 2)
    }

    /// With sign-ups off, a known address's code is issued and sent after the answer: the answer neither waits for a
    /// slow delivery nor reports a failed one, so it is the unknown address's answer. With sign-ups on, a failed
    /// delivery is the caller's error, as GoTrue answers it.
    @Test(arguments: Engine.allCases) func withSignUpsOffTheAnswerNeitherWaitsForNorReportsTheDelivery(engine: Engine) async throws {
        let off = try await AuthFixture(engine) { $0.signupEnabled = false }
        _ = try await off.auth.adminCreateUser(.serviceRole, NewUser(email: "known@example.com", password: "long-enough-1"))
        off.sender.hold()
        let answered = Mutex(false)
        // Were the answer to wait for the held delivery, this releases it after a while and the test fails (no hang).
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            if !answered.withLock({ $0 }) { Issue.record("the answer waited for the delivery") }
            off.sender.release()
        }
        try await off.auth.sendOTP(email: "known@example.com", phone: nil, createUser: false, data: nil, client: off.client)
        answered.withLock { $0 = true }
        #expect(off.sender.messages.isEmpty)
        off.sender.release()
        watchdog.cancel()
        await off.auth.deliveries.settled()
        #expect(off.sender.messages.map(\.recipient) == ["known@example.com"])

        off.sender.fail(true)
        off.clock.advance(seconds: 61)
        try await off.auth.recover(email: "known@example.com", client: off.client)
        try await off.auth.resend(type: "signup", email: "known@example.com", phone: nil, client: off.client)
        await off.auth.deliveries.settled()
        #expect(off.sender.messages.count == 1)

        let on = try await AuthFixture(engine)
        _ = try await on.auth.adminCreateUser(.serviceRole, NewUser(email: "known@example.com", password: "long-enough-1"))
        on.sender.fail(true)
        await expectAuthError(.unexpectedFailure) {
            try await on.auth.recover(email: "known@example.com", client: on.client)
        }
    }
}
