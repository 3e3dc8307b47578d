import NIOCore
import NIOHTTP1
import Synchronization

/// The answer to a refused WebSocket upgrade. hummingbird-websocket answers every refused upgrade with an empty 400;
/// the realtime route records why it refused (`record`), and this handler, which sits between the HTTP encoder and
/// the HTTP/1 codec of every connection, turns that empty 400 into the recorded answer: 401 with the PostgREST error
/// JSON for a key that does not verify, 503 when the socket cap is reached, 400 with a message otherwise. A connection
/// that upgrades removes it first, so WebSocket frames never pass it.
final class RefusedUpgradeAnswer: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    struct Answer: Sendable {
        let status: HTTPResponseStatus
        let body: [UInt8]
    }

    private let recorded = Mutex<Answer?>(nil)
    /// The answer being written (its head replaced; its body goes before the end).
    private let replacing = Mutex<Answer?>(nil)

    /// Records why the upgrade of `channel`'s request is refused; what Hummingbird then writes is replaced.
    static func record(_ answer: Answer, on channel: any Channel) async {
        guard let handler = try? await channel.pipeline.handler(type: RefusedUpgradeAnswer.self).get() else { return }
        handler.recorded.withLock { $0 = answer }
    }

    /// Takes the handler out of `channel`'s pipeline before an upgrade.
    static func remove(from channel: any Channel) async {
        guard let handler = try? await channel.pipeline.handler(type: RefusedUpgradeAnswer.self).get() else { return }
        try? await channel.pipeline.removeHandler(handler).get()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status == .badRequest:
            guard let answer = recorded.withLock({ answer in defer { answer = nil }; return answer }) else {
                context.write(data, promise: promise)
                return
            }
            replacing.withLock { $0 = answer }
            head.status = answer.status
            head.headers.replaceOrAdd(name: "Content-Type", value: "application/json; charset=utf-8")
            head.headers.replaceOrAdd(name: "Content-Length", value: String(answer.body.count))
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end(let trailers):
            if let answer = replacing.withLock({ answer in defer { answer = nil }; return answer }) {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))), promise: nil)
            }
            context.write(wrapOutboundOut(.end(trailers)), promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}
