public import CaravanCore
import Foundation
import Synchronization

/// A signed-in session as GoTrue hands it out.
public struct ClientSession: Sendable, Hashable {
    public var accessToken: String
    public var refreshToken: String
    /// Seconds since 1970 when the access token expires.
    public var expiresAt: Int64
    public var userID: String

    public init(accessToken: String, refreshToken: String, expiresAt: Int64, userID: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.userID = userID
    }
}

/// Who a password or a one-time code belongs to: an email address or a phone number (E.164, `+9665…`).
public enum AuthContact: Sendable, Hashable {
    case email(String)
    case phone(String)

    var field: (key: String, value: JSONValue) {
        switch self {
        case .email(let address): ("email", .string(address))
        case .phone(let number): ("phone", .string(number))
        }
    }
}

/// One pulled change (wire-protocol §6.1).
public struct PulledRow: Sendable {
    /// `evict`: a visibility change may have taken the table's rows whose columns have the values of `key` (the
    /// wire's `where`) out of view: they leave the local store, but for rows with writes waiting; the rows still
    /// visible follow as upserts.
    public enum Operation: String, Sendable { case upsert, delete, evict }
    public let seq: Int64
    public let table: String
    public let operation: Operation
    public let key: JSONValue
    public let record: JSONValue?
    /// The record as the values of its local table's columns, in their order, when the sync engine's pull decoded
    /// it so (`PullPageDecoder`; `record` is nil then).
    package let values: [Value]?

    package init(seq: Int64, table: String, operation: Operation, key: JSONValue, record: JSONValue?, values: [Value]? = nil) {
        self.seq = seq
        self.table = table
        self.operation = operation
        self.key = key
        self.record = record
        self.values = values
    }
}

public struct PullReply: Sendable {
    public let changes: [PulledRow]
    /// Nil for changes that did not come from a pull (realtime): the pull cursor stays.
    public let cursor: String?
    public let hasMore: Bool
    /// The tables the server began to snapshot again, as `refetch` asked (a server that does not know `refetch`
    /// sends none).
    public let refetched: [String]

    package init(changes: [PulledRow], cursor: String?, hasMore: Bool, refetched: [String] = []) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.refetched = refetched
    }
}

/// One pushed mutation's verdict.
public struct PushVerdict: Sendable {
    public enum Status: Sendable { case applied(seq: Int64), rejected(code: String, message: String) }
    public let id: String
    public let status: Status
    /// An applied verdict that does not show the write took effect: the server changed no row (`"changed":false`,
    /// an update or delete of a row gone or hidden from the writer), or it is a replay of an earlier verdict.
    package var unconfirmed = false
}

/// The server's HTTP API as the client uses it: `/auth/v1`, `/rest/v1`, `/sync/v1`.
public struct CaravanAPI: Sendable {
    public let baseURL: String
    public let apiKey: String
    public let transport: any HTTPTransport
    /// The latest consistency token a write answer carried, shared by this value's copies.
    private let consistency = ConsistencyMemory()

    public init(baseURL: String, apiKey: String, transport: any HTTPTransport) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey
        self.transport = transport
    }

    // MARK: Auth

    public func signUp(email: String, password: String) async throws -> ClientSession {
        try await signUp(.email(email), password: password)
    }

    /// `POST /signup` with an email or phone and a password (a session unless the server asks for confirmation).
    public func signUp(_ contact: AuthContact, password: String) async throws -> ClientSession {
        try session(from: try await call("POST", "/auth/v1/signup", token: nil, json: .object([contact.field, ("password", .string(password))])))
    }

    /// `POST /signup` with neither: a new anonymous user and its session.
    public func signUpAnonymously() async throws -> ClientSession {
        try session(from: try await call("POST", "/auth/v1/signup", token: nil, json: .object([("data", .object([]))])))
    }

    public func signIn(email: String, password: String) async throws -> ClientSession {
        try await signIn(.email(email), password: password)
    }

    /// `POST /token?grant_type=password` with an email or phone.
    public func signIn(_ contact: AuthContact, password: String) async throws -> ClientSession {
        try session(from: try await call("POST", "/auth/v1/token?grant_type=password", token: nil,
                                         json: .object([contact.field, ("password", .string(password))])))
    }

    /// `POST /otp`: the server sends a one-time code to the email or phone (and makes the user when `createUser`).
    public func sendCode(to contact: AuthContact, createUser: Bool = true) async throws {
        _ = try await call("POST", "/auth/v1/otp", token: nil, json: .object([contact.field, ("create_user", .bool(createUser))]))
    }

    /// `POST /verify`: the session for a one-time code sent by `sendCode` (type `email` or `sms`).
    public func verifyCode(_ code: String, sentTo contact: AuthContact) async throws -> ClientSession {
        let type = switch contact { case .email: "email"; case .phone: "sms" }
        return try session(from: try await call("POST", "/auth/v1/verify", token: nil,
                                                json: .object([("type", .string(type)), contact.field, ("token", .string(code))])))
    }

    /// `POST /token?grant_type=id_token` with `provider: apple`: the session for Sign in with Apple's ID token.
    /// `nonce` is the raw nonce whose SHA-256 the app gave Apple's request (nil when it gave none).
    public func signInWithApple(idToken: String, nonce: String?) async throws -> ClientSession {
        var body: [(key: String, value: JSONValue)] = [("provider", .string("apple")), ("id_token", .string(idToken))]
        if let nonce { body.append(("nonce", .string(nonce))) }
        return try session(from: try await call("POST", "/auth/v1/token?grant_type=id_token", token: nil, json: .object(body)))
    }

    public func refresh(_ refreshToken: String) async throws -> ClientSession {
        try session(from: try await call("POST", "/auth/v1/token?grant_type=refresh_token", token: nil,
                                         json: .object([("refresh_token", .string(refreshToken))])))
    }

    private func session(from body: JSONValue) throws -> ClientSession {
        guard case .string(let access)? = body["access_token"], case .string(let refresh)? = body["refresh_token"],
              case .integer(let expiresAt)? = body["expires_at"], case .string(let user)? = body["user"]?["id"] else {
            throw ClientError(.local, "the auth reply holds no session (is email confirmation on?)")
        }
        return ClientSession(accessToken: access, refreshToken: refresh, expiresAt: expiresAt, userID: user)
    }

    // MARK: Sync

    /// One page of `/sync/v1/pull`. `refetch` names tables to snapshot again from `cursor` while the others go on
    /// (after a 409 naming them, or when the local store's declaration of them changed).
    public func pull(tables: [String], filters: [SyncFilter] = [], cursor: String?, refetch: [String] = [], limit: Int, token: String?) async throws -> PullReply {
        try Self.pullReply(from: try await pullPage(tables: tables, filters: filters, cursor: cursor, refetch: refetch, limit: limit, token: token),
                           decoder: nil)
    }

    /// The body of one page of `/sync/v1/pull` (a reply of another status throws its `ClientError`): read with
    /// `pullReply(from:decoder:)`, after the next page has been asked for (`PullPageDecoder.nextCursor`).
    package func pullPage(tables: [String], filters: [SyncFilter] = [], cursor: String?, refetch: [String] = [], limit: Int,
                          token: String?) async throws -> [UInt8] {
        var path = "/sync/v1/pull?tables=" + tables.joined(separator: ",").addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: ",_")))!
        path += "&limit=\(limit)"
        let unreserved = CharacterSet.alphanumerics.union(.init(charactersIn: "-_.~"))
        for filter in filters {
            path += "&" + filter.parameter.addingPercentEncoding(withAllowedCharacters: unreserved)! + "=" + filter.value.addingPercentEncoding(withAllowedCharacters: unreserved)!
        }
        if let cursor { path += "&cursor=" + cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-_")))! }
        if cursor != nil, !refetch.isEmpty { path += "&refetch=" + refetch.joined(separator: ",").addingPercentEncoding(withAllowedCharacters: unreserved.union(.init(charactersIn: ",")))! }
        let response = try await send("GET", path, token: token, json: nil)
        guard (200..<300).contains(response.status) else { throw Self.error(response, Self.body(of: response)) }
        return response.body
    }

    /// A pull page's changes: with `decoder`, the records of the tables it knows straight as column values.
    package static func pullReply(from page: [UInt8], decoder: PullPageDecoder?) throws -> PullReply {
        if let decoder, let reply = decoder.decode(page) { return reply }
        let body = try parse(TransportResponse(status: 200, headers: [], body: page))
        guard case .array(let items)? = body["changes"], case .string(let next)? = body["cursor"], case .bool(let more)? = body["has_more"] else {
            throw ClientError(.local, "a pull reply of another shape")
        }
        var changes: [PulledRow] = []
        changes.reserveCapacity(items.count)
        for item in items {
            guard case .integer(let seq)? = item["seq"], case .string(let table)? = item["table"], case .string(let op)? = item["op"],
                  let operation = PulledRow.Operation(rawValue: op), let key = item["key"] ?? item["where"] else {
                throw ClientError(.local, "a pulled change of another shape")
            }
            changes.append(PulledRow(seq: seq, table: table, operation: operation, key: key, record: item["record"]))
        }
        var refetched: [String] = []
        if case .array(let names)? = body["refetched"] {
            refetched = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
        }
        return PullReply(changes: changes, cursor: next, hasMore: more, refetched: refetched)
    }

    public func push(_ mutations: [JSONValue], clientID: String, token: String?) async throws -> [PushVerdict] {
        let body = try await call("POST", "/sync/v1/push", token: token, json: .object([("client_id", .string(clientID)), ("mutations", .array(mutations))]))
        guard case .array(let results)? = body["results"] else { throw ClientError(.local, "a push reply of another shape") }
        return try results.map { result in
            guard case .string(let id)? = result["id"], case .string(let status)? = result["status"] else {
                throw ClientError(.local, "a push verdict of another shape")
            }
            if status == "applied", case .integer(let seq)? = result["seq"] {
                return PushVerdict(id: id, status: .applied(seq: seq), unconfirmed: result["changed"] == .bool(false) || result["replayed"] == .bool(true))
            }
            let code: String = if case .string(let c)? = result["error"]?["code"] { c } else { "unknown" }
            let message: String = if case .string(let m)? = result["error"]?["message"] { m } else { "rejected" }
            return PushVerdict(id: id, status: .rejected(code: code, message: message))
        }
    }

    // MARK: REST

    /// The row of `table` with primary key `key` as the caller sees it now, or nil.
    public func fetchRow(_ table: String, key: [(String, JSONValue)], token: String?) async throws -> JSONValue? {
        var query: [String] = []
        for (name, value) in key {
            let text: String
            switch value {
            case .string(let s): text = s
            case .integer(let i): text = String(i)
            default: text = value.jsonText
            }
            query.append("\(name)=eq.\(text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-_.")))!)")
        }
        guard case .array(let rows) = try await call("GET", "/rest/v1/\(table)?\(query.joined(separator: "&"))", token: token, json: nil) else {
            throw ClientError(.local, "a REST read of another shape")
        }
        return rows.first
    }

    /// Calls RPC function `name` with `arguments` (a JSON object) and returns its result.
    public func rpc(_ name: String, arguments: JSONValue, token: String?) async throws -> JSONValue {
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !name.isEmpty else { throw ClientError(.local, "\(name) is not a function name") }
        return try await call("POST", "/rest/v1/rpc/\(name)", token: token, json: arguments)
    }

    // MARK: Plumbing

    func call(_ method: String, _ path: String, token: String?, json: JSONValue?) async throws -> JSONValue {
        try Self.parse(try await send(method, path, token: token, json: json))
    }

    /// One request with a JSON body (or none) to `path` as the caller; the raw response.
    private func send(_ method: String, _ path: String, token: String?, json: JSONValue?) async throws -> TransportResponse {
        var headers = [("Accept", "application/json")]
        var body: [UInt8]?
        if let json {
            var writer = JSONWriter()
            writer.write(json)
            body = writer.bytes
            headers.append(("Content-Type", "application/json"))
        }
        return try await exchange(method, path, token: token, headers: headers, body: body)
    }

    /// One request to `path` as the caller (`token`, else the anon key), with `headers` beside the key's.
    /// A REST read (`GET`/`HEAD /rest/v1/…`) and an RPC call (`POST /rest/v1/rpc/…`: a read-only function runs on a
    /// replica) carry the latest consistency token a write answer gave (`X-Caravan-Consistency`), so that a server
    /// reading from replicas shows it this client's own writes.
    func exchange(_ method: String, _ path: String, token: String?, headers: [(String, String)], body: [UInt8]?) async throws -> TransportResponse {
        var sent = [("apikey", apiKey), ("Authorization", "Bearer \(token ?? apiKey)")] + headers
        let reads = (method == "GET" || method == "HEAD") && path.hasPrefix("/rest/v1/") || method == "POST" && path.hasPrefix("/rest/v1/rpc/")
        if reads, let latest = consistency.latest {
            sent.append((ConsistencyMemory.header, latest))
        }
        let response = try await transport.send(TransportRequest(method: method, url: baseURL + path, headers: sent, body: body))
        if let answered = response.header(ConsistencyMemory.header) { consistency.remember(answered) }
        return response
    }

    /// The response's JSON body; an error status as its `ClientError`.
    private static func parse(_ response: TransportResponse) throws -> JSONValue {
        let parsed = body(of: response)
        guard (200..<300).contains(response.status) else { throw error(response, parsed) }
        return parsed
    }

    /// The response's body as JSON (null when empty or not JSON).
    static func body(of response: TransportResponse) -> JSONValue {
        response.body.isEmpty ? JSONValue.null : ((try? JSONParser.parse(bytes: response.body)) ?? .null)
    }

    static func error(_ response: TransportResponse, _ body: JSONValue) -> ClientError {
        let code: String? = if case .string(let c)? = body["code"] { c } else if case .string(let c)? = body["error_code"] { c } else { nil }
        let message: String = if case .string(let m)? = body["message"] { m } else if case .string(let m)? = body["msg"] { m } else { "HTTP \(response.status)" }
        let retryAfter = response.header("Retry-After").flatMap(Double.init)
        switch response.status {
        case 409 where code == "CARAVAN_MUST_REFETCH":
            var error = ClientError(.mustRefetch, code: code, message)
            if case .string(let details)? = body["details"], details.hasPrefix("tables=") {
                error.refetchTables = details.dropFirst("tables=".count).split(separator: ",").map(String.init)
            }
            return error
        case 401: return ClientError(.unauthorized, code: code, message)
        case 400 where ["invalid_credentials", "refresh_token_not_found", "refresh_token_already_used", "session_not_found"].contains(code ?? ""):
            return ClientError(.unauthorized, code: code, message)
        case 408, 429, 500...: return ClientError(.transient, code: code, message, retryAfter: retryAfter)
        default: return ClientError(.refused, code: code, message)
        }
    }
}

/// The latest consistency token from a server's write answers (opaque: sent back as received).
private final class ConsistencyMemory: Sendable {
    static let header = "X-Caravan-Consistency"
    private let token = Mutex<String?>(nil)

    var latest: String? { token.withLock { $0 } }

    func remember(_ answered: String) {
        token.withLock { $0 = answered }
    }
}
