import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Places
import Testing

@Suite("REST when the database is unreachable")
struct UnavailableDatabaseTests {
    /// A PostgreSQL store whose server is gone: reads and writes answer 503 PGRST001 with a Retry-After, quickly.
    @Test func readsAndWritesAnswer503WithRetryAfter() async throws {
        let (app, headers, store) = try await unreachableDeployment()
        let clock = ContinuousClock()
        let start = clock.now
        let (read, write) = try await app.test(.router) { client in
            let read = try await client.execute(uri: "/rest/v1/places?select=id", method: .get, headers: headers)
            let write = try await client.execute(uri: "/rest/v1/places", method: .post, headers: headers,
                                                 body: ByteBuffer(string: #"{"id":"x","name_ar":"x","category":"c","category_ar":"c"}"#))
            return (read, write)
        }
        // A hang check, not a speed test: the suite runs beside heavy tests on 2 cores (15.6 s seen for what takes
        // 0.65 s alone), so the bound only catches a request that never answers.
        #expect(clock.now - start < .seconds(60))
        for response in [read, write] {
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "PGRST001")
            #expect(response.header("Retry-After") == "1")
            #expect(!response.text.contains("127.0.0.1"), "connection details stay in the log")
        }
        _ = store  // released (and its pool stopped) when the test ends
    }
}

@Suite("Sync when the database is unreachable")
struct UnavailableDatabaseSyncTests {
    @Test func pullAndPushAnswer503WithRetryAfter() async throws {
        let (app, headers, store) = try await unreachableDeployment()
        let body = #"{"mutations":[{"id":"0d2e2a4e-8d7a-4c1e-9f65-1f5d8a0b6c11","table":"places","op":"delete","key":{"id":"x"}}]}"#
        let (pull, push) = try await app.test(.router) { client in
            let pull = try await client.execute(uri: "/sync/v1/pull?tables=places", method: .get, headers: headers)
            let push = try await client.execute(uri: "/sync/v1/push", method: .post, headers: headers, body: ByteBuffer(string: body))
            return (pull, push)
        }
        for response in [pull, push] {
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "PGRST001")
            #expect(response.header("Retry-After") == "1")
            #expect(response.header("Cache-Control") == "no-store")
        }
        #expect(push.text.contains(#""results":[]"#), "the results so far (none) beside the error")
        _ = store
    }
}

/// The router over a PostgreSQL store whose server is gone, and service-role headers.
func unreachableDeployment() async throws -> (some ApplicationProtocol, HTTPFields, any Store) {
    let store = try await Engine.makeUnreachablePostgresStore(acquireTimeout: .milliseconds(300))
    let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
    let directory = NSTemporaryDirectory() + "caravan-unavailable-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
    let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
    let keys = try await verifier.apiKeys()
    let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, publisher: ChangePublisher())
    let app = Application(router: buildRouter(configuration: ServerConfiguration(), services: services))
    let headers: HTTPFields = [HTTPField.Name("apikey")!: keys.serviceRoleKey, .contentType: "application/json"]
    return (app, headers, store)
}

@Suite("Auth when the database is unreachable")
struct UnavailableDatabaseAuthTests {
    /// Like REST's 503 PGRST001: auth answers a storage outage with 503, a GoTrue body and a Retry-After.
    @Test func signInAnswers503WithRetryAfterAndAGoTrueBody() async throws {
        let store = try await Engine.makeUnreachablePostgresStore(acquireTimeout: .milliseconds(300))
        let catalog = Catalog(modules: [SystemModule.module, AuthModule.module, PlacesModule.module])
        let directory = NSTemporaryDirectory() + "caravan-unavailable-auth-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
        let keys = try await verifier.apiKeys()
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        var configuration = AuthConfiguration()
        configuration.bcryptCost = 4
        let auth = try await AuthService(store: store, pipeline: pipeline, catalog: catalog, secret: secret, verifier: verifier,
                                         configuration: configuration, baseURL: "http://test",
                                         sender: OutboxSender(pipeline: pipeline, catalog: catalog, logger: Logger(label: "test"), clock: .fixed(microseconds: 0)),
                                         threadPool: .singleton, logger: Logger(label: "test"),
                                         clock: .fixed(microseconds: 1_800_000_000_000_000), ids: .random)
        let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, pipeline: pipeline, auth: auth)
        let app = Application(router: buildRouter(configuration: ServerConfiguration(), services: services))
        let headers: HTTPFields = [HTTPField.Name("apikey")!: keys.anonKey, .contentType: "application/json"]
        let response = try await app.test(.router) { client in
            try await client.execute(uri: "/auth/v1/token?grant_type=password", method: .post, headers: headers,
                                     body: ByteBuffer(string: #"{"email":"down@example.com","password":"long-enough-1"}"#))
        }
        #expect(response.status == .serviceUnavailable)
        #expect(response.errorCode == "service_unavailable")
        #expect(response.header("Retry-After") == "1")
        #expect(response.header("X-Supabase-Api-Version") == "2024-01-01")
        #expect(!response.text.contains("127.0.0.1"), "connection details stay in the log")
        _ = store
    }
}
