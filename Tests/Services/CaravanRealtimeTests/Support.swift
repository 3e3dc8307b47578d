import CaravanCore
import CaravanRealtime
import Logging
import Places
import Synchronization

/// The deployment catalog the tests use: the system tables (the change log is secret) and the places app.
let testCatalog = Catalog(modules: [SystemModule.module, PlacesModule.module])

let alice = Identity(role: .authenticated, userID: "11111111-1111-4111-8111-111111111111",
                     claims: .object([("sub", .string("11111111-1111-4111-8111-111111111111")), ("role", .string("authenticated")), ("exp", .integer(2_000))]))
let bob = Identity(role: .authenticated, userID: "22222222-2222-4222-8222-222222222222",
                   claims: .object([("sub", .string("22222222-2222-4222-8222-222222222222")), ("role", .string("authenticated")), ("exp", .integer(2_000))]))
let anon = Identity(role: .anon, claims: .object([("role", .string("anon")), ("exp", .integer(9_999))]))

/// A settable monotonic clock.
final class TestClock: Sendable {
    let value = Mutex<Double>(0)
    var now: @Sendable () -> Double { { [self] in self.value.withLock { $0 } } }
    func advance(_ seconds: Double) { value.withLock { $0 += seconds } }
}

func makeHub(limits: RealtimeLimits = RealtimeLimits(), clock: TestClock = TestClock()) -> RealtimeHub {
    RealtimeHub(catalog: testCatalog, limits: limits, logger: Logger(label: "test"), now: clock.now)
}

func machine(_ version: ProtocolVersion = .v1, limits: RealtimeLimits = RealtimeLimits()) -> SocketStateMachine {
    SocketStateMachine(version: version, catalog: testCatalog, limits: limits, now: 0, makeKey: { "generated-key" })
}

func joinMessage(topic: String = "realtime:test", ref: String = "1", bindings: [JSONValue], extra: [(key: String, value: JSONValue)] = []) -> PhoenixMessage {
    let config = JSONValue.object([
        ("broadcast", .object([("ack", .bool(false)), ("self", .bool(false))])),
        ("presence", .object([("key", .string("")), ("enabled", .bool(false))])),
        ("private", .bool(false)),
        ("postgres_changes", .array(bindings)),
    ] + extra)
    return PhoenixMessage(joinRef: ref, ref: ref, topic: topic, event: "phx_join", payload: .object([("config", config)]))
}

func binding(_ event: String = "*", table: String?, filter: String? = nil) -> JSONValue {
    var pairs: [(key: String, value: JSONValue)] = [("event", .string(event)), ("schema", .string("public"))]
    if let table { pairs.append(("table", .string(table))) }
    if let filter { pairs.append(("filter", .string(filter))) }
    return .object(pairs)
}

/// The frames of a list of actions (sends and the frames of registrations).
func frames(_ actions: [SocketAction]) -> [OutboundFrame] {
    actions.flatMap { action -> [OutboundFrame] in
        switch action {
        case .send(let frame): [frame]
        case .register(_, let frames): frames
        default: []
        }
    }
}

/// Registers every `.register` action of `actions` with `hub` for socket `socket`.
func perform(_ actions: [SocketAction], hub: RealtimeHub, socket: Int, outbox: SocketOutbox) throws {
    for action in actions {
        switch action {
        case .register(let request, let frames): try hub.register(socket: socket, request: request, outbox: outbox, frames: frames)
        case .unregister(let topic): hub.unregister(ChannelID(socket: socket, topic: topic))
        case .send(let frame): outbox.push([frame], now: 0)
        default: break
        }
    }
}

/// Joins `bindings` as `identity` on a fresh socket; returns its outbox (the reply already queued).
func subscribe(_ hub: RealtimeHub, socket: Int, identity: Identity, bindings: [JSONValue], topic: String = "realtime:test",
               version: ProtocolVersion = .v1, bound: Int = 10_000) throws -> SocketOutbox {
    var socketMachine = machine(version)
    let outbox = SocketOutbox(version: version, bound: bound)
    try perform(socketMachine.join(joinMessage(topic: topic, bindings: bindings), identity: .success(identity), now: 0), hub: hub, socket: socket, outbox: outbox)
    return outbox
}

/// Every frame queued in `outbox` now, decoded.
func drain(_ outbox: SocketOutbox) async -> [PhoenixMessage] {
    guard outbox.pending > 0 else { return [] }
    let frames = outbox.take() ?? []
    outbox.written(frames.count, now: 0)
    return frames.compactMap { frame in
        guard case .text(let text) = frame else { return nil }
        return try? PhoenixCodec.decode(text, version: outbox.version)
    }
}

let nextSeq = Mutex<Int64>(0)

func change(_ op: ChangeOperation, table: String, record: JSONValue?, old: JSONValue?, seq: Int64? = nil, transaction: Int64? = nil) -> Change {
    let number = seq ?? nextSeq.withLock { $0 += 1; return $0 }
    let key = (record ?? old)?["id"] ?? .null
    return Change(seq: number, table: table, primaryKey: JSONValue.object([("id", key)]).jsonText, operation: op,
                  record: record?.jsonText, oldRecord: old?.jsonText, committedAt: "2026-01-01T12:00:00.123456+00:00", actor: "test",
                  transaction: transaction)
}

func favorite(_ id: String, user: Identity, note: String? = nil) -> JSONValue {
    .object([("id", .string(id)), ("user_id", .string(user.userID ?? "")), ("place_id", .string("p1")), ("note", note.map(JSONValue.string) ?? .null),
             ("created_at", .string("2026-01-01T12:00:00+00:00"))])
}

func place(_ id: String, active: Bool, count: Int64 = 7, name: String = "Café") -> JSONValue {
    .object([("id", .string(id)), ("name_ar", .string(name)), ("category", .string("cafe")), ("category_ar", .string("مقهى")),
             ("rating_count", .integer(count)), ("is_active", .bool(active))])
}

/// The postgres_changes frames among `messages`, as their `data`.
func changes(_ messages: [PhoenixMessage]) -> [JSONValue] {
    messages.filter { $0.event == "postgres_changes" }.compactMap { $0.payload["data"] }
}
