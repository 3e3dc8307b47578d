import CaravanAuth
import CaravanCore
import CaravanSQL
import CaravanTesting
import CaravanSQLite
import Foundation
import Logging
import NIOPosix
import Places
import Synchronization
import Testing

/// A clock the test moves by hand (microseconds since 1970).
final class ManualClock: Sendable {
    private let micros = Mutex<Int64>(1_795_000_000 * 1_000_000)
    var now: Int64 { micros.withLock { $0 } }
    func advance(seconds: Int64) { micros.withLock { $0 += seconds * 1_000_000 } }
}

/// Collects sent messages in memory (the outbox table is covered by the conformance suite). A test can hold
/// deliveries until it releases them, or make them fail.
final class RecordingSender: MessageSender {
    struct DeliveryFailed: Error {}

    private let sent = Mutex<[OutgoingMessage]>([])
    /// The deliveries waiting for `release()`, while held.
    private let held = Mutex<[CheckedContinuation<Void, Never>]?>(nil)
    private let failing = Mutex(false)

    func send(_ message: OutgoingMessage) async throws {
        await withCheckedContinuation { continuation in
            let waits = held.withLock { held in
                guard held != nil else { return false }
                held?.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
        if failing.withLock({ $0 }) { throw DeliveryFailed() }
        sent.withLock { $0.append(message) }
    }

    var messages: [OutgoingMessage] { sent.withLock { $0 } }

    /// Deliveries wait from now until `release()`.
    func hold() { held.withLock { $0 = $0 ?? [] } }

    func release() {
        let waiting = held.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Whether deliveries from now on fail.
    func fail(_ value: Bool) { failing.withLock { $0 = value } }

    /// The six-digit code of the newest message to `recipient`.
    func code(for recipient: String) -> String? {
        guard let body = messages.last(where: { $0.recipient == recipient })?.body else { return nil }
        return body.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters) }
            .first { $0.count == 6 && $0.allSatisfy(\.isNumber) }
    }
}

/// A deployment on a temporary SQLite file with auth on a manual clock.
struct AuthFixture {
    let store: any Store
    let auth: AuthService
    let clock: ManualClock
    let sender: RecordingSender
    let verifier: TokenVerifier
    let changes: ChangePublisher
    let catalog: Catalog
    let client = AuthClient(ip: "192.0.2.1")

    /// - Parameters:
    ///   - path: an SQLite file of the test's own (which it may then open directly); the engine's store otherwise.
    ///   - ids: the id generator auth uses.
    ///   - modules: app modules served beside auth and places.
    init(_ engine: Engine, path: String? = nil, ids: IDGenerator = .random, modules: [AppModule] = [],
         configure: (inout AuthConfiguration) -> Void = { _ in }) async throws {
        let directory = NSTemporaryDirectory() + "caravan-auth-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        catalog = Catalog(modules: [SystemModule.module, AuthModule.module, PlacesModule.module] + modules)
        if let path {
            let sqlite = try SQLiteStore(path: path)
            _ = try await sqlite.migrate(catalog.migrations)
            store = sqlite
        } else {
            store = try await engine.makeStore(migrations: catalog.migrations)
        }
        let clock = ManualClock()
        self.clock = clock
        sender = RecordingSender()
        let secret = try SigningSecret.loadOrCreate(in: directory, now: clock.now / 1_000_000)
        verifier = await TokenVerifier(secret: secret, now: { clock.now / 1_000_000 })
        var configuration = AuthConfiguration()
        configuration.bcryptCost = 4
        configure(&configuration)
        changes = ChangePublisher()
        auth = try await AuthService(store: store, pipeline: WritePipeline(store: store, publisher: changes), catalog: catalog,
                                     secret: secret, verifier: verifier, configuration: configuration, baseURL: "http://test",
                                     sender: sender, threadPool: .singleton, logger: Logger(label: "test"),
                                     clock: WallClock { clock.now }, ids: ids)
    }

    func identity(_ session: AuthSession) async throws -> Identity {
        try await verifier.identity(for: session.accessToken)
    }

    /// How many rows `table` holds, read through the storage port.
    func count(_ table: TableSchema) async throws -> Int {
        let plan = try ReadPlan(table: table, query: Query(limit: 0), access: .constant(true), maxRows: nil, includeCount: true)
        return try await store.fetch(plan).totalCount ?? -1
    }

    /// One column of the user with `id`.
    func userColumn(_ name: String, id: String) async throws -> Value? {
        let users = SystemModule.users
        let plan = try ReadPlan(table: users, query: Query(select: [.column(name: name, alias: nil, cast: nil)]),
                                access: .compare(try users.requireColumn("id"), .eq, .text(id)), maxRows: nil, includeCount: false)
        return try await store.fetch(plan).rows.first?.first
    }
}

func expectAuthError(_ code: AuthErrorCode, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected \(code.rawValue), got success", sourceLocation: sourceLocation)
    } catch let error as AuthError {
        #expect(error.code == code, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Auth service")
struct AuthServiceTests {
    @Test(arguments: Engine.allCases) func passwordsAreStoredAsBcryptHashesOfTheConfiguredCost(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.bcryptCost = 12 }
        guard case .session(let session) = try await fixture.auth.signUp(email: "cost@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        guard case .text(let hash)? = try await fixture.userColumn("encrypted_password", id: session.user.id) else {
            Issue.record("no password hash stored"); return
        }
        #expect(hash.hasPrefix("$2b$12$"))
        #expect(!hash.contains("long-enough-1"))
    }

    @Test(arguments: Engine.allCases) func codesExpireAfterFiveMinutes(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        try await fixture.auth.sendOTP(email: "late@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let code = try #require(fixture.sender.code(for: "late@example.com"))
        fixture.clock.advance(seconds: 301)
        await expectAuthError(.otpExpired) {
            _ = try await fixture.auth.verify(email: "late@example.com", phone: nil, token: code, type: .email, client: fixture.client)
        }
    }

    @Test(arguments: Engine.allCases) func aCodeWithinItsLifetimeSignsIn(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        try await fixture.auth.sendOTP(email: "ontime@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let code = try #require(fixture.sender.code(for: "ontime@example.com"))
        fixture.clock.advance(seconds: 299)
        let session = try await fixture.auth.verify(email: "ontime@example.com", phone: nil, token: code, type: .magiclink, client: fixture.client)
        #expect(session.user.emailConfirmedAt != nil)
    }

    @Test(arguments: Engine.allCases) func resendIsAllowedAfterSixtySecondsAndReplacesTheCode(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        try await fixture.auth.sendOTP(email: "again@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let first = try #require(fixture.sender.code(for: "again@example.com"))
        fixture.clock.advance(seconds: 59)
        await expectAuthError(.overEmailSendRateLimit) {
            try await fixture.auth.sendOTP(email: "again@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        }
        fixture.clock.advance(seconds: 1)
        try await fixture.auth.sendOTP(email: "again@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let second = try #require(fixture.sender.code(for: "again@example.com"))
        #expect(fixture.sender.messages.count == 2)
        if first != second {
            await expectAuthError(.otpExpired) {
                _ = try await fixture.auth.verify(email: "again@example.com", phone: nil, token: first, type: .email, client: fixture.client)
            }
        }
        _ = try await fixture.auth.verify(email: "again@example.com", phone: nil, token: second, type: .email, client: fixture.client)
    }

    @Test(arguments: Engine.allCases) func aRotatedTokenIsToleratedWithinTheReuseInterval(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let t0) = try await fixture.auth.signUp(email: "reuse@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let t1 = try await fixture.auth.refresh(t0.refreshToken, client: fixture.client)
        let t2 = try await fixture.auth.refresh(t1.refreshToken, client: fixture.client)
        fixture.clock.advance(seconds: 5)
        // t0 is two generations old but was rotated 5 s ago (< 10 s): answered with the active token.
        let again = try await fixture.auth.refresh(t0.refreshToken, client: fixture.client)
        #expect(again.refreshToken == t2.refreshToken)
        fixture.clock.advance(seconds: 10)
        await expectAuthError(.refreshTokenAlreadyUsed) { _ = try await fixture.auth.refresh(t0.refreshToken, client: fixture.client) }
        await expectAuthError(.refreshTokenNotFound) { _ = try await fixture.auth.refresh(t2.refreshToken, client: fixture.client) }
    }

    @Test(arguments: Engine.allCases) func aLostReplyIsAnsweredWithTheSameChildEvenAfterTheReuseInterval(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let t0) = try await fixture.auth.signUp(email: "lost@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let t1 = try await fixture.auth.refresh(t0.refreshToken, client: fixture.client)
        fixture.clock.advance(seconds: 60)
        let again = try await fixture.auth.refresh(t0.refreshToken, client: fixture.client)
        #expect(again.refreshToken == t1.refreshToken)
        let t2 = try await fixture.auth.refresh(t1.refreshToken, client: fixture.client)
        #expect(t2.refreshToken != t1.refreshToken)
    }

    @Test(arguments: Engine.allCases) func concurrentRefreshesOfOneTokenAllGetTheSameChild(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let t0) = try await fixture.auth.signUp(email: "race@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let children = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await fixture.auth.refresh(t0.refreshToken, client: fixture.client).refreshToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(children.count == 1)
        #expect(try await fixture.count(AuthSchema.refreshTokens) == 2)
    }

    /// Each update merges into the metadata it read; on PostgreSQL they run concurrently, so updates of one user
    /// are serialized (`serialize(on:)`): none of them is lost.
    @Test(arguments: Engine.allCases) func concurrentMetadataUpdatesOfOneUserAllSurvive(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let session) = try await fixture.auth.signUp(email: "meta@example.com", phone: nil, password: "long-enough-1", data: nil,
                                                                          client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let identity = try await fixture.identity(session)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for key in 0..<12 {
                group.addTask {
                    _ = try await fixture.auth.updateUser(identity, changes: UserChanges(userMetadata: .object([(key: "k\(key)", value: .integer(Int64(key)))])))
                }
            }
            try await group.waitForAll()
        }
        guard case .object(let pairs) = try await fixture.auth.currentUser(identity).userMetadata else { Issue.record("metadata is not an object"); return }
        #expect(Set(pairs.map(\.key)) == Set((0..<12).map { "k\($0)" }))
    }

    /// Guesses at one code run one after the other: however many arrive at once, the sixth and later find the code
    /// spent, and the right code, sent by several requests at once, starts one session. (Request rate limits are
    /// raised: they are not what is tested.)
    @Test(arguments: Engine.allCases) func concurrentGuessesNeverGetPastTheAttemptLimit(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.rateLimits[.verify] = RateLimit(perIP: 1000, perIdentifier: 1000) }
        try await fixture.auth.sendOTP(email: "crowd@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let code = try #require(fixture.sender.code(for: "crowd@example.com"))
        let wrong = code == "000000" ? "111111" : "000000"
        // `token` verified by `requests` requests at once, each from its own address; how many started a session.
        func sessions(verifying token: String, requests: Int, network: String) async throws -> Int {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for request in 0..<requests {
                    group.addTask {
                        do {
                            _ = try await fixture.auth.verify(email: "crowd@example.com", phone: nil, token: token, type: .email,
                                                              client: AuthClient(ip: "\(network).\(request + 1)"))
                            return true
                        } catch is AuthError {
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(try await sessions(verifying: wrong, requests: 12, network: "198.51.100") == 0)
        await expectAuthError(.otpExpired) {
            _ = try await fixture.auth.verify(email: "crowd@example.com", phone: nil, token: code, type: .email, client: AuthClient(ip: "198.51.100.99"))
        }
        // A fresh code, verified by several requests at once: one session.
        fixture.clock.advance(seconds: 61)
        try await fixture.auth.sendOTP(email: "crowd@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let fresh = try #require(fixture.sender.code(for: "crowd@example.com"))
        #expect(try await sessions(verifying: fresh, requests: 6, network: "203.0.113") == 1)
    }

    @Test(arguments: Engine.allCases) func aStrangersPasswordDoesNotSurviveTheOwnersProofOfTheAddress(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.confirmEmail = true }
        guard case .user = try await fixture.auth.signUp(email: "victim@example.com", phone: nil, password: "attacker-pass-1", data: nil, client: fixture.client) else {
            Issue.record("expected a bare user"); return
        }
        fixture.clock.advance(seconds: 61)
        // The owner signs in with a code sent to the address.
        try await fixture.auth.sendOTP(email: "victim@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let code = try #require(fixture.sender.code(for: "victim@example.com"))
        _ = try await fixture.auth.verify(email: "victim@example.com", phone: nil, token: code, type: .email, client: fixture.client)
        await expectAuthError(.invalidCredentials) {
            _ = try await fixture.auth.signIn(email: "victim@example.com", phone: nil, password: "attacker-pass-1", client: AuthClient(ip: "192.0.2.9"))
        }
    }

    @Test(arguments: Engine.allCases) func aRepeatSignUpOfAnUnprovenAddressReplacesThePassword(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.confirmEmail = true }
        _ = try await fixture.auth.signUp(email: "owner@example.com", phone: nil, password: "attacker-pass-1", data: nil, client: fixture.client)
        await expectAuthError(.overEmailSendRateLimit) {
            _ = try await fixture.auth.signUp(email: "owner@example.com", phone: nil, password: "owner-pass-22", data: nil, client: fixture.client)
        }
        fixture.clock.advance(seconds: 61)
        guard case .user = try await fixture.auth.signUp(email: "owner@example.com", phone: nil, password: "owner-pass-22", data: nil, client: fixture.client) else {
            Issue.record("expected a bare user"); return
        }
        let code = try #require(fixture.sender.code(for: "owner@example.com"))
        _ = try await fixture.auth.verify(email: "owner@example.com", phone: nil, token: code, type: .signup, client: fixture.client)
        _ = try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: "owner-pass-22", client: fixture.client)
        await expectAuthError(.invalidCredentials) {
            _ = try await fixture.auth.signIn(email: "owner@example.com", phone: nil, password: "attacker-pass-1", client: fixture.client)
        }
        // Once proven, the address is taken.
        await expectAuthError(.userAlreadyExists) {
            _ = try await fixture.auth.signUp(email: "owner@example.com", phone: nil, password: "another-pass-3", data: nil, client: fixture.client)
        }
    }

    @Test(arguments: Engine.allCases) func anExhaustedCodeBlocksUntilTheResendInterval(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        try await fixture.auth.sendOTP(email: "guess@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        let code = try #require(fixture.sender.code(for: "guess@example.com"))
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<5 {
            await expectAuthError(.otpExpired) {
                _ = try await fixture.auth.verify(email: "guess@example.com", phone: nil, token: wrong, type: .email, client: fixture.client)
            }
        }
        await expectAuthError(.otpExpired) {
            _ = try await fixture.auth.verify(email: "guess@example.com", phone: nil, token: code, type: .email, client: fixture.client)
        }
        await expectAuthError(.overEmailSendRateLimit) {
            try await fixture.auth.sendOTP(email: "guess@example.com", phone: nil, createUser: true, data: nil, client: fixture.client)
        }
    }

    @Test(arguments: Engine.allCases) func resendAfterAnExpiredSignUpCodeSendsANewOne(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.confirmEmail = true }
        _ = try await fixture.auth.signUp(email: "slow@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
        let first = try #require(fixture.sender.code(for: "slow@example.com"))
        fixture.clock.advance(seconds: 400)
        await expectAuthError(.otpExpired) {
            _ = try await fixture.auth.verify(email: "slow@example.com", phone: nil, token: first, type: .signup, client: fixture.client)
        }
        try await fixture.auth.resend(type: "signup", email: "slow@example.com", phone: nil, client: fixture.client)
        #expect(fixture.sender.messages.count == 2)
        let second = try #require(fixture.sender.code(for: "slow@example.com"))
        let session = try await fixture.auth.verify(email: "slow@example.com", phone: nil, token: second, type: .email, client: fixture.client)
        #expect(session.user.emailConfirmedAt != nil)
        // The sign-up confirmation keeps the password chosen at sign-up.
        _ = try await fixture.auth.signIn(email: "slow@example.com", phone: nil, password: "long-enough-1", client: fixture.client)
    }

    @Test(arguments: Engine.allCases) func accessTokensExpireAfterTheConfiguredLifetime(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.accessTokenLifetime = 120 }
        guard case .session(let session) = try await fixture.auth.signUp(email: "short@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        #expect(session.expiresIn == 120)
        let identity = try await fixture.identity(session)
        #expect(identity.role == .authenticated && identity.userID == session.user.id)
        fixture.clock.advance(seconds: 121)
        await #expect(throws: CaravanError.self) { _ = try await fixture.verifier.identity(for: session.accessToken) }
    }

    @Test(arguments: Engine.allCases) func perIPLimitsApplyAcrossIdentifiers(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine) { $0.rateLimits[.signIn] = RateLimit(perIP: 3, perIdentifier: 100) }
        for attempt in 0..<3 {
            await expectAuthError(.invalidCredentials) {
                _ = try await fixture.auth.signIn(email: "nobody\(attempt)@example.com", phone: nil, password: "whatever-1", client: fixture.client)
            }
        }
        await expectAuthError(.overRequestRateLimit) {
            _ = try await fixture.auth.signIn(email: "fresh@example.com", phone: nil, password: "whatever-1", client: fixture.client)
        }
        // Another address is not affected; the window passes.
        await expectAuthError(.invalidCredentials) {
            _ = try await fixture.auth.signIn(email: "fresh@example.com", phone: nil, password: "whatever-1", client: AuthClient(ip: "192.0.2.2"))
        }
        fixture.clock.advance(seconds: 300)
        await expectAuthError(.invalidCredentials) {
            _ = try await fixture.auth.signIn(email: "fresh@example.com", phone: nil, password: "whatever-1", client: fixture.client)
        }
    }

    @Test(arguments: Engine.allCases) func authTablesStayOutOfTheChangeLogAndREST(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        _ = try await fixture.auth.signUp(email: "quiet@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client)
        let logged = try await fixture.store.changes(after: 0, limit: 100)
        #expect(logged.isEmpty, "auth wrote \(logged.map(\.table)) to the change log")
        for table in [SystemModule.users.name] + AuthSchema.tables.map(\.name) {
            #expect(throws: CaravanError.self) { _ = try fixture.catalog.requireExposedTable(table) }
        }
    }

    @Test(arguments: Engine.allCases) func deletingAUserCascadesAndLogsTheAppRows(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let session) = try await fixture.auth.signUp(email: "gone@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        _ = try await WritePipeline(store: fixture.store, publisher: fixture.changes).run(fixture.catalog.access(for: .serviceRole)) { tx in
            _ = try await tx.insert([RowValues(["id": .text("p1"), "name_ar": .text("مكان"), "category": .text("cafe"), "category_ar": .text("مقهى")])],
                              into: PlacesSchema.places, conflict: nil)
            return try await tx.insert([RowValues(["user_id": .text(session.user.id), "place_id": .text("p1")])], into: PlacesSchema.favorites, conflict: nil)
        }
        try await fixture.auth.adminDeleteUser(.serviceRole, id: session.user.id)
        let log = try await fixture.store.changes(after: 0, limit: 100)
        #expect(log.contains { $0.table == "favorites" && $0.operation == .delete })
        #expect(!log.contains { $0.table == SystemModule.users.name || $0.table.hasPrefix("auth_") })
        #expect(try await fixture.count(AuthSchema.sessions) == 0)
        await expectAuthError(.refreshTokenNotFound) { _ = try await fixture.auth.refresh(session.refreshToken, client: fixture.client) }
    }

    @Test(arguments: Engine.allCases) func theAdminRoleIsWrittenOnlyThroughTheAdminAPI(engine: Engine) async throws {
        let fixture = try await AuthFixture(engine)
        guard case .session(let session) = try await fixture.auth.signUp(email: "role@example.com", phone: nil, password: "long-enough-1", data: nil, client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let identity = try await fixture.identity(session)
        var sneaky = UserChanges(userMetadata: .object([("role", .string("admin"))]))
        sneaky.appMetadata = .object([("role", .string("admin"))])
        let updated = try await fixture.auth.updateUser(identity, changes: sneaky)
        #expect(updated.appRole == nil)
        await expectAuthError(.notAdmin) { _ = try await fixture.auth.adminUpdateUser(identity, id: session.user.id, changes: sneaky) }
        let promoted = try await fixture.auth.adminUpdateUser(.serviceRole, id: session.user.id, changes: UserChanges(appMetadata: .object([("role", .string("admin"))])))
        #expect(promoted.appRole == "admin")
        let next = try await fixture.auth.refresh(session.refreshToken, client: fixture.client)
        #expect(try await fixture.identity(next).claimText(["app_metadata", "role"]) == "admin")
    }
}

@Suite("Auth configuration")
struct AuthConfigurationTests {
    @Test func keysAreReadAndValidated() throws {
        let settings = ["auth_jwt_expiry": "600", "auth_confirm_email": "true", "auth_rate_limit_sign_in": "7",
                        "auth_rate_limit_sign_in_per_identifier": "2", "auth_apple_jwks": "/etc/apple.json", "auth_apple_audiences": "a.b, c.d"]
        let configuration = try AuthConfiguration.resolve { settings[$0] }
        #expect(configuration.accessTokenLifetime == 600)
        #expect(configuration.confirmEmail && !configuration.confirmPhone)
        #expect(configuration.rateLimits[.signIn] == RateLimit(perIP: 7, perIdentifier: 2))
        #expect(configuration.apple == AppleConfiguration(keys: .file("/etc/apple.json"), audiences: ["a.b", "c.d"]))
        for (key, bad) in [("auth_jwt_expiry", "soon"), ("auth_confirm_email", "maybe"), ("auth_bcrypt_cost", "3"), ("auth_apple_jwks", "/x")] {
            #expect(throws: CaravanError.self) { _ = try AuthConfiguration.resolve { $0 == key ? bad : nil } }
        }
    }

    @Test func contactsAreNormalized() throws {
        #expect(try Contact.from(email: "  Noura@Example.COM ", phone: nil, lookalikes: .fold) == .email("noura@example.com"))
        #expect(try Contact.from(email: nil, phone: "+966 50-123-4567", lookalikes: .fold) == .phone("966501234567"))
        for bad in ["no-at-sign", "a@b", "a@@b.com", "a b@c.com", "<a>@b.com"] {
            #expect(throws: AuthError.self) { _ = try Contact.from(email: bad, phone: nil, lookalikes: .fold) }
        }
        for bad in ["123", "+abc45678901", "0501234567"] {
            #expect(throws: AuthError.self) { _ = try Contact.from(email: nil, phone: bad, lookalikes: .fold) }
        }
    }

    @Test func frozenAuthSQLMatchesTheRenderer() throws {
        // Shipped before system-0006: the users table had its old name then.
        // Every auth table is created by one of the frozen migrations.
        let frozen = AuthModule.migrations.compactMap { $0.sql[.sqlite] }.joined(separator: "\n")
            .replacingOccurrences(of: #"REFERENCES "users""#, with: #"REFERENCES "auth_users""#)
        guard !frozen.isEmpty else { Issue.record("no SQLite migration"); return }
        for table in AuthSchema.tables {
            for statement in try SQLSchema<SQLiteSyntax>.createTable(table) {
                #expect(frozen.contains(statement), "frozen SQL lacks: \(statement)")
            }
        }
    }
}
