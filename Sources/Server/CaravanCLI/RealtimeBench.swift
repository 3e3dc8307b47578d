import ArgumentParser
import AsyncHTTPClient
package import CaravanCore
import CaravanHost
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// `caravan bench realtime`: the realtime load harness of BENCHMARKS.md. It creates its users, opens `--sockets`
/// subscribers across them on the `favorites` table (owner policy), runs `--writers` HTTP keep-alive writers inserting
/// favorites as those users for `--seconds`, waits for the events to drain, and prints one JSON object: delivered
/// events/s, expected = received, duplicates, missing, commit → receipt and send → receipt latencies, and with
/// `--server-pid` the server's CPU seconds and peak RSS. `--target pocketbase` drives PocketBase's realtime (SSE) alike.
struct RealtimeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime",
        abstract: "Drive a running server's realtime with subscribers and writers; print delivered events/s and latencies as JSON.",
        discussion: """
            Caravan: the places app's `favorites`; --service-key is the service_role key (users are created through \
            the admin API and signed in with a password: raise auth_rate_limit_sign_in above --users past 30). \
            PocketBase: --superuser EMAIL:PASSWORD (`pocketbase superuser upsert`); the harness creates the favorites \
            collection with the same owner rule if it is missing.
            """)

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.") var url: String
    @Option(name: .customLong("write-url"), help: "Where the writers write (Caravan; another instance on the same database); --url by default.") var writeURL: String?
    @Option(name: .customLong("service-key"), help: "Caravan's service_role key.") var serviceKey: String?
    @Option(help: "PocketBase's superuser as EMAIL:PASSWORD (--target pocketbase).") var superuser: String?
    @Option(help: "Subscribed sockets (SSE clients for PocketBase).") var sockets = 100
    @Option(help: "Users the sockets and the rows are spread across.") var users = 10
    @Option(help: "Concurrent writers, each one HTTP keep-alive connection.") var writers = 4
    @Option(help: "Seconds of writing.") var seconds: Double = 10
    @Option(help: "Rows per write request (one transaction; PocketBase: /api/batch).") var batch = 1
    @Option(help: "Phoenix protocol version of the sockets: 1.0.0 or 2.0.0 (Caravan).") var vsn = "1.0.0"
    @Option(name: .customLong("server-pid"), help: "The server's process id: its CPU seconds and peak RSS are reported.") var serverPID: Int32?
    @Option(help: "caravan or pocketbase.") var target: RealtimeBenchTarget = .caravan
    @Option(help: "Places created for the run (Caravan; each user favorites a place once, so rows per user ≤ this).") var places = 2000
    @Option(help: "Seconds to wait after the writers stop for the last events.") var drain: Double = 10
    @Flag(help: "Hold --sockets idle subscribed sockets for --seconds (no writers): the server's memory per socket and idle CPU.") var idle = false
    @Option(help: "Seconds between a socket's heartbeats (supabase-js sends one every 25 s).") var heartbeat: Double = 25
    @Option(name: .customLong("open-batch"), help: "Sockets opened at once; the next batch opens when these have joined.") var openBatch = 500

    func validate() throws {
        guard sockets > 0, users > 0, writers > 0, batch > 0, places > 0, seconds > 0, heartbeat > 0, openBatch > 0 else {
            throw ValidationError("--sockets, --users, --writers, --batch, --places, --seconds, --heartbeat and --open-batch must be positive")
        }
        guard vsn == "1.0.0" || vsn == "2.0.0" else { throw ValidationError("--vsn is 1.0.0 or 2.0.0") }
        switch target {
        case .caravan: guard serviceKey != nil else { throw ValidationError("--target caravan needs --service-key") }
        case .pocketbase: guard superuser?.contains(":") == true else { throw ValidationError("--target pocketbase needs --superuser EMAIL:PASSWORD") }
        }
    }

    func run() async throws {
        _ = DescriptorLimit.raiseSoftLimit()
        let options = RealtimeBenchOptions(url: url, target: target, serviceKey: serviceKey ?? "", superuser: superuser ?? "", sockets: sockets,
                                           users: users, writers: writers, seconds: seconds, batch: batch, vsn: vsn, serverPID: serverPID,
                                           places: places, drain: drain, idle: idle, heartbeat: heartbeat, openBatch: openBatch,
                                           writeURL: writeURL)
        let result = try await RealtimeLoad.run(options, progress: { writeStandardError("caravan bench realtime: \($0)\n") })
        writeStandardOutput(result.jsonText + "\n")
    }
}

package enum RealtimeBenchTarget: String, ExpressibleByArgument, Sendable {
    case caravan, pocketbase
}

package struct RealtimeBenchOptions: Sendable {
    package var url: String
    package var target: RealtimeBenchTarget
    package var serviceKey: String
    package var superuser: String
    package var sockets: Int
    package var users: Int
    package var writers: Int
    package var seconds: Double
    package var batch: Int
    package var vsn: String
    package var serverPID: Int32?
    package var places: Int
    package var drain: Double
    /// Hold the sockets idle for `seconds` instead of writing (`RealtimeIdleFigures`).
    package var idle: Bool
    /// Seconds between a socket's heartbeats.
    package var heartbeat: Double
    /// Sockets opened at once.
    package var openBatch: Int
    /// `--idle`: seconds between the last join and the first memory reading.
    package var settle: Double
    /// Where the writers write (`url` unless another instance is named).
    package var writeURL: String

    package init(url: String, target: RealtimeBenchTarget, serviceKey: String = "", superuser: String = "", sockets: Int, users: Int, writers: Int,
                 seconds: Double, batch: Int = 1, vsn: String = "1.0.0", serverPID: Int32? = nil, places: Int = 2000, drain: Double = 10,
                 idle: Bool = false, heartbeat: Double = 25, openBatch: Int = 500, settle: Double = 3, writeURL: String? = nil) {
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.target = target
        self.serviceKey = serviceKey
        self.superuser = superuser
        self.sockets = sockets
        self.users = users
        self.writers = writers
        self.seconds = seconds
        self.batch = batch
        self.vsn = vsn
        self.serverPID = serverPID
        self.places = places
        self.drain = drain
        self.idle = idle
        self.heartbeat = heartbeat
        self.openBatch = openBatch
        self.settle = settle
        let writes = writeURL ?? url
        self.writeURL = writes.hasSuffix("/") ? String(writes.dropLast()) : writes
    }
}

/// A failure of the harness (a refused setup request, a subscriber that could not join, a refused write).
package struct RealtimeBenchFailure: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// One user of the run: its id and access token.
struct BenchUser: Sendable {
    let id: String
    let token: String
}

/// What differs between the targets: setting up, subscribing one socket, writing rows.
protocol RealtimeTargetDriver: Sendable {
    /// Creates the users (and whatever the rows need) and returns them.
    func prepare(_ http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> [BenchUser]
    /// Subscribes `socket` as `user`; calls `run.joined()` once subscribed and `run.receipt` per event, until
    /// `run.stopped(socket)` fires.
    func subscribe(socket: Int, user: BenchUser, run: RealtimeRun) async throws
    /// Writes `rows` (id, owner, send time) in one request as their owner; throws unless the server accepted them.
    func write(_ rows: [BenchRow], as user: BenchUser, counter: Int) async throws
    /// A fresh row id the target accepts.
    func newRowID() -> String
}

struct BenchRow: Sendable {
    let id: String
    let owner: String
    let place: Int
    let sentAt: Double
}

/// A one-shot signal that any number of tasks can wait for.
final class BenchSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var fired: Bool { state.withLock { $0.fired } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// The shared state of one run: the ledger, the subscribers' readiness, their stop signals and the first failure.
final class RealtimeRun: Sendable {
    let ledger = Mutex(RealtimeDeliveryLedger())
    let ready = BenchSignal()
    private let stops: [BenchSignal]
    private let joinedCount = Mutex(0)
    private let failure = Mutex<(any Error)?>(nil)
    private let stopping = Atomic(false)
    private let systemErrors = Atomic(0)

    init(sockets: Int) {
        stops = (0..<sockets).map { _ in BenchSignal() }
    }

    /// Subscribers joined so far.
    var joinedSoFar: Int { joinedCount.withLock { $0 } }

    /// Waits until `count` subscribers have joined or the run stopped.
    func waitJoined(_ count: Int) async {
        while joinedSoFar < count, !isStopping {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func joined() {
        let all = joinedCount.withLock { count -> Bool in
            count += 1
            return count == stops.count
        }
        if all { ready.fire() }
    }

    /// A receipt of `row` by `socket` at `receivedAt` (seconds since 1970), its commit and send times when known.
    func receipt(socket: Int, row: String, receivedAt: Double, committedAt: Double?, sentAt: Double?) {
        let commit = committedAt.map { (receivedAt - $0) * 1000 }
        let send = sentAt.map { (receivedAt - $0) * 1000 }
        ledger.withLock { $0.received(socket: socket, row: row, commitToReceiptMs: commit, sendToReceiptMs: send) }
    }

    func systemError() { systemErrors.add(1, ordering: .relaxed) }
    var systemErrorCount: Int { systemErrors.load(ordering: .relaxed) }

    /// The subscriber of `socket` waits on this; it fires when the run stops (or fails).
    func stopped(_ socket: Int) -> BenchSignal { stops[socket] }
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        for stop in stops { stop.fire() }
        ready.fire()
    }

    /// Records the first failure and stops the run.
    func fail(_ error: any Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        stop()
    }

    func throwIfFailed() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

package enum RealtimeLoad {
    /// Runs the harness against `options.url` and returns the JSON object of its figures.
    package static func run(_ options: RealtimeBenchOptions, progress: @escaping @Sendable (String) -> Void) async throws -> JSONValue {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(120))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, options.writers))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        // PocketBase's subscribers hold one SSE response each: their own client, as many connections as sockets.
        var streaming = HTTPClient.Configuration()
        streaming.timeout = .init(connect: .seconds(30))
        streaming.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.sockets + 8)
        let sse = HTTPClient(eventLoopGroupProvider: .singleton, configuration: streaming)
        let result: JSONValue
        do {
            result = try await run(options, http: http, sse: sse, progress: progress)
        } catch {
            try await shutdown(http, sse)
            throw error
        }
        try await shutdown(http, sse)
        return result
    }

    private static func shutdown(_ clients: HTTPClient...) async throws {
        var first: (any Error)?
        for client in clients {
            do { try await client.shutdown() } catch { first = first ?? error }
        }
        if let first { throw first }
    }

    private static func run(_ options: RealtimeBenchOptions, http: HTTPClient, sse: HTTPClient,
                            progress: @escaping @Sendable (String) -> Void) async throws -> JSONValue {
        let runID = String(UInt32.random(in: .min ... .max), radix: 36)
        let driver: any RealtimeTargetDriver = switch options.target {
        case .caravan: CaravanRealtimeDriver(options: options, runID: runID, http: http)
        case .pocketbase: PocketBaseRealtimeDriver(options: options, runID: runID, http: http, sse: sse)
        }
        let users = try await driver.prepare(http, progress: progress)
        let run = RealtimeRun(sockets: options.sockets)
        let assigned = (0..<options.sockets).map { users[$0 % users.count] }
        run.ledger.withLock { ledger in
            for (socket, user) in assigned.enumerated() { ledger.subscribed(socket: socket, user: user.id) }
        }
        progress("\(users.count) users ready; opening \(options.sockets) subscribers")
        // The subscribers record their own failures in `run` (the first one is thrown); they never throw.
        let rssBefore = options.serverPID.flatMap(ProcessFigures.residentMegabytes)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            do {
                // Opened `openBatch` at a time (a burst of thousands of connects overflows the listen backlog); each
                // batch has `120 s` to join.
                for wave in RealtimeLoad.waves(sockets: options.sockets, batch: options.openBatch) {
                    let watchdog = Task {
                        try await Task.sleep(for: .seconds(120))
                        run.fail(RealtimeBenchFailure("subscribers \(wave.lowerBound)..<\(wave.upperBound) did not all join within 120 s"))
                    }
                    for socket in wave {
                        let user = assigned[socket]
                        group.addTask {
                            do {
                                try await driver.subscribe(socket: socket, user: user, run: run)
                                if !run.isStopping { run.fail(RealtimeBenchFailure("subscriber \(socket) was closed by the server during the run")) }
                            } catch {
                                if !run.isStopping { run.fail(RealtimeBenchFailure("subscriber \(socket): \(error)")) }
                            }
                        }
                    }
                    await run.waitJoined(wave.upperBound)
                    watchdog.cancel()
                    try run.throwIfFailed()
                }
                await run.ready.wait()
                try run.throwIfFailed()
                if options.idle {
                    let figures = try await holdIdle(options, run: run, rssBefore: rssBefore, progress: progress)
                    run.stop()
                    try await group.waitForAll()
                    return figures
                }
                progress("\(options.sockets) subscribers joined; writing for \(options.seconds) s")
                let cpuBefore = options.serverPID.flatMap(ProcessFigures.cpuSeconds)
                let ownBefore = ProcessFigures.cpuSeconds(getpid())
                let written = try await writeFor(options, users: users, driver: driver, run: run)
                let drainStart = ContinuousClock.now
                while ContinuousClock.now - drainStart < .seconds(options.drain) {
                    try run.throwIfFailed()
                    let (expected, distinct) = run.ledger.withLock { ($0.expected, $0.distinctReceipts) }
                    if distinct >= expected { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let cpuAfter = options.serverPID.flatMap(ProcessFigures.cpuSeconds)
                let ownAfter = ProcessFigures.cpuSeconds(getpid())
                run.stop()
                try await group.waitForAll()
                try run.throwIfFailed()
                let report = run.ledger.withLock { $0.report() }
                return figures(options, report: report, elapsed: written.elapsed, systemErrors: run.systemErrorCount,
                               cpu: cpuBefore.flatMap { before in cpuAfter.map { $0 - before } },
                               harnessCPU: ownBefore.flatMap { before in ownAfter.map { $0 - before } },
                               peakRSS: options.serverPID.flatMap(ProcessFigures.peakRSSMegabytes))
            } catch {
                run.stop()
                try await group.waitForAll()
                throw error
            }
        }
    }

    /// `options.writers` loops writing `options.batch` rows per request for `options.seconds`, users in turn.
    private static func writeFor(_ options: RealtimeBenchOptions, users: [BenchUser], driver: any RealtimeTargetDriver,
                                 run: RealtimeRun) async throws -> (rows: Int, elapsed: Double) {
        let start = ContinuousClock.now
        let deadline = start + .seconds(options.seconds)
        let cursor = WriteCursor()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<options.writers {
                group.addTask {
                    while ContinuousClock.now < deadline, !run.isStopping {
                        // Request n writes as user n % users, its (n / users)-th batch: each (user, place) at most once.
                        let request = cursor.next.add(1, ordering: .relaxed).oldValue
                        let user = users[request % users.count]
                        let firstPlace = (request / users.count) * options.batch
                        guard firstPlace + options.batch <= options.places else {
                            cursor.exhausted.store(true, ordering: .relaxed)
                            return
                        }
                        let sentAt = Date().timeIntervalSince1970
                        let rows = (0..<options.batch).map { BenchRow(id: driver.newRowID(), owner: user.id, place: firstPlace + $0, sentAt: sentAt) }
                        try await driver.write(rows, as: user, counter: request)
                        run.ledger.withLock { ledger in for row in rows { ledger.wrote(row: row.id, owner: row.owner) } }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        let rows = run.ledger.withLock { $0.rowsWritten }
        if cursor.exhausted.load(ordering: .relaxed) { throw RealtimeBenchFailure("the writers used up every (user, place) pair before the time was up: raise --places") }
        return (rows, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func figures(_ options: RealtimeBenchOptions, report: RealtimeDeliveryReport, elapsed: Double, systemErrors: Int, cpu: Double?,
                        harnessCPU: Double?, peakRSS: Double?) -> JSONValue {
        func number(_ value: Double?, places: Double = 10) -> JSONValue {
            value.map { .double(($0 * places).rounded() / places) } ?? .null
        }
        var pairs: [(key: String, value: JSONValue)] = [
            ("target", .string(options.target.rawValue)), ("vsn", .string(options.target == .caravan ? options.vsn : "sse")),
            ("sockets", .integer(Int64(options.sockets))), ("users", .integer(Int64(options.users))),
            ("writers", .integer(Int64(options.writers))), ("batch", .integer(Int64(options.batch))), ("seconds", number(elapsed, places: 100)),
            ("rows", .integer(Int64(report.rows))), ("inserts_per_s", number(Double(report.rows) / elapsed, places: 1)),
            ("delivered_per_s", number(Double(report.received) / elapsed, places: 1)),
            ("expected", .integer(Int64(report.expected))), ("received", .integer(Int64(report.received))),
            ("duplicates", .integer(Int64(report.duplicates))), ("missing", .integer(Int64(report.missing))),
            ("unexpected", .integer(Int64(report.unexpected))), ("system_errors", .integer(Int64(systemErrors))),
            ("commit_to_receipt_p50_ms", number(report.commitToReceiptMs.p50)), ("commit_to_receipt_p99_ms", number(report.commitToReceiptMs.p99)),
            ("commit_to_receipt_max_ms", number(report.commitToReceiptMs.max)),
            ("send_to_receipt_p50_ms", number(report.sendToReceiptMs.p50)), ("send_to_receipt_p99_ms", number(report.sendToReceiptMs.p99)),
            ("send_to_receipt_max_ms", number(report.sendToReceiptMs.max)),
            ("harness_cpu_s", number(harnessCPU, places: 100)),
        ]
        if options.serverPID != nil {
            pairs.append(("server_cpu_s", number(cpu, places: 100)))
            pairs.append(("server_peak_rss_mb", number(peakRSS)))
        }
        return .object(pairs)
    }
}

/// The writers' shared place: the next request's number, and whether they ran out of (user, place) pairs.
final class WriteCursor: Sendable {
    let next = Atomic(0)
    let exhausted = Atomic(false)
}

/// The server's CPU time and peak memory, from /proc.
enum ProcessFigures {
    /// User + system CPU seconds of `pid` (`/proc/PID/stat` fields 14 and 15).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, so utime (14) and stime (15) are the 12th and 13th.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `VmHWM` of `pid` in MiB.
    static func peakRSSMegabytes(_ pid: Int32) -> Double? {
        status(pid, field: "VmHWM")
    }

    /// `VmRSS` of `pid` in MiB.
    static func residentMegabytes(_ pid: Int32) -> Double? {
        status(pid, field: "VmRSS")
    }

    private static func status(_ pid: Int32, field: String) -> Double? {
        (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)).flatMap { kibibytes(field, in: $0) }.map { $0 / 1024 }
    }

    /// The value in KiB of a `/proc/PID/status` field (`VmRSS:\t  123456 kB`).
    static func kibibytes(_ field: String, in status: String) -> Double? {
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap { Double($0) }
        }
        return nil
    }
}

/// One HTTP exchange with a JSON body both ways.
struct BenchHTTP {
    static func send(_ http: HTTPClient, _ method: HTTPMethod, _ url: String, headers: [(String, String)], body: String? = nil) async throws
        -> (status: Int, body: JSONValue?, text: String)
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let text = String(buffer: bytes)
        return (Int(response.status.code), text.isEmpty ? nil : try? JSONParser.parse(text), text)
    }

    /// The JSON answer of a request that must succeed with one of `accepted`.
    static func expect(_ accepted: Set<Int>, _ http: HTTPClient, _ method: HTTPMethod, _ url: String, headers: [(String, String)],
                       body: JSONValue? = nil, doing what: String) async throws -> JSONValue? {
        let answer = try await send(http, method, url, headers: headers, body: body?.jsonText)
        guard accepted.contains(answer.status) else {
            throw RealtimeBenchFailure("\(what): HTTP \(answer.status) \(answer.text.prefix(300))")
        }
        return answer.body
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }
}

/// Seconds since 1970 of a server's timestamp: Caravan's `2026-01-01T12:00:00.123Z`, PocketBase's
/// `2026-01-01 12:00:00.123Z`; nil for anything else.
func epochSeconds(iso text: String) -> Double? {
    Timestamp.parseMicroseconds(text).map { Double($0) / 1e6 }
}
