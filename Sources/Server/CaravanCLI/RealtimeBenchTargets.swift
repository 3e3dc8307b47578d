import AsyncHTTPClient
import CaravanCore
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1

/// Caravan: users through GoTrue's admin API, `postgres_changes` sockets on `favorites`, REST inserts as the users.
struct CaravanRealtimeDriver: RealtimeTargetDriver {
    let options: RealtimeBenchOptions
    let runID: String
    let http: HTTPClient
    let logger = Logger(label: "caravan.bench.realtime") { _ in SwiftLogNoOpLogHandler() }
    static let password = "realtime-bench-password-1"

    var serviceHeaders: [(String, String)] { [("apikey", options.serviceKey), ("Authorization", "Bearer \(options.serviceKey)")] }

    func placeID(_ index: Int) -> String { "rtbench-\(runID)-\(index)" }

    func newRowID() -> String { UUID().uuidString.lowercased() }

    func prepare(_ http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> [BenchUser] {
        // The places the favorites point at (a foreign key), as the service role.
        var index = 0
        while index < options.places {
            let chunk = (index..<min(options.places, index + 500)).map { n -> JSONValue in
                .object([("id", .string(placeID(n))), ("name_ar", .string("bench \(n)")), ("category", .string("bench")),
                         ("category_ar", .string("bench"))])
            }
            _ = try await BenchHTTP.expect([201], http, .POST, "\(options.url)/rest/v1/places", headers: serviceHeaders + [("Prefer", "return=minimal")],
                                           body: .array(chunk), doing: "creating places")
            index += chunk.count
        }
        var users: [BenchUser] = []
        for n in 1...options.users {
            let email = "rtbench-\(runID)-\(n)@example.com"
            let created = try await BenchHTTP.expect([200, 201], http, .POST, "\(options.url)/auth/v1/admin/users", headers: serviceHeaders,
                                                     body: .object([("email", .string(email)), ("password", .string(Self.password)),
                                                                    ("email_confirm", .bool(true))]),
                                                     doing: "creating user \(n) through the admin API")
            guard let id = created?["id"]?.stringValue else { throw RealtimeBenchFailure("the admin API answered no user id") }
            let session = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/auth/v1/token?grant_type=password",
                                                     headers: [("apikey", options.serviceKey)],
                                                     body: .object([("email", .string(email)), ("password", .string(Self.password))]),
                                                     doing: "signing in user \(n) (past 30 users raise auth_rate_limit_sign_in)")
            guard let token = session?["access_token"]?.stringValue else { throw RealtimeBenchFailure("the sign-in answered no access_token") }
            users.append(BenchUser(id: id, token: token))
        }
        return users
    }

    func frame(_ ref: String, topic: String, event: String, payload: JSONValue) -> String {
        if options.vsn == "2.0.0" {
            return JSONValue.array([.string(ref), .string(ref), .string(topic), .string(event), payload]).jsonText
        }
        return JSONValue.object([("topic", .string(topic)), ("event", .string(event)), ("payload", payload), ("ref", .string(ref))]).jsonText
    }

    func subscribe(socket: Int, user: BenchUser, run: RealtimeRun) async throws {
        let base = options.url.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
        let url = "\(base)/realtime/v1/websocket?apikey=\(options.serviceKey)&vsn=\(options.vsn)"
        let join = frame("1", topic: "realtime:favs", event: "phx_join", payload: .object([
            ("config", .object([("postgres_changes", .array([.object([("event", .string("INSERT")), ("schema", .string("public")),
                                                                       ("table", .string("favorites"))])]))])),
            ("access_token", .string(user.token)),
        ]))
        let heartbeat = frame("hb", topic: "phoenix", event: "heartbeat", payload: .object([]))
        let versionTwo = options.vsn == "2.0.0"
        let interval = options.heartbeat
        let stop = run.stopped(socket)
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 16 << 20
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
            try await outbound.write(.text(join))
            let reader = Task {
                defer { stop.fire() }
                do {
                    for try await message in inbound.messages(maxSize: 16 << 20) {
                        guard case .text(let text) = message else { continue }
                        let receivedAt = Date().timeIntervalSince1970
                        try Self.handle(text, versionTwo: versionTwo, socket: socket, receivedAt: receivedAt, run: run)
                    }
                } catch {
                    if !run.isStopping { run.fail(RealtimeBenchFailure("subscriber \(socket): \(error)")) }
                }
            }
            let beat = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(interval))
                    try await outbound.write(.text(heartbeat))
                }
            }
            await stop.wait()
            beat.cancel()
            reader.cancel()
        }
    }

    /// One frame of a subscriber: the join's reply, a change, a system message.
    static func handle(_ text: String, versionTwo: Bool, socket: Int, receivedAt: Double, run: RealtimeRun) throws {
        let parsed = try JSONParser.parse(text)
        let event: String?, payload: JSONValue?, ref: String?
        if versionTwo {
            guard case .array(let parts) = parsed, parts.count == 5 else { return }
            ref = parts[1].stringValue
            event = parts[3].stringValue
            payload = parts[4]
        } else {
            ref = parsed["ref"]?.stringValue
            event = parsed["event"]?.stringValue
            payload = parsed["payload"]
        }
        switch event {
        case "phx_reply" where ref == "1":
            guard payload?["status"]?.stringValue == "ok" else {
                throw RealtimeBenchFailure("the join was refused: \(payload?.jsonText ?? "")")
            }
            run.joined()
        case "postgres_changes":
            guard let data = payload?["data"], let record = data["record"], let id = record["id"]?.stringValue else { return }
            let committed = data["commit_timestamp"]?.stringValue.flatMap { epochSeconds(iso: $0) }
            run.receipt(socket: socket, row: id, receivedAt: receivedAt, committedAt: committed, sentAt: record["note"]?.stringValue.flatMap(Double.init))
        case "system" where payload?["status"]?.stringValue == "error":
            run.systemError()
        case "phx_close", "phx_error":
            if !run.isStopping { throw RealtimeBenchFailure("the channel was closed: \(event ?? "") \(payload?.jsonText ?? "")") }
        default:
            return
        }
    }

    func write(_ rows: [BenchRow], as user: BenchUser, counter: Int) async throws {
        let objects = rows.map { row -> JSONValue in
            .object([("id", .string(row.id)), ("user_id", .string(row.owner)), ("place_id", .string(placeID(row.place))),
                     ("note", .string(String(format: "%.6f", row.sentAt)))])
        }
        let body = objects.count == 1 ? objects[0] : .array(objects)
        _ = try await BenchHTTP.expect([201], http, .POST, "\(options.writeURL)/rest/v1/favorites",
                                       headers: [("apikey", options.serviceKey), ("Authorization", "Bearer \(user.token)"), ("Prefer", "return=minimal")],
                                       body: body, doing: "inserting favorites")
    }
}

/// PocketBase: users through its records API, an SSE client per socket subscribed to `favorites` (list rule
/// `user = @request.auth.id`, as Caravan's owner policy), record creates (or `/api/batch`) with the users' tokens.
struct PocketBaseRealtimeDriver: RealtimeTargetDriver {
    let options: RealtimeBenchOptions
    let runID: String
    let http: HTTPClient
    let sse: HTTPClient
    static let password = "realtime-bench-password-1"

    func newRowID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<15).map { _ in alphabet.randomElement()! })
    }

    func prepare(_ http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> [BenchUser] {
        let parts = options.superuser.split(separator: ":", maxSplits: 1).map(String.init)
        let auth = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/collections/_superusers/auth-with-password", headers: [],
                                              body: .object([("identity", .string(parts[0])), ("password", .string(parts[1]))]),
                                              doing: "signing in the superuser")
        guard let superToken = auth?["token"]?.stringValue else { throw RealtimeBenchFailure("the superuser sign-in answered no token") }
        let admin = [("Authorization", superToken)]
        let existing = try await BenchHTTP.send(http, .GET, "\(options.url)/api/collections/favorites", headers: admin)
        if existing.status == 404 {
            let usersCollection = try await BenchHTTP.expect([200], http, .GET, "\(options.url)/api/collections/users", headers: admin,
                                                             doing: "reading the users collection")
            guard let usersID = usersCollection?["id"]?.stringValue else { throw RealtimeBenchFailure("the users collection has no id") }
            let rule = JSONValue.string("user = @request.auth.id")
            let field = { (name: String, type: String) -> JSONValue in .object([("name", .string(name)), ("type", .string(type))]) }
            _ = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/collections", headers: admin, body: .object([
                ("name", .string("favorites")), ("type", .string("base")), ("listRule", rule), ("viewRule", rule),
                ("createRule", .string(#"@request.auth.id != "" && user = @request.auth.id"#)), ("updateRule", .null), ("deleteRule", .null),
                ("fields", .array([
                    .object([("name", .string("user")), ("type", .string("relation")), ("collectionId", .string(usersID)), ("maxSelect", .integer(1)),
                             ("required", .bool(true)), ("cascadeDelete", .bool(true))]),
                    .object([("name", .string("place")), ("type", .string("text")), ("required", .bool(true))]),
                    field("note", "text"),
                    .object([("name", .string("created")), ("type", .string("autodate")), ("onCreate", .bool(true)), ("onUpdate", .bool(false))]),
                ])),
            ]), doing: "creating the favorites collection")
        } else if existing.status != 200 {
            throw RealtimeBenchFailure("reading the favorites collection: HTTP \(existing.status) \(existing.text.prefix(300))")
        }
        if options.batch > 1 {  // PocketBase's batch API is off by default
            _ = try await BenchHTTP.expect([200], http, .PATCH, "\(options.url)/api/settings", headers: admin,
                                           body: .object([("batch", .object([("enabled", .bool(true)), ("maxRequests", .integer(Int64(max(50, options.batch))))]))]),
                                           doing: "enabling the batch API")
        }
        var users: [BenchUser] = []
        for n in 1...options.users {
            let email = "rtbench-\(runID)-\(n)@example.com"
            _ = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/collections/users/records", headers: admin,
                                           body: .object([("email", .string(email)), ("password", .string(Self.password)),
                                                          ("passwordConfirm", .string(Self.password))]),
                                           doing: "creating user \(n)")
            let session = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/collections/users/auth-with-password", headers: [],
                                                     body: .object([("identity", .string(email)), ("password", .string(Self.password))]),
                                                     doing: "signing in user \(n)")
            guard let token = session?["token"]?.stringValue, let id = session?["record"]?["id"]?.stringValue else {
                throw RealtimeBenchFailure("the sign-in answered no token")
            }
            users.append(BenchUser(id: id, token: token))
        }
        return users
    }

    func subscribe(socket: Int, user: BenchUser, run: RealtimeRun) async throws {
        let stop = run.stopped(socket)
        let options = self.options, http = self.http, sse = self.sse
        let reader = Task {
            defer { stop.fire() }
            do {
                var request = HTTPClientRequest(url: "\(options.url)/api/realtime")
                request.headers.add(name: "Accept", value: "text/event-stream")
                let response = try await sse.execute(request, timeout: .hours(24))
                guard response.status == .ok else { throw RealtimeBenchFailure("GET /api/realtime: HTTP \(response.status.code)") }
                var pending: [UInt8] = []
                var event = ""
                for try await buffer in response.body {
                    let receivedAt = Date().timeIntervalSince1970
                    pending.append(contentsOf: buffer.readableBytesView)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[..<newline], as: UTF8.self)
                        pending.removeSubrange(...newline)
                        if line.hasPrefix("event:") {
                            event = line.dropFirst(6).trimmingCharacters(in: .whitespaces)
                        } else if line.hasPrefix("data:") {
                            let data = try JSONParser.parse(String(line.dropFirst(5)))
                            if event == "PB_CONNECT" {
                                guard let clientID = data["clientId"]?.stringValue else { throw RealtimeBenchFailure("PB_CONNECT without a clientId") }
                                _ = try await BenchHTTP.expect([204], http, .POST, "\(options.url)/api/realtime", headers: [("Authorization", user.token)],
                                                               body: .object([("clientId", .string(clientID)), ("subscriptions", .array([.string("favorites")]))]),
                                                               doing: "subscribing to favorites")
                                run.joined()
                            } else if event == "favorites", let record = data["record"], let id = record["id"]?.stringValue {
                                run.receipt(socket: socket, row: id, receivedAt: receivedAt,
                                            committedAt: record["created"]?.stringValue.flatMap { epochSeconds(iso: $0) },
                                            sentAt: record["note"]?.stringValue.flatMap(Double.init))
                            }
                        }
                    }
                }
            } catch {
                if !run.isStopping { run.fail(RealtimeBenchFailure("subscriber \(socket): \(error)")) }
            }
        }
        await stop.wait()
        reader.cancel()
    }

    func write(_ rows: [BenchRow], as user: BenchUser, counter: Int) async throws {
        let bodies = rows.map { row -> JSONValue in
            .object([("id", .string(row.id)), ("user", .string(row.owner)), ("place", .string("p\(row.place)")),
                     ("note", .string(String(format: "%.6f", row.sentAt)))])
        }
        let headers = [("Authorization", user.token)]
        if bodies.count == 1 {
            _ = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/collections/favorites/records", headers: headers, body: bodies[0],
                                           doing: "creating a favorite")
        } else {
            let requests = bodies.map { body -> JSONValue in
                .object([("method", .string("POST")), ("url", .string("/api/collections/favorites/records")), ("body", body)])
            }
            _ = try await BenchHTTP.expect([200], http, .POST, "\(options.url)/api/batch", headers: headers, body: .object([("requests", .array(requests))]),
                                           doing: "creating favorites in a batch")
        }
    }
}
