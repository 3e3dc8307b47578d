import CaravanCore
import CaravanTesting
import CaravanPostgres
import Foundation
import Logging
import Synchronization
import Testing

/// A change-logged table the tests write to.
let notes = TableSchema("notes", columns: [Column("id", .integer, nullable: false), Column("body", .text)], primaryKey: ["id"])
/// Rows that concurrent writers read, then change (`n` counts the transactions that changed the row).
let counters = TableSchema("counters", columns: [Column("id", .integer, nullable: false), Column("n", .integer, nullable: false),
                                                 Column("writer", .text)], primaryKey: ["id"])
/// A parent row that children reference (a foreign key), and is updated while they are added.
let parents = TableSchema("parents", columns: [Column("id", .integer, nullable: false), Column("n", .integer, nullable: false)], primaryKey: ["id"])
let children = TableSchema("children", columns: [Column("id", .integer, nullable: false), Column("parent_id", .integer, nullable: false)],
                           primaryKey: ["id"], foreignKeys: [ForeignKey(["parent_id"], references: "parents", ["id"])])
let catalog = Catalog(modules: [
    SystemModule.module,
    AppModule(name: "notes", tables: [notes, counters, parents, children], migrations: [
        Migration(id: "notes-0001", sql: [.postgres: #"CREATE TABLE "notes" ("id" int8 NOT NULL, "body" text, PRIMARY KEY ("id"))"#]),
        Migration(id: "notes-0002-counters", sql: [.postgres: #"CREATE TABLE "counters" ("id" int8 NOT NULL, "n" int8 NOT NULL, "writer" text, PRIMARY KEY ("id"))"#]),
        Migration(id: "notes-0003-family", sql: [.postgres: #"""
            CREATE TABLE "parents" ("id" int8 NOT NULL, "n" int8 NOT NULL, PRIMARY KEY ("id"));
            CREATE TABLE "children" ("id" int8 NOT NULL, "parent_id" int8 NOT NULL REFERENCES "parents" ("id"), PRIMARY KEY ("id"))
            """#]),
    ]),
])

func note(_ id: Int64) -> RowValues {
    RowValues(["id": .integer(id), "body": .text("note \(id)")])
}

extension PostgresStore {
    /// Inserts `rows` into `notes` in one transaction as the service role; returns the changes it logged.
    @discardableResult
    func insertNotes(_ rows: [RowValues]) async throws -> [Change] {
        try await transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { transaction in
            for row in rows { _ = try await transaction.insert([row], into: notes, conflict: nil) }
        }.1
    }

    /// Every seq of the change log, in order.
    func allSeqs() async throws -> [Int64] {
        try await changes(after: 0, limit: 100_000).map(\.seq)
    }
}

/// A started store on a new database of the test cluster, with the system migrations and `notes`.
func makeNotesStore(connections: Int = 4) async throws -> PostgresStore {
    let store = try await Engine.makePostgresStore(connections: connections)
    _ = try await store.migrate(catalog.migrations)
    return store
}

/// Collects everything a publisher stream yields, in arrival order, until `stop()`.
final class Collector: Sendable {
    private let received: Mutex<[Change]>
    private let task: Mutex<Task<Void, Never>?>

    init(_ stream: AsyncStream<Change>) {
        received = Mutex([])
        task = Mutex(nil)
        let started = Task { [weak self] in
            for await change in stream { self?.received.withLock { $0.append(change) } }
        }
        task.withLock { $0 = started }
    }

    var changes: [Change] { received.withLock { $0 } }
    func stop() { task.withLock { $0?.cancel() } }
}

/// A change listener on `store` feeding a publisher, publishing what is committed after `seq`, with the given
/// safety-net poll (long: delivery within a test's wait then proves the wake-ups work); `stop()` ends it.
final class ListeningInstance: Sendable {
    let received: Collector
    let listener: ChangeListener
    private let task: Task<Void, any Error>

    init(on store: PostgresStore, after seq: Int64, pollInterval: Duration) {
        let publisher = ChangePublisher()
        received = Collector(publisher.subscribe())
        var configuration = ChangeListener.Configuration()
        configuration.pollInterval = pollInterval
        let listener = ChangeListener(store: store, publisher: publisher, after: seq, configuration: configuration, logger: Logger(label: "test.listener"))
        self.listener = listener
        task = Task { try await listener.run() }
    }

    /// Waits (at most 30 s) until it listens.
    func listening() async -> Bool {
        await eventually(within: .seconds(30)) { self.listener.isListening }
    }

    func stop() async {
        task.cancel()
        _ = await task.result
        received.stop()
    }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `limit`; returns whether it held.
func eventually(within limit: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// A private PostgreSQL cluster (`scripts/postgres-cluster` with its own `CARAVAN_PG_STATE`) whose server a test
/// may stop and start without disturbing the tests that share the main cluster. Needs the same PostgreSQL as the
/// main cluster, so it is skipped when `CARAVAN_TEST_DATABASE_URL` is unset.
struct ThrowawayCluster {
    let state: String
    let url: String

    /// Starts a cluster, lends it to `body`, and deletes it afterwards whatever happens.
    static func with<T>(_ body: (ThrowawayCluster) async throws -> T) async throws -> T {
        guard Engine.postgresURL != nil else {
            try Engine.skipWithoutPostgres("PostgreSQL restart test")
        }
        let state = NSTemporaryDirectory() + "caravan-pg-restart-" + UUID().uuidString.prefix(8).lowercased()
        let output = try await run("start", state: state)
        guard let line = output.split(separator: "\n").last, let range = line.range(of: "CARAVAN_TEST_DATABASE_URL=") else {
            _ = try? await run("stop", state: state)
            throw CaravanError(.internalFailure, "scripts/postgres-cluster start printed no URL", internalDetail: output)
        }
        let cluster = ThrowawayCluster(state: state, url: String(line[range.upperBound...]))
        do {
            let result = try await body(cluster)
            _ = try await run("stop", state: state)
            return result
        } catch {
            _ = try? await run("stop", state: state)
            throw error
        }
    }

    /// Stops the server (`pg_ctl stop -m fast`), keeping the data and the port.
    func pause() async throws { _ = try await Self.run("pause", state: state) }

    /// Starts the paused server again.
    func resume() async throws { _ = try await Self.run("resume", state: state) }

    /// A store on the cluster's `postgres` database that gives up waiting for a connection after `acquire`; `warm`,
    /// a server's pool (`minimumConnections` = `connections`).
    func makeStore(acquire: Duration = .seconds(1), connections: Int = 4, warm: Bool = false) async throws -> PostgresStore {
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.maximumConnections = connections
        if warm { configuration.minimumConnections = connections }
        configuration.connectionAcquireTimeout = acquire
        // Connecting is not what these tests bound (during an outage it is refused at once); a fresh cluster on a
        // machine busy with the whole suite can take seconds to accept its first connections.
        configuration.connectTimeout = .seconds(15)
        let store = PostgresStore(configuration: configuration)
        await store.start()
        // Setup, not the behaviour under test: the first lease may miss the short acquire timeout under load.
        var attempt = 1
        while true {
            do {
                _ = try await store.migrate(catalog.migrations)
                return store
            } catch let error as CaravanError where error.code == .storageUnavailable && attempt < 5 {
                attempt += 1
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Runs the cluster script on this cluster's state directory.
    private static func run(_ command: String, state: String) async throws -> String {
        try await PostgresClusterScript.run([command], state: state)
    }
}
