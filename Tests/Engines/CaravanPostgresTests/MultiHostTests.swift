import CaravanCore
import CaravanPostgres
import CaravanTesting
import Foundation
import Logging
import Testing

/// libpq's multi-host URL (`postgres://u@a:5432,b:5433/db?target_session_attrs=read-write`): parsed into ordered
/// endpoints; a store keeps the first server that qualifies, passing over one that refuses connections; with none,
/// requests fail with `storageUnavailable` in their acquire timeout and the reachability check names every server.
/// (Failover itself, a standby promoted under writes: `FailoverTests` in CaravanHostTests.)
@Suite struct MultiHostTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test func aHostListParsesInOrderWithItsTarget() throws {
        let configuration = try PostgresStoreConfiguration(
            url: "postgres://caravan:s%2Cecret@db-a:5433,db-b,[::1]:6000/app?sslmode=disable&target_session_attrs=read-write")
        #expect(configuration.endpoints == [.init(host: "db-a", port: 5433), .init(host: "db-b", port: 5432), .init(host: "::1", port: 6000)])
        #expect(configuration.host == "db-a" && configuration.port == 5433)
        #expect(configuration.targetSessionAttributes == .readWrite)
        #expect(configuration.username == "caravan" && configuration.password == "s,ecret" && configuration.database == "app")
        #expect(configuration.tlsMode == .disable)
        #expect(configuration.hostsDescription == "db-a:5433,db-b:5432,::1:6000")

        let single = try PostgresStoreConfiguration(url: "postgres://caravan@db.internal:6543/app")
        #expect(single.endpoints == [.init(host: "db.internal", port: 6543)] && single.targetSessionAttributes == .any)
        #expect(try PostgresStoreConfiguration(url: "postgres://u@a/app?target_session_attrs=primary").targetSessionAttributes == .primary)

        for bad in ["postgres://u@a:1,,b/app", "postgres://u@a:x,b/app", "postgres://u@a,b/app?target_session_attrs=standby",
                    "postgres://u@a,b/app?host=/run/postgresql"] {
            let error = #expect(throws: CaravanError.self, "\(bad)") { try PostgresStoreConfiguration(url: bad) }
            #expect(error?.code == .invalidValue)
        }
    }

    @Test func aStorePassesOverAServerThatRefusesAndFailsCleanlyWithNone() async throws {
        let base = try await makeNotesStore()
        do {
            try await passOverAndFail(base.configuration)
        } catch {
            await base.shutdown()
            throw error
        }
        await base.shutdown()
    }

    private func passOverAndFail(_ base: PostgresStoreConfiguration) async throws {
        var configuration = base
        configuration.endpoints.insert(.init(host: "127.0.0.1", port: 1), at: 0)
        configuration.targetSessionAttributes = .readWrite
        configuration.connectionAcquireTimeout = .seconds(1)
        try await PostgresStore.withRunning(configuration, logger: logger) { store in
            try await store.checkReachable(logger: logger)
            #expect(try await store.unsafeRows("SELECT inet_server_port()::text") == [[String(base.port)]])
        }

        configuration.endpoints = [.init(host: "127.0.0.1", port: 1), .init(host: "127.0.0.1", port: 2)]
        try await PostgresStore.withRunning(configuration, logger: logger) { store in
            let unreachable = await #expect(throws: CaravanError.self) { try await store.checkReachable(logger: logger) }
            #expect(unreachable?.code == .storageUnavailable)
            #expect(unreachable?.message.contains("127.0.0.1:1") == true && unreachable?.message.contains("127.0.0.1:2") == true)
            let failed = await #expect(throws: CaravanError.self) { try await store.unsafeRows("SELECT 1") }
            #expect(failed?.code == .storageUnavailable)
        }
    }
}
