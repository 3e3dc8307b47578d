import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import GRDB
import Logging
import Places
import Testing

/// The SDK signs in every way the server does, against a real server in-process: email or phone and password, a
/// one-time code (read from the server's development outbox), anonymously, and with an Apple ID token (signed by a
/// test key the server trusts through its JWKS file, as Apple's cannot be reached here). The session is kept in a
/// `FileSessionStore` (mode 0600). Every write the server refuses reaches the app through `rejections()`.
@Suite("Sign-in and rejections", .timeLimit(.minutes(5)))
struct SignInTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }
    static let audience = "com.example.places"

    @Test func everySignInOfTheServerWorksAndTheSessionIsKeptInAFileOnlyItsOwnerReads() async throws {
        let directory = NSTemporaryDirectory() + "caravan-sign-in-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let apple = TestIDTokenSigner(keyID: "apple-test")
        try apple.jwks.jsonText.write(toFile: directory + "/apple-jwks.json", atomically: true, encoding: .utf8)
        let settings = ["port": "0", "data_dir": directory + "/data", "auth_apple_jwks": directory + "/apple-jwks.json",
                        "auth_apple_audiences": Self.audience]
        try await AsyncHTTPClientTransport.using { transport in
            try await CaravanHost.withServing(settings, apps: [PlacesModule.module], logger: logger) { serving in
                let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
                let place = try await transport.send(TransportRequest(
                    method: "POST", url: serving.baseURL + "/rest/v1/places",
                    headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
                    body: Array(#"{"id":"kudu","name_ar":"كودو","category":"cafe","category_ar":"مقهى"}"#.utf8)))
                #expect(place.status == 201)
                try await signInEveryWay(api, apple: apple, directory: directory)
            }
        }
    }

    func signInEveryWay(_ api: CaravanAPI, apple: TestIDTokenSigner, directory: String) async throws {
        let file = FileSessionStore(path: directory + "/session.json")
        let sessions = SessionManager(sessions: file, api: api, now: { Int64(Date().timeIntervalSince1970) })
        var users: [String] = []

        let byEmail = try await sessions.signUp(.email("noor@example.com"), password: "a long secret")
        #expect(try file.loadSession() == byEmail)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the session file is its owner's alone")
        #expect(try await sessions.signIn(email: "noor@example.com", password: "a long secret").userID == byEmail.userID)
        users.append(byEmail.userID)

        let phone = AuthContact.phone("+966500000001")
        let byPhone = try await sessions.signUp(phone, password: "another secret")
        #expect(try await sessions.signIn(phone, password: "another secret").userID == byPhone.userID)
        users.append(byPhone.userID)
        await #expect(throws: ClientError.self) { try await sessions.signIn(phone, password: "not it") }

        let codeAddress = AuthContact.email("code@example.com")
        try await sessions.sendCode(to: codeAddress)
        let byCode = try await sessions.verifyCode(try lastCode(to: "code@example.com", directory: directory), sentTo: codeAddress)
        #expect(try file.loadSession() == byCode)
        users.append(byCode.userID)

        let anonymous = try await sessions.signInAnonymously()
        users.append(anonymous.userID)

        let nonce = UUID().uuidString
        let now = Int64(Date().timeIntervalSince1970)
        let claims = JSONValue.object([("iss", .string("https://appleid.apple.com")), ("aud", .string(Self.audience)), ("sub", .string("001234.apple")),
                                       ("iat", .integer(now)), ("exp", .integer(now + 600)), ("nonce", .string(TestIDTokenSigner.sha256Hex(nonce)))])
        let byApple = try await sessions.signInWithApple(idToken: try apple.sign(claims), nonce: nonce)
        #expect(try await sessions.signInWithApple(idToken: try apple.sign(claims), nonce: nonce).userID == byApple.userID, "the same Apple user")
        await #expect(throws: ClientError.self, "the nonce must match") { try await sessions.signInWithApple(idToken: try apple.sign(claims), nonce: "another") }
        users.append(byApple.userID)
        #expect(Set(users).count == 5, "five ways, five users: \(users)")

        // Signed in with Apple, the session file serves the sync engine; a write the policy refuses reaches the app.
        try await refusedWriteReachesTheApp(api, sessions: sessions, userID: byApple.userID, directory: directory)

        try sessions.signOut()
        #expect(try file.loadSession() == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try "{not json".write(toFile: file.path, atomically: true, encoding: .utf8)
        let unreadable = #expect(throws: ClientError.self) { try file.loadSession() }
        #expect(unreadable?.code == "session_unreadable")
    }

    func refusedWriteReachesTheApp(_ api: CaravanAPI, sessions: SessionManager, userID: String, directory: String) async throws {
        let store = try LocalStore(path: directory + "/device.sqlite", tables: PlacesModule.module.tables.filter(\.isSynced))
        let engine = SyncEngine(store: store, api: api, session: sessions, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        let rejections = engine.rejections()
        let mine = try await store.insert(Favorite(id: UUID(), userID: try #require(UUID(uuidString: userID)), placeID: "kudu", note: "mine"))
        let someoneElses = try await store.insert(Favorite(id: UUID(), userID: UUID(), placeID: "kudu", note: "not mine"))
        let report = try await engine.sync(tables: ["favorites"])
        #expect(report.rejected == 1)
        var refusals = rejections.makeAsyncIterator()
        let refusal = try #require(await refusals.next())
        #expect(refusal.subject == .row(table: "favorites", operation: "insert", key: .object([("id", .string(someoneElses.id.uuidString.lowercased()))])))
        #expect(refusal.code == "42501", "the owner policy refused it: \(refusal.message)")
        #expect(try await store.fetch(Favorite.self).map(\.id) == [mine.id], "the refused row is gone from the device")
    }

    /// The newest one-time code sent to `recipient`, read from the server's development outbox.
    func lastCode(to recipient: String, directory: String) throws -> String {
        let database = try DatabaseQueue(path: directory + "/data/caravan.sqlite")
        let body = try database.read { db in
            try String.fetchOne(db, sql: "SELECT body FROM auth_outbox WHERE recipient = ? ORDER BY created_at DESC LIMIT 1", arguments: [recipient])
        }
        let code = try #require(body?.split(separator: " ").first { $0.count == 7 && $0.hasSuffix(".") && $0.dropLast().allSatisfy(\.isNumber) })
        return String(code.dropLast())
    }
}
