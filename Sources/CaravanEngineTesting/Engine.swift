import CaravanCore
import CaravanPostgres
import CaravanSQLite
import Foundation
import Testing

/// The storage engines the conformance tests run against. Tests take an `Engine` argument
/// (`@Test(arguments: Engine.allCases)`) and build their store with `makeStore(migrations:)`.
public enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    public var testDescription: String { rawValue }

    /// The maintenance database URL of the test cluster (`scripts/postgres-cluster start`), or nil.
    public static var postgresURL: String? {
        ProcessInfo.processInfo.environment["CARAVAN_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A fresh, empty store: a new SQLite file, or a new Postgres database on the test cluster. Without
    /// `CARAVAN_TEST_DATABASE_URL`, a Postgres test case is cancelled (skipped) with a message saying so.
    /// The system migrations run first unless `includeSystem` is false; duplicates are skipped.
    public func makeStore(migrations: [Migration] = [], includeSystem: Bool = true) async throws -> any Store {
        let store: any Store
        switch self {
        case .sqlite:
            let directory = NSTemporaryDirectory() + "caravan-test-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/caravan.sqlite")
        case .postgres:
            store = try await Self.makePostgresStore()
        }
        let system = includeSystem ? SystemModule.migrations.filter { m in !migrations.contains(where: { $0.id == m.id }) } : []
        _ = try await store.migrate(system + migrations)
        return store
    }

    /// How long test stores wait for a connection: the whole suite runs in parallel on a loaded machine, and
    /// every test's `CREATE DATABASE` queues on the shared admin pool, so waits of many seconds are normal there.
    static let testAcquireTimeout: Duration = .seconds(120)

    /// A started store on a new database of the test cluster, with a pool of `connections`.
    public static func makePostgresStore(connections: Int = 4) async throws -> PostgresStore {
        guard let url = postgresURL else {
            try Test.cancel("PostgreSQL tests skipped: CARAVAN_TEST_DATABASE_URL is unset (scripts/postgres-cluster start)")
        }
        let base = try PostgresStoreConfiguration(url: url)
        let name = "caravan_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try await TestCluster.admin(base).unsafeRows("CREATE DATABASE \"\(name)\"")
        var configuration = base.database(name)
        configuration.maximumConnections = connections
        configuration.transactionThreads = connections
        configuration.connectionAcquireTimeout = testAcquireTimeout
        let store = PostgresStore(configuration: configuration)
        await store.start()
        return store
    }
}

/// One connection pool on the cluster's maintenance database, shared by every test of the process.
actor TestCluster {
    private static let shared = TestCluster()
    private var store: PostgresStore?

    static func admin(_ configuration: PostgresStoreConfiguration) async -> PostgresStore {
        await shared.admin(configuration)
    }

    private func admin(_ configuration: PostgresStoreConfiguration) async -> PostgresStore {
        if let store { return store }
        var configuration = configuration
        configuration.maximumConnections = 2
        configuration.transactionThreads = 1
        configuration.connectionAcquireTimeout = Engine.testAcquireTimeout
        let admin = PostgresStore(configuration: configuration)
        store = admin
        await admin.start()
        return admin
    }
}

extension Engine {
    /// A started store whose server does not exist (loopback port 1, where nothing listens): every operation
    /// fails with `storageUnavailable` after `acquireTimeout`. Needs no cluster.
    public static func makeUnreachablePostgresStore(acquireTimeout: Duration = .seconds(1)) async throws -> PostgresStore {
        var configuration = try PostgresStoreConfiguration(url: "postgres://caravan@127.0.0.1:1/caravan?sslmode=disable")
        configuration.connectionAcquireTimeout = acquireTimeout
        configuration.connectTimeout = acquireTimeout
        configuration.maximumConnections = 2
        configuration.transactionThreads = 1
        let store = PostgresStore(configuration: configuration)
        await store.start()
        return store
    }
}
