import CaravanClient
import CaravanCore
import CaravanHost
import CaravanPostgres
import CaravanRealtime
import CaravanServer
import CaravanTesting
import Foundation
import Logging
import Notes
import ServiceLifecycle
import Synchronization
import Testing

/// A primary and a streaming standby (`scripts/postgres-cluster standby`: `pg_basebackup -R`) on loopback, a host
/// reading from the standby: REST reads, read-only RPC calls, sync pulls' snapshot pages and realtime's membership
/// reads go there; a read the standby refuses as the request's own error is not run again on the primary; a read
/// carrying a write's consistency token — or made by the caller of the write, token or not — sees the write even
/// while the standby applies WAL 5 s late, a lagging standby is taken out and put back, a stopped one is taken out
/// while reads still succeed.
@Suite struct ReadReplicaTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test func readsGoToTheReplicaTokensSeeWritesLaggingAndStoppedReplicasAreTakenOut() async throws {
        try await ReplicaPair.with { pair in
            let database = "caravan_replicas"
            try await pair.primarySQL("CREATE DATABASE \(database)")
            let settings = ["port": "0", "data_dir": temporaryDirectory(), "database_url": pair.primaryURL(database),
                            "read_replicas": pair.standbyURL(database), "read_replica_check_interval": "100ms",
                            "read_replica_max_lag": "60s", "read_replica_token_wait": "200ms"]
            let host = try CaravanHost(configuration: .init(settings: settings), apps: [NotesModule.module], logger: logger)
            // A second instance on the same database whose reads see every commit made before them.
            var strongSettings = settings
            strongSettings["data_dir"] = temporaryDirectory()
            strongSettings["read_replica_consistency"] = "strong"
            let strongHost = try CaravanHost(configuration: .init(settings: strongSettings), apps: [NotesModule.module], logger: logger)
            let group = ServiceGroup(configuration: .init(services: [host, strongHost], logger: logger))
            try await AsyncHTTPClientTransport.using { transport in
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    do {
                        let rest = try await RESTCaller(serving: host.serving(), transport: transport)
                        let strong = try await RESTCaller(serving: strongHost.serving(), transport: transport)
                        try await checkReplicaReads(rest, strong: strong, pair: pair, database: database)
                        // The standby stops: reads still succeed (the primary serves them).
                        try await pair.stopStandby()
                        for attempt in 0..<3 {
                            #expect(try await rest.titles(matching: "after-stop-\(attempt)", token: nil) == [])
                        }
                    } catch {
                        await group.triggerGracefulShutdown()
                        try? await tasks.waitForAll()
                        throw error
                    }
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
            try await checkLagBound(pair, database: database)
        }
    }

    /// Reads reach the standby; under a 5 s apply delay, a read with the write's token sees it, one without does not.
    private func checkReplicaReads(_ rest: RESTCaller, strong: RESTCaller, pair: ReplicaPair, database: String) async throws {
        // The standby logs every statement: a read it serves leaves its filter value in its log.
        try await pair.standbySQL("ALTER SYSTEM SET log_statement = 'all'")
        try await pair.standbySQL("SELECT pg_reload_conf()")
        var attempt = 0
        let served = await eventually(within: .seconds(20)) {
            attempt += 1
            let marker = "replica-marker-\(attempt)"
            _ = try? await rest.titles(matching: marker, token: nil)
            return pair.standbyLog().contains(marker)
        }
        #expect(served, "no REST read reached the standby")
        try await checkRoutes(rest, pair: pair)

        try await pair.standbySQL("ALTER SYSTEM SET recovery_min_apply_delay = '5s'")
        try await pair.standbySQL("SELECT pg_reload_conf()")
        let user = try await rest.signedInUser(email: "reader@example.com")
        // A caller without a token that has written nothing (the service role) gets the (5 s late) standby: the
        // user's write just made is not there yet. (A read the standby did not serve — its log lacks the title —
        // proves nothing: under load the checker may have the primary serve.)
        var servedByStandby = 0
        for attempt in 0..<5 where servedByStandby == 0 {
            let title = "unseen-\(attempt)"
            _ = try await user.insert(title: title)
            let seen = try await rest.titles(matching: title, token: nil)
            guard pair.standbyLog().contains(title) else { continue }
            servedByStandby += 1
            #expect(seen == [], "the standby, 5 s behind, answered another caller's read with a write it had not replayed")
        }
        #expect(servedByStandby == 1, "no read without the token reached the standby")
        // With read_replica_consistency=strong, another instance's caller that wrote nothing sees the user's write at
        // once, token or not.
        for round in 0..<2 {
            let title = "strong-\(round)"
            _ = try await user.insert(title: title)
            #expect(try await strong.titles(matching: title, token: nil) == [title], "a strong read missed a commit made before it")
        }
        // A caller that does not send the token back (supabase-py, supabase-js) still reads its own writes: the
        // instance remembers each caller's latest write (a signed-in user here, the service role above).
        var lastOwn = ""
        for round in 0..<3 {
            let title = "own-\(round)"
            lastOwn = try await user.insert(title: title)
            #expect(try await user.titles(matching: title, token: nil) == [title], "a caller without the token missed its own write")
        }
        // Every note so far, read with the user's last token: the count the RPC calls below start from.
        let notes = try await rest.get("/rest/v1/notes?select=title", token: lastOwn)
        guard case .array(let rows) = try JSONParser.parse(bytes: Array(notes.body.utf8)) else {
            Issue.record("no notes list: \(notes.body)")
            return
        }
        // A read carrying a write's token sees it, every time.
        for round in 0..<5 {
            let title = "written-\(round)"
            let token = try await rest.insert(title: title)
            #expect(ConsistencyToken(header: token) != nil)
            #expect(try await rest.titles(matching: title, token: token) == [title])
            // A read-only RPC call with the token sees the write too.
            let counted = try await rest.get("/rest/v1/rpc/count_notes", token: token)
            #expect(counted.status == 200 && counted.body == "\(rows.count + round + 1)", "\(counted.body)")
        }
    }

    /// A read-only RPC call and a sync pull's snapshot page run on the standby; a read the standby fails with the
    /// request's own error (a regular expression PostgreSQL cannot compile) is answered at once (400), never run again
    /// on the primary.
    private func checkRoutes(_ rest: RESTCaller, pair: ReplicaPair) async throws {
        // The call's transaction, always rolled back, is the only ROLLBACK the standby sees.
        let rollbacks = { pair.standbyLog().components(separatedBy: "ROLLBACK").count }
        let before = rollbacks()
        let called = await eventually(within: .seconds(20)) {
            let answer = try? await rest.get("/rest/v1/rpc/count_notes")
            #expect(answer?.status == 200 && answer?.body == "0")
            return rollbacks() > before
        }
        #expect(called, "no read-only RPC call reached the standby")

        var attempt = 0
        let pulled = await eventually(within: .seconds(20)) {
            attempt += 1
            let marker = "pull-marker-\(attempt)"
            let answer = try? await rest.get("/sync/v1/pull?tables=notes&notes.title=eq.\(marker)")
            #expect(answer?.status == 200, "\(answer?.body ?? "")")
            return pair.standbyLog().contains(marker)
        }
        #expect(pulled, "no sync snapshot page reached the standby")

        // PostgreSQL refuses the pattern while planning, before the statement is logged: both servers log a failed
        // statement's parameters instead.
        for sql in ["ALTER SYSTEM SET log_parameter_max_length_on_error = -1", "SELECT pg_reload_conf()"] {
            try await pair.primarySQL(sql)
            try await pair.standbySQL(sql)
        }
        var markers: [String] = []
        let refused = await eventually(within: .seconds(20)) {
            attempt += 1
            // An atomic group: ICU (Caravan's own check) takes it, PostgreSQL's regular expressions refuse it (2201B).
            let marker = "regex-marker-\(attempt)-end"
            markers.append(marker)
            let answer = try? await rest.get("/rest/v1/notes?select=title&title=match.(%3F%3E\(marker))")
            #expect(answer?.status == 400, "\(answer?.body ?? "")")
            return pair.standbyLog().contains(marker)
        }
        #expect(refused, "no read with a bad regular expression reached the standby")
        let standbyLog = pair.standbyLog(), primaryLog = pair.primaryLog()
        let again = markers.filter { standbyLog.contains($0) && primaryLog.contains($0) }
        #expect(again.isEmpty, "reads the standby refused ran again on the primary: \(again)")
    }

    /// A checker with a clock the test moves: the delayed standby falls past a 1 s bound and is taken out; without
    /// the delay it catches up and is put back.
    private func checkLagBound(_ pair: ReplicaPair, database: String) async throws {
        try await pair.startStandbyAgain()
        var configuration = try PostgresStoreConfiguration(url: pair.primaryURL(database))
        var replica = try PostgresStoreConfiguration(url: pair.standbyURL(database))
        replica.connectionAcquireTimeout = .seconds(1)
        replica.connectTimeout = .seconds(1)
        configuration.readReplicas = [replica]
        configuration.readReplicaSettings.maxLag = .seconds(1)
        try await PostgresStore.withRunning(configuration, logger: logger) { store in
            let clock = StepClock()
            let checker = try #require(store.readReplicaChecker(clock: clock))
            let caughtUp = await eventually(within: .seconds(20)) {
                await checker.check()
                return store.readReplicasInService == 1
            }
            #expect(caughtUp, "the standby never came into service")
            // A write the standby holds back for 5 s, seen by the checker now and 2 s (on its clock) later.
            _ = try await store.unsafeRows("CREATE TABLE lag_marker (n int)")
            await checker.check()
            clock.advance(by: .seconds(2))
            await checker.check()
            #expect(store.readReplicasInService == 0)
            try await pair.standbySQL("ALTER SYSTEM RESET recovery_min_apply_delay")
            try await pair.standbySQL("SELECT pg_reload_conf()")
            let back = await eventually(within: .seconds(20)) {
                await checker.check()
                return store.readReplicasInService == 1
            }
            #expect(back, "the standby did not come back once it caught up")
            // Realtime's membership reads: each round's reader reads on the standby once it has replayed the
            // primary's position at the round's start.
            let title = try NotesModule.notes.requireColumn("title")
            var round = 0
            let asked = await eventually(within: .seconds(20)) {
                round += 1
                let marker = "membership-marker-\(round)"
                let exists = try? await StoreMembershipReader(store: store).forRound().exists(in: NotesModule.notes, where: .compare(title, .eq, .text(marker)))
                #expect(exists == false)
                return pair.standbyLog().contains(marker)
            }
            #expect(asked, "no membership read reached the standby")
            try await pair.stopStandby()
            await checker.check()
            #expect(store.readReplicasInService == 0)
        }
    }
}

/// `/rest/v1/notes` as the service role (or a signed-in user), over a real transport.
private struct RESTCaller {
    let baseURL: String
    let key: String
    let transport: AsyncHTTPClientTransport
    /// The user's access token and id; nil: the service role.
    var user: (token: String, id: String)?

    init(serving: CaravanHost.Serving, transport: AsyncHTTPClientTransport) {
        baseURL = serving.baseURL
        key = serving.serviceRoleKey
        self.transport = transport
    }

    private var headers: [(String, String)] { [("apikey", key), ("Authorization", "Bearer \(user?.token ?? key)")] }

    /// A caller signed in as a new user (`POST /auth/v1/signup`).
    func signedInUser(email: String) async throws -> RESTCaller {
        let body = #"{"email":"\#(email)","password":"correct horse battery"}"#
        let response = try await transport.send(TransportRequest(method: "POST", url: baseURL + "/auth/v1/signup",
                                                                 headers: [("apikey", key), ("Content-Type", "application/json")], body: Array(body.utf8)))
        #expect(response.status == 200)
        let session = try JSONParser.parse(bytes: response.body)
        guard case .string(let token)? = session["access_token"], case .string(let id)? = session["user"]?["id"] else {
            throw CaravanError(.invalidValue, "no session in the signup answer")
        }
        var caller = self
        caller.user = (token, id)
        return caller
    }

    /// Inserts a note; returns the answer's consistency token.
    func insert(title: String) async throws -> String {
        let body = #"{"owner":"\#(user?.id ?? "00000000-0000-4000-8000-000000000001")","title":"\#(title)"}"#
        let response = try await transport.send(TransportRequest(method: "POST", url: baseURL + "/rest/v1/notes",
                                                                 headers: headers + [("Content-Type", "application/json")], body: Array(body.utf8)))
        #expect(response.status == 201)
        return try #require(response.header(ConsistencyToken.headerName))
    }

    /// A `GET` of `path` (with `token` when given): the status and the body.
    func get(_ path: String, token: String? = nil) async throws -> (status: Int, body: String) {
        let response = try await transport.send(TransportRequest(method: "GET", url: baseURL + path,
                                                                 headers: headers + (token.map { [(ConsistencyToken.headerName, $0)] } ?? [])))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// The titles of the notes titled `title`, read with `token` when given.
    func titles(matching title: String, token: String?) async throws -> [String] {
        let response = try await transport.send(TransportRequest(method: "GET", url: baseURL + "/rest/v1/notes?select=title&title=eq.\(title)",
                                                                 headers: headers + (token.map { [(ConsistencyToken.headerName, $0)] } ?? [])))
        #expect(response.status == 200)
        guard case .array(let rows) = try JSONParser.parse(bytes: response.body) else { return [] }
        return rows.compactMap { if case .string(let title)? = $0["title"] { title } else { nil } }
    }
}

/// A clock that moves only when the test moves it; sleeping on it returns at once.
private final class StepClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))
    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws { await Task.yield() }
    func advance(by duration: Duration) { current.withLock { $0.offset += duration } }
}

/// Checks `condition` every 50 ms until it holds, for at most `limit`; whether it held.
func eventually(within limit: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
