public import CaravanCore
package import CaravanPostgres
import CaravanSQLite
import Foundation
public import Testing

/// The storage engines the conformance tests run against. Tests take an `Engine` argument
/// (`@Test(arguments: Engine.allCases)`) and build their store with `makeStore(migrations:)`.
public enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    public var testDescription: String { rawValue }

    /// The maintenance database URL of the test cluster (`scripts/postgres-cluster start`), or nil.
    package static var postgresURL: String? {
        ProcessInfo.processInfo.environment["CARAVAN_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A fresh, empty store: a new SQLite file, or a new Postgres database on the test cluster. Without
    /// `CARAVAN_TEST_DATABASE_URL`, a Postgres test case is cancelled (skipped) with a message saying so.
    /// The system migrations run first unless `includeSystem` is false; duplicates are skipped.
    public func makeStore(migrations: [Migration] = [], includeSystem: Bool = true) async throws -> any Store {
        let store: any Store
        let all = system(includeSystem, migrations) + migrations
        switch self {
        case .sqlite:
            let directory = NSTemporaryDirectory() + "caravan-test-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/caravan.sqlite")
        case .postgres:
            store = try await Self.makePostgresStore(cloning: all)
        }
        _ = try await store.migrate(all)
        return store
    }

    private func system(_ includeSystem: Bool, _ migrations: [Migration]) -> [Migration] {
        includeSystem ? SystemModule.migrations.filter { m in !migrations.contains(where: { $0.id == m.id }) } : []
    }

    /// How long test stores wait for a connection: the whole suite runs in parallel on a loaded machine, and
    /// every test's `CREATE DATABASE` queues on the shared admin pool, so waits of many seconds are normal there.
    static let testAcquireTimeout: Duration = .seconds(120)

    /// Skips the calling PostgreSQL test, saying loudly why — or fails it when the run requires PostgreSQL
    /// (`CARAVAN_REQUIRE_POSTGRES=1`, set by `scripts/test`: the PostgreSQL half must never be skipped silently).
    package static func skipWithoutPostgres(_ what: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Never {
        let reason = "\(what) SKIPPED: CARAVAN_TEST_DATABASE_URL is unset, so the PostgreSQL half of the suite did not run "
            + "(start a cluster with `eval \"$(scripts/postgres-cluster start)\"`, or run scripts/test)"
        if environment["CARAVAN_REQUIRE_POSTGRES"] == "1" {
            throw CaravanError(.internalFailure, reason + "; this run requires PostgreSQL (CARAVAN_REQUIRE_POSTGRES=1)")
        }
        try Test.cancel(Comment(rawValue: reason))
    }

    /// The URL of a new, empty database on the test cluster, for a whole server (`caravan serve --database`, or an
    /// in-process host) to migrate and own.
    public static func makeEmptyPostgresDatabase() async throws -> String {
        guard let url = postgresURL, var components = URLComponents(string: url) else { try skipWithoutPostgres("PostgreSQL test") }
        let name = "caravan_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try await TestCluster.admin(try PostgresStoreConfiguration(url: url)).unsafeRows("CREATE DATABASE \"\(name)\"")
        components.path = "/" + name
        guard let database = components.string else { throw CaravanError(.invalidConfiguration, "cannot rewrite \(url)") }
        return database
    }

    /// A started store on a new database of the test cluster, with a pool of `connections`. With `migrations`, the
    /// database is a copy (`CREATE DATABASE … TEMPLATE`) of a template migrated once per process with exactly those
    /// migrations, so each test skips migrating; migrating the copy again applies nothing.
    package static func makePostgresStore(connections: Int = 4, cloning migrations: [Migration] = []) async throws -> PostgresStore {
        guard let url = postgresURL else { try skipWithoutPostgres("PostgreSQL test") }
        let base = try PostgresStoreConfiguration(url: url)
        let name = "caravan_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = await TestCluster.admin(base)
        if migrations.isEmpty {
            _ = try await admin.unsafeRows("CREATE DATABASE \"\(name)\"")
        } else {
            let template = try await TestCluster.template(migrated: migrations, base: base)
            // The template's last connection may still be closing just after it was migrated ("being accessed by
            // other users"): retry briefly.
            for attempt in 1... {
                do {
                    _ = try await admin.unsafeRows("CREATE DATABASE \"\(name)\" TEMPLATE \"\(template)\"")
                    break
                } catch where attempt < 50 {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        var configuration = base.database(name)
        configuration.maximumConnections = connections
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

    /// Template databases of this process, by the migrations (ids and contents) they were migrated with.
    private var templates: [[Migration]: Task<String, any Error>] = [:]
    private let process = UUID().uuidString.prefix(8).lowercased()

    /// The name of a template database migrated with `migrations` (made on first use; no connection stays open to it,
    /// as `CREATE DATABASE … TEMPLATE` requires).
    static func template(migrated migrations: [Migration], base: PostgresStoreConfiguration) async throws -> String {
        try await shared.template(migrated: migrations, base: base).value
    }

    private func template(migrated migrations: [Migration], base: PostgresStoreConfiguration) async -> Task<String, any Error> {
        let key = migrations
        if let made = templates[key] { return made }
        let name = "caravan_template_\(process)_\(templates.count)"
        let made = Task {
            _ = try await Self.admin(base).unsafeRows("CREATE DATABASE \"\(name)\"")
            var configuration = base.database(name)
            configuration.maximumConnections = 1
            configuration.connectionAcquireTimeout = Engine.testAcquireTimeout
            let store = PostgresStore(configuration: configuration)
            await store.start()
            do {
                _ = try await store.migrate(migrations)
            } catch {
                await store.shutdown()
                throw error
            }
            await store.shutdown()
            return name
        }
        templates[key] = made
        return made
    }

    private func admin(_ configuration: PostgresStoreConfiguration) async -> PostgresStore {
        if let store { return store }
        var configuration = configuration
        configuration.maximumConnections = 2
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
    package static func makeUnreachablePostgresStore(acquireTimeout: Duration = .seconds(1)) async throws -> PostgresStore {
        var configuration = try PostgresStoreConfiguration(url: "postgres://caravan@127.0.0.1:1/caravan?sslmode=disable")
        configuration.connectionAcquireTimeout = acquireTimeout
        configuration.connectTimeout = acquireTimeout
        configuration.maximumConnections = 2
        let store = PostgresStore(configuration: configuration)
        await store.start()
        return store
    }
}
