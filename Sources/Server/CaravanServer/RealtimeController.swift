import CaravanAuth
import CaravanCore
import CaravanRealtime
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// `/realtime/v1`: the WebSocket endpoint (wire-protocol §4) and the REST broadcast endpoint.
///
/// The upgrade is decided by `accept` (`RealtimeUpgradeChannel` asks it): a request whose apikey (query `apikey` or
/// header) does not verify, or that arrives when `maxSockets` are open, is not upgraded and answered 401 or 503; the
/// same request without upgrade headers reaches the HTTP routes, which answer alike.
struct RealtimeController {
    let realtime: RealtimeService
    let verifier: TokenVerifier

    static let webSocketPath = "/realtime/v1/websocket"
    static let path = RouterPath(webSocketPath)
    /// The most bytes the HTTP broadcast endpoint reads.
    static let maxBodyBytes = 1 << 20

    /// Decides an upgrade request (`RealtimeUpgradeChannel`): the session for a socket on `path` with a known `vsn`,
    /// a key that verifies and room under `maxSockets`. A refusal is answered as wire-protocol §4 says — 401 with the
    /// error JSON for a key that does not verify, 503 past the socket cap, 400 for a missing key or an unknown
    /// `vsn`, 404 for another path — through `RefusedUpgradeAnswer`.
    func accept(_ head: HTTPRequestHead, channel: any Channel) async -> RealtimeSession? {
        let uri = URI(head.uri)
        let apikeyHeader = head.headers[APIKeyMiddleware.apikeyField.rawName].first
        let refusal: RefusedUpgradeAnswer.Answer?
        if uri.path != Self.webSocketPath {
            refusal = .init(status: .notFound, body: Array(#"{"message":"No WebSocket endpoint at this path"}"#.utf8))
        } else {
            refusal = await self.refusal(query: uri.queryParameters, apikeyHeader: apikeyHeader)
        }
        if let refusal {
            await RefusedUpgradeAnswer.record(refusal, on: channel)
            return nil
        }
        guard let (version, apikey) = Self.parameters(uri.queryParameters, apikeyHeader: apikeyHeader),
              let session = realtime.openSession(version: version, apikey: apikey) else {
            await RefusedUpgradeAnswer.record(Self.tooManySockets, on: channel)
            return nil
        }
        await RefusedUpgradeAnswer.remove(from: channel)
        return session
    }

    static let tooManySockets = RefusedUpgradeAnswer.Answer(status: .serviceUnavailable, body: Array(#"{"message":"Too many connections"}"#.utf8))

    /// The version and apikey of an upgrade request, nil when the version is unknown or the key is missing.
    static func parameters(_ query: Parameters, apikeyHeader: String?) -> (ProtocolVersion, String)? {
        guard let version = ProtocolVersion(vsn: query["vsn"].map(String.init)) else { return nil }
        guard let apikey = query["apikey"].map(String.init) ?? apikeyHeader else { return nil }
        return (version, apikey)
    }

    /// Why an upgrade request is refused, as the answer to send; nil when it may upgrade.
    private func refusal(query: Parameters, apikeyHeader: String?) async -> RefusedUpgradeAnswer.Answer? {
        guard let (_, apikey) = Self.parameters(query, apikeyHeader: apikeyHeader) else {
            return .init(status: .badRequest, body: Array(#"{"message":"Expected a WebSocket upgrade with an apikey and vsn 1.0.0 or 2.0.0"}"#.utf8))
        }
        do {
            _ = try await verifier.identity(for: apikey)
        } catch {
            let (_, _, object) = PostgRESTError.wire(for: error, role: nil, logger: Logger(label: "caravan.realtime"))
            return .init(status: .unauthorized, body: Array(object.jsonText.utf8))
        }
        guard realtime.hub.metrics.snapshot.sockets < realtime.limits.maxSockets else { return Self.tooManySockets }
        return nil
    }

    /// HTTP routes: the fall-through of a refused upgrade, and `POST /realtime/v1/api/broadcast`.
    func register(on router: Router<CaravanRequestContext>) {
        router.get(Self.path) { _, _ -> Response in
            if realtime.hub.metrics.snapshot.sockets >= realtime.limits.maxSockets {
                return Self.json(.serviceUnavailable, #"{"message":"Too many connections"}"#)
            }
            return Self.json(.badRequest, #"{"message":"Expected a WebSocket upgrade with vsn 1.0.0 or 2.0.0"}"#)
        }
        router.post("/realtime/v1/api/broadcast") { request, context -> Response in
            try await broadcast(request, context: context)
        }
        router.post("/realtime/v1/api/broadcast/:topic/events/:event") { request, context -> Response in
            let body = try await Self.body(request)
            guard let topic = context.parameters.get("topic"), let event = context.parameters.get("event") else {
                return Self.json(.badRequest, #"{"message":"topic and event are required"}"#)
            }
            // supabase-swift's `httpSend` and its fallback for an unsubscribed channel add `?private=true` for a
            // private channel: sent only when the caller may, as on the other endpoint.
            let isPrivate = request.uri.queryParameters["private"] == "true"
            let name = "realtime:" + topic
            if isPrivate, let refusal = await Self.privateSendRefusal(to: name, identity: context.identity, hub: realtime.hub) {
                return refusal
            }
            await realtime.hub.broadcast(Broadcast(topic: name, event: event, payload: .json(body), isPrivate: isPrivate), sender: nil, includeSelf: true)
            return Response(status: .accepted)
        }
    }

    /// `{"messages":[{"topic":"<name>","event":"…","payload":{…},"private":true?}]}` → 202. A private message is
    /// sent only when the caller's `realtime.messages` insert policies admit it on that channel; otherwise nothing of
    /// the request is sent and the answer is 403 naming the channel.
    private func broadcast(_ request: Request, context: CaravanRequestContext) async throws -> Response {
        guard case .array(let messages)? = try await Self.body(request)["messages"] else {
            return Self.json(.badRequest, #"{"message":"messages must be an array"}"#)
        }
        var broadcasts: [Broadcast] = []
        for message in messages {
            guard case .string(let topic)? = message["topic"], case .string(let event)? = message["event"] else {
                return Self.json(.badRequest, #"{"message":"each message needs a topic and an event"}"#)
            }
            let name = topic.hasPrefix("realtime:") ? topic : "realtime:" + topic
            var isPrivate = false
            if case .bool(true)? = message["private"] { isPrivate = true }
            if isPrivate, let refusal = await Self.privateSendRefusal(to: name, identity: context.identity, hub: realtime.hub) {
                return refusal
            }
            broadcasts.append(Broadcast(topic: name, event: event, payload: .json(message["payload"] ?? .object([])), isPrivate: isPrivate))
        }
        for broadcast in broadcasts {
            await realtime.hub.broadcast(broadcast, sender: nil, includeSelf: true)
        }
        return Response(status: .accepted)
    }

    /// nil when `identity` may send on the private channel `topic` (`realtime:<name>`); otherwise the 403 naming it.
    private static func privateSendRefusal(to topic: String, identity: Identity?, hub: RealtimeHub) async -> Response? {
        let channel = RealtimeTopic.channelName(topic)
        if let identity, await hub.maySendPrivately(to: channel, identity: identity) { return nil }
        return json(.forbidden, JSONValue.object([("message", .string(ChannelRefusal.write(channel)))]).jsonText)
    }

    private static func body(_ request: Request) async throws -> JSONValue {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body(atMost: maxBodyBytes) {
                HTTPError(.contentTooLarge, message: "The body is larger than \(maxBodyBytes) bytes")
            }
        } catch let error as CaravanError where error.code == .requestTimeout {
            throw HTTPError(.requestTimeout, message: error.message)
        }
        do {
            return try JSONParser.parse(bytes: Array(buffer.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "The body is not valid JSON")
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// CaravanAuth's verifier as realtime's token authenticator.
struct VerifierAuthenticator: TokenAuthenticator {
    let verifier: TokenVerifier

    func identity(for token: String) async throws -> Identity {
        try await verifier.identity(for: token)
    }
}
