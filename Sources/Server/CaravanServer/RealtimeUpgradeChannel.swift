import CaravanRealtime
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// HTTP/1.1 with the realtime WebSocket upgrade (`/realtime/v1/websocket`). As hummingbird-websocket's channel, but an
/// upgraded socket is not served by a task: `RealtimeSocketHandler` serves it on the connection's event loop and the
/// connection's task ends at the upgrade. An idle socket then holds its channel and its session, and no task stacks
/// (a task per socket kept ~23 KiB of stack slabs and async state alive; BENCHMARKS.md, realtime idle sockets).
struct RealtimeUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        /// A realtime socket, running.
        case realtime
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade request that was refused: answered 400 (which `RefusedUpgradeAnswer` rewrites).
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let maxFrameSize: Int
    /// Decides an upgrade request: the session to serve, or nil to refuse it (the decider records the answer for
    /// `RefusedUpgradeAnswer`). Nil: no realtime, every upgrade is refused.
    let accept: (@Sendable (HTTPRequestHead, any Channel) async -> RealtimeSession?)?

    init(responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, maxFrameSize: Int,
         accept: (@Sendable (HTTPRequestHead, any Channel) async -> RealtimeSession?)?) {
        self.responder = Self.upgradeRedirecting(responder)
        self.http1 = http1
        self.maxFrameSize = maxFrameSize
        self.accept = accept
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let accept = self.accept
            let maxFrameSize = self.maxFrameSize
            // The session accepted for this connection, until the upgrade hands it to its handler (or the
            // connection ends first: then its slot is freed).
            let accepted = NIOLoopBoundBox<(session: RealtimeSession?, attempted: Bool)>((nil, false), eventLoop: channel.eventLoop)
            channel.closeFuture.whenComplete { _ in
                accepted.value.session?.finish()
                accepted.value.session = nil
            }
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: maxFrameSize,
                shouldUpgrade: { channel, head in
                    accepted.value.attempted = true
                    guard let accept else { return channel.eventLoop.makeSucceededFuture(nil) }
                    let promise = channel.eventLoop.makePromise(of: RealtimeSession?.self)
                    promise.completeWithTask { await accept(head, channel) }
                    return promise.futureResult.map { session in
                        guard let session else { return nil }
                        // The connection ended while the request was checked: its close has passed already.
                        guard channel.isActive else {
                            session.finish()
                            return nil
                        }
                        accepted.value.session = session
                        return HTTPHeaders()
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let session = accepted.value.session else { throw ChannelError.ioOnClosedChannel }
                        accepted.value.session = nil
                        // A realtime frame is small: a smaller first read buffer than NIO's 2 KiB, kept by every
                        // idle socket (it grows for larger reads).
                        try channel.syncOptions?.setOption(ChannelOptions.recvAllocator,
                                                           value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536))
                        try channel.pipeline.syncOperations.addHandler(
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16, maxAccumulatedFrameSize: maxFrameSize))
                        try channel.pipeline.syncOperations.addHandler(RealtimeSocketHandler(session: session))
                        return .realtime
                    }
                })
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration(upgraders: [upgrader], notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try channel.pipeline.syncOperations.addHandlers(self.http1.additionalChannelHandlers())
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                    let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                    return accepted.value.attempted ? .failedUpgrade(asyncChannel) : .notUpgraded(asyncChannel)
                }
            })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: upgrade)
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // Hummingbird and the connection guard answer errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates the fields
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgradeResult: result, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .realtime:
                return  // served by its handler from now on
            case .notUpgraded(let http1):
                await handleHTTP(asyncChannel: http1, logger: logger)
            case .failedUpgrade(let http1):
                await Self.answerFailedUpgrade(http1, logger: logger)
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("the connection closed before its first request")
        } catch {
            logger.debug("a connection ended before its upgrade was decided", metadata: ["error": "\(error)"])
        }
    }

    /// An empty 400 that closes the connection (`RefusedUpgradeAnswer` gives it the recorded status and body).
    private static func answerFailedUpgrade(_ channel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        do {
            try await channel.executeThenClose { _, outbound in
                try await outbound.write(contentsOf: [.head(HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])),
                                                      .end(nil)])
            }
        } catch {
            logger.trace("the refused upgrade's answer could not be written", metadata: ["error": "\(error)"])
        }
    }

    /// NIO's upgrade only happens on a connection's first request: a later request asking for a WebSocket is
    /// redirected to the same address with the connection closed, so that the client upgrades on a new one (as
    /// hummingbird-websocket does).
    private static func upgradeRedirecting(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct RedirectedUpgrade: Error {}
        return { request, responseWriter, channel in
            guard request.headers[.upgrade] == "websocket" else {
                return try await responder(request, responseWriter, channel)
            }
            var location = request.uri.path
            if let query = request.uri.query { location += "?\(query)" }
            try await responseWriter.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw RedirectedUpgrade()
        }
    }
}
