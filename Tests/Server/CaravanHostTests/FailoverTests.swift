import CaravanClient
import CaravanCore
import CaravanHost
import CaravanPostgres
import CaravanTesting
import Foundation
import Logging
import Notes
import ServiceLifecycle
import Synchronization
import Testing

/// A primary and its synchronous standby on loopback, a server on libpq's multi-host URL naming both
/// (`target_session_attrs=read-write`), REST inserts running all along: the primary crashes (`pg_ctl stop -m
/// immediate`), the standby is promoted, and writes resume there by themselves. Every insert answered 201 is on the
/// promoted standby; every other answer meanwhile is a clean 503 `PGRST001`; a device that pulled before the crash
/// pulls after it with no 409 and no refetch, its cursor's epoch the same and its `seq` never going back, and ends
/// with the server's rows. A change listener on the same URL (another instance, as it were) delivers every
/// acknowledged write once, in rising `seq`, across the failover.
@Suite struct FailoverTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test func aPromotedSynchronousStandbyTakesOverLosingNoAcknowledgedWrite() async throws {
        try await ReplicaPair.with { pair in
            let database = "caravan_failover"
            try await pair.primarySQL("CREATE DATABASE \(database)")
            try await pair.makeSynchronous()
            let settings = ["port": "0", "data_dir": temporaryDirectory(), "database_url": pair.bothURL(database), "db_pool_acquire_timeout": "5s"]
            let transport = RecordingTransport()
            do {
                try await CaravanHost.withServing(settings, apps: [NotesModule.module], logger: logger) { serving in
                    let watcher = try await LogWatcher(url: pair.bothURL(database), logger: logger)
                    do {
                        try await failOver(pair, serving: serving, transport: transport, watcher: watcher)
                    } catch {
                        await watcher.stop()
                        throw error
                    }
                    await watcher.stop()
                }
            } catch {
                try await transport.base.shutdown()
                throw error
            }
            try await transport.base.shutdown()
        }
    }

    private func failOver(_ pair: ReplicaPair, serving: CaravanHost.Serving, transport: RecordingTransport, watcher: LogWatcher) async throws {
        let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
        let store = try LocalStore(path: temporaryDirectory() + "/device.sqlite", tables: [NotesModule.notes])
        let manager = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        let device = SyncEngine(store: store, api: api, session: manager, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
        let user = try await manager.signUp(email: "failover@example.com", password: "correct horse battery").userID
        let writer = Writer(serving: serving, transport: transport, owner: user)

        try await withThrowingTaskGroup(of: Void.self) { writing in
            writing.addTask { await writer.run() }
            defer { writer.stop() }
            #expect(await eventually(within: .seconds(60)) { writer.acknowledged.count >= 20 }, "the writes did not start")
            _ = try await device.sync(tables: ["notes"])
            #expect(try store.rows("notes").count >= 20)

            try await pair.crashPrimary()
            try await pair.promoteStandby()
            let promoted = writer.acknowledged.count
            #expect(await eventually(within: .seconds(60)) { writer.acknowledged.count >= promoted + 10 }, "the writes did not resume on the promoted standby")
            _ = try await device.sync(tables: ["notes"])
            #expect(await eventually(within: .seconds(60)) { writer.acknowledged.count >= promoted + 20 })
            writer.stop()
            try await writing.waitForAll()
        }

        // Every acknowledged write is on the promoted standby (read through the server, now on it).
        let stored = Set(try await writer.titles())
        let lost = Set(writer.acknowledged).subtracting(stored)
        #expect(lost.isEmpty, "acknowledged writes lost: \(lost.sorted())")
        #expect(writer.refusals.allSatisfy { $0 == "503 PGRST001" }, "\(writer.refusals)")

        // The device pulls on from its cursor: no reset, the same epoch, a seq that never goes back; it converges.
        _ = try await device.sync(tables: ["notes"])
        let pulls = transport.exchanges().filter { $0.url.contains("/sync/v1/pull") }
        #expect(pulls.count >= 3 && pulls.allSatisfy { $0.status == 200 && !$0.url.contains("refetch=") }, "\(pulls)")
        let cursors = try pulls.compactMap { try Self.cursor(in: $0.url) }
        #expect(Set(cursors.map(\.epoch)).count == 1, "\(cursors)")
        #expect(cursors.count >= 2 && cursors.map(\.seq) == cursors.map(\.seq).sorted() && cursors[0].seq < cursors[cursors.count - 1].seq, "\(cursors)")
        // The listener followed the log onto the promoted standby: every acknowledged write once, the seq rising.
        #expect(await eventually(within: .seconds(60)) { Set(writer.acknowledged).isSubset(of: Set(watcher.delivered.map(\.title))) },
                "the change listener missed acknowledged writes")
        let delivered = watcher.delivered
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0.seq < $1.seq }, "the log went backwards or repeated: \(delivered.map(\.seq))")
        let local = try store.rows("notes").compactMap { row -> String? in if case .string(let title)? = row["title"] { title } else { nil } }
        #expect(local.sorted() == stored.sorted())
    }

    /// The epoch and `seq` of the pull URL's cursor (nil for a first pull).
    static func cursor(in url: String) throws -> (epoch: String, seq: Int64)? {
        guard let text = URLComponents(string: url)?.queryItems?.first(where: { $0.name == "cursor" })?.value else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let json = try JSONParser.parse(bytes: Array(try #require(Data(base64Encoded: base64))))
        guard case .string(let epoch)? = json["e"], case .integer(let seq)? = json["s"] else { throw CaravanError(.invalidValue, "a cursor of another shape") }
        return (epoch, seq)
    }
}

/// Inserts notes one after another until stopped, as the service role, keeping the titles answered 201 and what
/// every other answer was.
private final class Writer: Sendable {
    let serving: CaravanHost.Serving
    let transport: RecordingTransport
    let owner: String
    private let outcomes = Mutex<(acknowledged: [String], refusals: [String])>(([], []))
    private let stopped = Mutex(false)

    init(serving: CaravanHost.Serving, transport: RecordingTransport, owner: String) {
        self.serving = serving
        self.transport = transport
        self.owner = owner
    }

    var acknowledged: [String] { outcomes.withLock { $0.acknowledged } }
    var refusals: [String] { outcomes.withLock { $0.refusals } }

    private var headers: [(String, String)] {
        [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
    }

    /// Ends `run()` after the insert under way (whose answer is then known).
    func stop() { stopped.withLock { $0 = true } }

    func run() async {
        var number = 0
        while !stopped.withLock({ $0 }) {
            number += 1
            let title = "write-\(number)"
            let body = #"{"owner":"\#(owner)","title":"\#(title)"}"#
            do {
                let response = try await transport.send(TransportRequest(method: "POST", url: serving.baseURL + "/rest/v1/notes", headers: headers,
                                                                         body: Array(body.utf8)))
                let code: String? = if case .string(let code)? = try? JSONParser.parse(bytes: response.body)["code"] { code } else { nil }
                outcomes.withLock { outcomes in
                    if response.status == 201 { outcomes.acknowledged.append(title) } else { outcomes.refusals.append("\(response.status) \(code ?? "-")") }
                }
            } catch {
                outcomes.withLock { $0.refusals.append("transport: \(error)") }
            }
        }
    }

    /// Every note's title, as the server reads them now.
    func titles() async throws -> [String] {
        let response = try await transport.send(TransportRequest(method: "GET", url: serving.baseURL + "/rest/v1/notes?select=title", headers: headers))
        #expect(response.status == 200)
        guard case .array(let rows) = try JSONParser.parse(bytes: response.body) else { return [] }
        return rows.compactMap { if case .string(let title)? = $0["title"] { title } else { nil } }
    }
}

/// A store and a change listener of their own on the failover URL, as another instance would run them, collecting
/// each note change delivered (its `seq` and title) until stopped.
private final class LogWatcher: Sendable {
    private let store: PostgresStore
    private let tasks: [Task<Void, Never>]
    private let received: Received

    private final class Received: Sendable {
        let changes = Mutex<[(seq: Int64, title: String)]>([])
    }

    init(url: String, logger: Logger) async throws {
        let store = PostgresStore(configuration: try PostgresStoreConfiguration(url: url), logger: logger)
        await store.start()
        let publisher = ChangePublisher()
        let changes = publisher.subscribe()
        let listener = ChangeListener(store: store, publisher: publisher, after: 0, logger: logger)
        let received = Received()
        self.received = received
        self.store = store
        tasks = [
            Task { try? await listener.run() },
            Task {
                for await change in changes where change.table == "notes" {
                    guard let record = change.record, case .string(let title)? = try? JSONParser.parse(bytes: Array(record.utf8))["title"] else { continue }
                    received.changes.withLock { $0.append((change.seq, title)) }
                }
            },
        ]
    }

    var delivered: [(seq: Int64, title: String)] { received.changes.withLock { $0 } }

    func stop() async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await store.shutdown()
    }
}

