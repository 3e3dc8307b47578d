import AsyncHTTPClient
import CaravanClient
import CaravanCore
import CaravanTesting
import CaravanHost
import Foundation
import Logging
import Notes
import ServiceLifecycle
import Testing

/// The whole server in-process, as an embedder runs it: a `CaravanHost` serving an app module of its own (Notes) on
/// port 0, driven over loopback by the real client SDK (sign-up, offline writes pushed, sync pull under the policy,
/// an RPC), then shut down gracefully.
@Suite struct InProcessServerTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test(arguments: Engine.allCases)
    func appOfItsOwnServedInProcessToTheClientSDK(engine: Engine) async throws {
        var settings = ["port": "0", "data_dir": temporaryDirectory()]
        if engine == .postgres { settings["database_url"] = try await Engine.makeEmptyPostgresDatabase() }
        let host = try CaravanHost(configuration: .init(settings: settings), apps: [NotesModule.module], logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let serving = try await host.serving()
            #expect(serving.port > 0)
            #expect(serving.baseURL == "http://127.0.0.1:\(serving.port)")

            let transport = AsyncHTTPClientTransport()
            let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            let phone = try Device(api: api)
            let laptop = try Device(api: api)
            let stranger = try Device(api: api)
            _ = try await phone.session.signUp(email: "ada@example.com", password: "correct horse battery")
            _ = try await laptop.session.signIn(email: "ada@example.com", password: "correct horse battery")
            _ = try await stranger.session.signUp(email: "eve@example.com", password: "another long password")

            // Written offline on the phone, then pushed; the server fills the owner's defaults and checks the policy.
            let owner = try #require(try phone.store.session()?.userID)
            try phone.store.insert("notes", .object([("owner", .string(owner)), ("title", .string("buy dates"))]), now: now())
            try phone.store.insert("notes", .object([("owner", .string(owner)), ("title", .string("call home")), ("pinned", .bool(true))]),
                                   now: now())
            _ = try await phone.engine.sync(tables: ["notes"])
            #expect(try phone.store.outbox().isEmpty)

            // The owner's other device pulls both; another user pulls none.
            _ = try await laptop.engine.sync(tables: ["notes"])
            #expect(Set(try laptop.store.rows("notes").map { $0["title"] }) == [.string("buy dates"), .string("call home")])
            _ = try await stranger.engine.sync(tables: ["notes"])
            #expect(try stranger.store.rows("notes").isEmpty)

            // The app's RPC runs under the caller's policies.
            let token = try await laptop.session.accessToken()
            #expect(try await api.rpc("count_notes", arguments: .object([("only_pinned", .bool(true))]), token: token) == .integer(1))
            let strangerToken = try await stranger.session.accessToken()
            #expect(try await api.rpc("count_notes", arguments: .object([]), token: strangerToken) == .integer(0))

            // Graceful shutdown: the group returns, and the port no longer answers.
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            await #expect(throws: (any Error).self) { _ = try await api.signIn(email: "ada@example.com", password: "correct horse battery") }
            try await transport.shutdown()
        }
    }

    @Test func unknownAppNameIsRefusedNamingTheAppsThereAre() throws {
        let configuration = try CaravanHost.Configuration(settings: ["apps": "notes,todo", "data_dir": temporaryDirectory()])
        let error = #expect(throws: CaravanError.self) {
            _ = try CaravanHost(configuration: configuration, apps: [NotesModule.module], logger: logger)
        }
        #expect(error?.message.contains("unknown app todo") == true)
        #expect(error?.message.contains("notes") == true)
    }

    @Test func badSettingIsRefusedNamingIt() {
        let error = #expect(throws: CaravanError.self) { _ = try CaravanHost.Configuration(settings: ["port": "eighty"]) }
        #expect(error?.message.contains("port") == true)
    }

    @Test func hostThatCannotListenTellsItsWaiters() async throws {
        // A port already taken by another host.
        let first = try CaravanHost(configuration: .init(settings: ["port": "0", "data_dir": temporaryDirectory()]), apps: [], logger: logger)
        let firstGroup = ServiceGroup(configuration: .init(services: [first], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await firstGroup.run() }
            let taken = try await first.serving().port
            let second = try CaravanHost(configuration: .init(settings: ["port": String(taken), "data_dir": temporaryDirectory()]), apps: [],
                                         logger: logger)
            async let secondRun: Void = second.run()
            await #expect(throws: (any Error).self) { _ = try await second.serving() }
            _ = try? await secondRun
            await firstGroup.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

/// One device of the client SDK: its own local store file (mirroring `tables`), session and sync engine.
struct Device {
    let store: LocalStore
    let session: SessionManager
    let engine: SyncEngine

    init(api: CaravanAPI, tables: [TableSchema] = [NotesModule.notes]) throws {
        store = try LocalStore(path: temporaryDirectory() + "/device.sqlite", tables: tables)
        session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
    }
}

func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "caravan-host-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private func now() -> String { Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000)) }
