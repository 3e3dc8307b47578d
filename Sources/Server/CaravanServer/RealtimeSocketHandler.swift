import CaravanRealtime
import NIOCore
import NIOWebSocket

/// A realtime WebSocket served on its connection's event loop (`RealtimeUpgradeChannel` puts it in the pipeline after
/// the upgrade, behind NIO's frame decoder and `NIOWebSocketFrameAggregator`): text and binary messages go to the
/// session (`RealtimeSession.receive`), pings are answered, a close is echoed and ends the connection, and the
/// session's frames are written from the outbox's wake-ups. No task waits on the socket, so an idle one holds only
/// its channel and its session.
///
/// The session's frames are encoded here as one buffer of unmasked server frames (`ServerWebSocketFrames.encode`) and
/// written from the context of the pipeline's first handler (the connection guard, which only reads), below NIO's
/// frame encoder: a batch is one write and one flush. The write completes when the bytes reached the kernel, so a
/// client that stops reading holds it, and realtime's stall check drops the socket.
final class RealtimeSocketHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let session: RealtimeSession
    private var context: ChannelHandlerContext?
    /// Where the encoded frames are written from: the pipeline's first handler (the connection guard, which
    /// `GuardedHTTPChannel` always puts there; without it nothing can be written).
    private var head: ChannelHandlerContext?
    /// The session asked to stop reading (`receive` answered false); a read the channel asked for meanwhile waits.
    private var isReadingPaused = false
    private var isReadWaiting = false
    /// A close frame went out: nothing more is written.
    private var isClosing = false

    init(session: RealtimeSession) {
        self.session = session
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        head = try? context.pipeline.syncOperations.context(handlerType: ConnectionGuard.self)
        let session = self.session
        session.start(on: Transport(channel: context.channel, handler: NIOLoopBound(self, eventLoop: context.eventLoop)))
        // However the connection ends (the client, a failed write, the server's drop), the session ends once (at
        // once if it is already closed).
        context.channel.closeFuture.whenComplete { _ in session.transportEnded() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        head = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var payload = frame.unmaskedData
            deliver(.text(payload.readString(length: payload.readableBytes) ?? ""))
        case .binary:
            deliver(.binary(Array(frame.unmaskedData.readableBytesView)))
        case .ping:
            guard !isClosing else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            // The client closes: echo its code (RFC 6455 §5.5.1), then end the connection.
            var payload = frame.unmaskedData
            close(context: context, code: payload.readWebSocketErrorCode() ?? .normalClosure)
        default:
            break
        }
    }

    private func deliver(_ frame: SocketFrame) {
        if !session.receive(frame) { isReadingPaused = true }
    }

    func read(context: ChannelHandlerContext) {
        if isReadingPaused {
            isReadWaiting = true
        } else {
            context.read()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A frame the decoder or the aggregator refused (NIO's protocol error handler, ahead in the pipeline, has
        // answered the decoder's), or a failed connection.
        close(context: context, code: .protocolError)
    }

    /// Sends a close frame with `code` (once), then closes the connection.
    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode) {
        guard !isClosing else { return }
        isClosing = true
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: written)
        let channel = context.channel
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    /// The session's frames, encoded as one buffer written from the head of the pipeline and flushed once.
    fileprivate func write(_ frames: [SocketFrame], completion: @escaping @Sendable (Bool) -> Void) {
        guard let context, let head, !isClosing, !frames.isEmpty else { return completion(false) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { result in
            if case .success = result { completion(true) } else { completion(false) }
        }
        head.writeAndFlush(NIOAny(ServerWebSocketFrames.encode(frames, allocator: context.channel.allocator)), promise: promise)
    }

    /// The session dropped the socket (a heartbeat timeout, a stalled client, a shutdown): the client is told it goes
    /// away, and the connection ends.
    fileprivate func closeBySession() {
        guard let context else { return }
        close(context: context, code: .goingAway)
        // A client that stopped reading never takes the close frame: the connection ends now either way.
        context.close(promise: nil)
    }

    fileprivate func resumeReading() {
        isReadingPaused = false
        guard isReadWaiting, let context else { return }
        isReadWaiting = false
        context.read()
    }

    /// The session's view of the connection: each call hops to the connection's event loop.
    struct Transport: SocketTransport {
        let channel: any Channel
        let handler: NIOLoopBound<RealtimeSocketHandler>

        func write(_ frames: [SocketFrame], completion: @escaping @Sendable (Bool) -> Void) {
            onLoop { $0.write(frames, completion: completion) }
        }

        func close() { onLoop { $0.closeBySession() } }

        func resumeReading() { onLoop { $0.resumeReading() } }

        private func onLoop(_ body: @escaping @Sendable (RealtimeSocketHandler) -> Void) {
            if channel.eventLoop.inEventLoop {
                body(handler.value)
            } else {
                let handler = self.handler
                channel.eventLoop.execute { body(handler.value) }
            }
        }
    }
}
