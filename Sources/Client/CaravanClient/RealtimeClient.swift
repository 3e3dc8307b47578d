public import CaravanCore
import Foundation
import HummingbirdWSClient
public import Logging
import NIOCore
import Synchronization

/// One live change applied to the local store.
public struct LiveChange: Sendable {
    public let seq: Int64
    public let table: String
    /// `INSERT`, `UPDATE` or `DELETE` as realtime sent it.
    public let type: String
    public let key: JSONValue
    public let record: JSONValue?

    public var json: JSONValue {
        .object([("seq", .integer(seq)), ("table", .string(table)), ("type", .string(type)), ("key", key), ("record", record ?? .null)])
    }
}

/// Follows `/realtime/v1` (Phoenix channels, vsn 1.0.0) for the synced tables and applies the `postgres_changes`
/// events to the local store, under the same guards as a pull (a row with local writes waiting keeps its state): a
/// server transaction's events are held until all have come (`tx`, `tx_events`), then applied in one local
/// transaction, so a live query never sees a server transaction half-applied; one whose rest does not come within
/// `transactionWait` (twice at most) is pulled instead. Gaps are healed by pulling: after every (re)join, on a `system`
/// error (resync, expired token) and after a lost connection; live changes at or below the highest `seq` already
/// pulled are ignored.
public final class RealtimeClient: Sendable {
    public let store: LocalStore
    public let engine: SyncEngine
    public let session: SessionManager
    public let logger: Logger
    let retry: RetryPolicy
    let sleep: @Sendable (Duration) async throws -> Void
    let jitter: @Sendable () -> Double
    /// How long a server transaction's events may keep the client waiting for the rest (between one and two of these)
    /// before it pulls instead.
    let transactionWait: Duration

    public init(store: LocalStore, engine: SyncEngine, session: SessionManager, logger: Logger, retry: RetryPolicy = RetryPolicy(attempts: .max),
                transactionWait: Duration = .seconds(2),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.store = store
        self.engine = engine
        self.session = session
        self.logger = logger
        self.retry = retry
        self.transactionWait = transactionWait
        self.sleep = sleep
        self.jitter = jitter
    }

    /// The websocket URL of the server's realtime endpoint.
    static func socketURL(_ api: CaravanAPI) -> String {
        var base = api.baseURL
        if base.hasPrefix("https://") { base = "wss://" + base.dropFirst(8) } else if base.hasPrefix("http://") { base = "ws://" + base.dropFirst(7) }
        return base + "/realtime/v1/websocket?vsn=1.0.0&apikey=" + (api.apiKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-_."))) ?? "")
    }

    /// Runs until cancelled: connect, join, pull, apply live changes; reconnect with backoff when the socket ends.
    public func run(tables: [String], onChange: @escaping @Sendable (LiveChange) -> Void) async throws {
        let position = SeqWatermark()
        var failures = 0
        while !Task.isCancelled {
            do {
                try await connectOnce(tables: tables, position: position, onChange: onChange)
                failures = 0
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                engine.status.update {
                    $0.connected = false
                    $0.lastError = SyncStatus.Failure(error)
                }
                logger.notice("realtime connection ended", metadata: ["error": "\(error)"])
            }
            try await sleep(retry.delay(attempt: max(failures, 1), jitter: jitter(), retryAfter: nil))
        }
    }

    /// What the connection's loop acts on: a frame from the server, or a tick of the bounded wait for a transaction.
    private enum SocketEvent: Sendable {
        case text(String)
        case tick
    }

    private func connectOnce(tables: [String], position: SeqWatermark, onChange: @escaping @Sendable (LiveChange) -> Void) async throws {
        let token = try await session.accessToken() ?? engine.api.apiKey
        let store = self.store, engine = self.engine, logger = self.logger, sleep = self.sleep, wait = self.transactionWait
        try await WebSocketClient.connect(url: Self.socketURL(engine.api), logger: logger) { inbound, outbound, _ in
            for (index, table) in tables.enumerated() {
                try await outbound.write(.text(Self.joinFrame(table: table, ref: String(index + 1), token: token)))
            }
            let (events, feed) = AsyncThrowingStream.makeStream(of: SocketEvent.self)
            let reader = Task {
                do {
                    for try await message in inbound.messages(maxSize: 16 << 20) {
                        if case .text(let text) = message { feed.yield(.text(text)) }
                    }
                    feed.finish()
                } catch {
                    feed.finish(throwing: error)
                }
            }
            let tickQueued = QueuedFlag()
            let ticker = Task {
                while !Task.isCancelled {
                    try await sleep(wait)
                    // One tick waits at most: ticks piled up behind a long pull would give up on a transaction at once.
                    if tickQueued.raise() { feed.yield(.tick) }
                }
            }
            let heartbeat = Task {
                var ref = 1000
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(25))
                    ref += 1
                    try await outbound.write(.text(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"\#(ref)"}"#))
                }
            }
            defer {
                heartbeat.cancel()
                ticker.cancel()
                reader.cancel()
            }
            var joined = 0
            var transactions = LiveTransactions()
            /// Pulls what was missed; the open transactions keep only what the pull did not bring.
            func heal() async throws {
                try await Self.heal(engine, tables: tables, position: position, sleep: sleep, wait: wait)
                transactions.drop(through: position.value)
            }
            for try await next in events {
                guard case .text(let text) = next else {
                    tickQueued.lower()
                    if transactions.tick() {
                        // A transaction's last events never came (a refused delivery): a pull brings it whole.
                        logger.notice("realtime: a server transaction stayed incomplete; pulling")
                        transactions.reset()
                        try await heal()
                    }
                    continue
                }
                guard let frame = try? JSONParser.parse(text), case .string(let event)? = frame["event"] else { continue }
                switch event {
                case "phx_reply":
                    guard case .string(let ref)? = frame["ref"], let index = Int(ref), (1...tables.count).contains(index) else { continue }
                    guard frame["payload"]?["status"] == .string("ok") else {
                        throw ClientError(.refused, "realtime refused to join \(tables[index - 1]): \(frame["payload"]?["response"]?.jsonText ?? "")")
                    }
                    joined += 1
                    if joined == tables.count { engine.status.update { $0.connected = true } }
                    if joined == tables.count { try await heal() }
                case "postgres_changes":
                    guard let change = Self.liveChange(frame) else { continue }
                    let (transaction, count) = Self.transaction(of: frame, seq: change.seq)
                    for ready in transactions.add(change, transaction: transaction, events: count, pulled: change.seq <= position.value)
                    where !ready.isEmpty {
                        // The whole server transaction in one local transaction: a live query sees all of it or none.
                        let pulled = ready.map { change in
                            PulledRow(seq: change.seq, table: change.table, operation: change.type == "DELETE" ? .delete : .upsert,
                                      key: change.key, record: change.record)
                        }
                        _ = try store.apply(PullReply(changes: pulled, cursor: nil, hasMore: false), scope: tables, now: Int64(Date().timeIntervalSince1970))
                        ready.forEach(onChange)
                    }
                case "system":
                    if case .array(let moved)? = frame["payload"]?["pull"], !moved.isEmpty {
                        // A visibility change (a membership, a block): rows moved into or out of view; a pull brings them.
                        try await heal()
                    } else if frame["payload"]?["status"] == .string("error") {
                        // Resync (overflow) or an expired token: pull what was missed, then join afresh.
                        logger.notice("realtime system error", metadata: ["message": "\(frame["payload"]?["message"]?.jsonText ?? "")"])
                        try await heal()
                        return
                    }
                case "phx_close", "phx_error":
                    return
                default:
                    continue
                }
            }
        }
    }

    /// Pulls everything missed so far and raises the watermark to what the pull saw. When another process is syncing
    /// the store, waits for it (its pull brings the same changes), then pulls.
    static func heal(_ engine: SyncEngine, tables: [String], position: SeqWatermark, sleep: @Sendable (Duration) async throws -> Void,
                     wait: Duration) async throws {
        var report = try await engine.sync(tables: tables)
        while report.otherProcessSyncing {
            try await sleep(wait)
            report = try await engine.sync(tables: tables)
        }
        if let last = report.lastSeq { position.raise(to: last) }
    }

    static func joinFrame(table: String, ref: String, token: String) -> String {
        JSONValue.object([
            ("topic", .string("realtime:\(table)")), ("event", .string("phx_join")), ("ref", .string(ref)),
            ("payload", .object([
                ("config", .object([
                    ("broadcast", .object([("ack", .bool(false)), ("self", .bool(false))])),
                    ("presence", .object([("key", .string("")), ("enabled", .bool(false))])),
                    ("postgres_changes", .array([.object([("event", .string("*")), ("schema", .string("public")), ("table", .string(table))])])),
                ])),
                ("access_token", .string(token)),
            ])),
        ]).jsonText
    }

    /// The server transaction of a `postgres_changes` frame and how many of its events this socket receives (`tx`,
    /// `tx_events` in `data`); a frame without them is a transaction of its own.
    static func transaction(of frame: JSONValue, seq: Int64) -> (id: Int64, events: Int) {
        guard let data = frame["payload"]?["data"], case .integer(let id)? = data["tx"], case .integer(let events)? = data["tx_events"] else {
            return (seq, 1)
        }
        return (id, Int(events))
    }

    static func liveChange(_ frame: JSONValue) -> LiveChange? {
        guard let data = frame["payload"]?["data"], case .string(let table)? = data["table"], case .string(let type)? = data["type"],
              case .integer(let seq)? = data["seq"] else { return nil }
        let record = data["record"].flatMap { $0 == .null || $0 == .object([]) ? nil : $0 }
        let key = type == "DELETE" ? (data["old_record"] ?? .null) : (record ?? .null)
        return LiveChange(seq: seq, table: table, type: type, key: key, record: type == "DELETE" ? nil : record)
    }
}

/// A flag raised by one task and lowered by another.
final class QueuedFlag: Sendable {
    private let raised = Mutex(false)
    /// Raises the flag; whether it was down.
    func raise() -> Bool { raised.withLock { value in defer { value = true }; return !value } }
    func lower() { raised.withLock { $0 = false } }
}

/// The highest `seq` reflected in the local store by pulls.
final class SeqWatermark: Sendable {
    private let current = Mutex<Int64>(0)
    var value: Int64 { current.withLock { $0 } }
    func raise(to seq: Int64) { current.withLock { $0 = max($0, seq) } }
}
