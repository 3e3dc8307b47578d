import CaravanAuth
import CaravanCore
import CaravanRealtime
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// `/realtime/v1`: the WebSocket endpoint (wire-protocol §4) and the REST broadcast endpoint.
///
/// The upgrade is decided on a router of its own: a request whose apikey (query `apikey` or header) does not verify,
/// or that arrives when `maxSockets` are open, is not upgraded and falls through to the HTTP router, which answers
/// 401 (`APIKeyMiddleware`) or 503.
struct RealtimeController {
    let realtime: RealtimeService
    let verifier: TokenVerifier

    static let path: RouterPath = "/realtime/v1/websocket"
    /// The most bytes the HTTP broadcast endpoint reads.
    static let maxBodyBytes = 1 << 20

    /// The upgrade router. A refused upgrade is answered as wire-protocol §4 says — 401 with the error JSON for a
    /// key that does not verify, 503 past the socket cap, 400 for a missing key or an unknown `vsn` — through
    /// `RefusedUpgradeAnswer`.
    func webSocketRouter() -> Router<RealtimeUpgradeContext> {
        let router = Router(context: RealtimeUpgradeContext.self)
        router.ws(Self.path, shouldUpgrade: { request, context in
            if let refusal = await self.refusal(of: request) {
                await RefusedUpgradeAnswer.record(refusal, on: context.channel)
                return .dontUpgrade
            }
            await RefusedUpgradeAnswer.remove(from: context.channel)
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, context in
            guard let (version, apikey) = Self.parameters(context.request),
                  let session = realtime.openSession(version: version, apikey: apikey) else {
                try await outbound.close(.policyViolation, reason: "too many sockets")
                return
            }
            let channel = context.requestContext.channel
            let writer = WebSocketFrameWriter(channel: channel)
            await session.run(inbound: InboundFrames(messages: inbound.messages(maxSize: 1 << 24)), write: { frames in
                try await writer.write(frames)
            }, terminate: {
                // A dropped socket (heartbeat timeout, a client that stopped reading): the connection closes, so the
                // reads end and a blocked write fails.
                channel.close(promise: nil)
            })
        })
        return router
    }

    /// The version and apikey of an upgrade request, nil when the version is unknown or the key is missing.
    static func parameters(_ request: Request) -> (ProtocolVersion, String)? {
        let query = request.uri.queryParameters
        guard let version = ProtocolVersion(vsn: query["vsn"].map(String.init)) else { return nil }
        guard let apikey = query["apikey"].map(String.init) ?? request.headers[APIKeyMiddleware.apikeyField] else { return nil }
        return (version, apikey)
    }

    /// Why an upgrade request is refused, as the answer to send; nil when it may upgrade.
    private func refusal(of request: Request) async -> RefusedUpgradeAnswer.Answer? {
        guard let (_, apikey) = Self.parameters(request) else {
            return .init(status: .badRequest, body: Array(#"{"message":"Expected a WebSocket upgrade with an apikey and vsn 1.0.0 or 2.0.0"}"#.utf8))
        }
        do {
            _ = try await verifier.identity(for: apikey)
        } catch {
            let (_, _, object) = PostgRESTError.wire(for: error, role: nil, logger: Logger(label: "caravan.realtime"))
            return .init(status: .unauthorized, body: Array(object.jsonText.utf8))
        }
        guard realtime.hub.metrics.snapshot.sockets < realtime.limits.maxSockets else {
            return .init(status: .serviceUnavailable, body: Array(#"{"message":"Too many connections"}"#.utf8))
        }
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

/// The frames of a WebSocket, text and binary (the session reads a binary frame as the vsn 2.0.0 serializer's
/// user-broadcast push and ignores any other).
struct InboundFrames: AsyncSequence, Sendable {
    typealias Element = SocketFrame
    let messages: WebSocketInboundMessageStream

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: WebSocketInboundMessageStream.AsyncIterator

        mutating func next() async throws -> SocketFrame? {
            switch try await base.next() {
            case .text(let text)?: .text(text)
            case .binary(let buffer)?: .binary(Array(buffer.readableBytesView))
            case nil: nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: messages.makeAsyncIterator()) }
}

/// The context of the upgrade router: Hummingbird's WebSocket context, plus the connection's channel, where a
/// refusal is recorded.
struct RealtimeUpgradeContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

/// CaravanAuth's verifier as realtime's token authenticator.
struct VerifierAuthenticator: TokenAuthenticator {
    let verifier: TokenVerifier

    func identity(for token: String) async throws -> Identity {
        try await verifier.identity(for: token)
    }
}
