import CaravanCore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// The first handler of every connection, on raw bytes: it bounds each request head (the request line and the header
/// fields) and the time it takes to arrive, closes a connection that sends nothing, and answers what the HTTP parser
/// refuses — with a status, `Connection: close` and a JSON body, then a close — so no malformed or slow client holds a
/// connection. Event-loop bound: every method runs on the channel's event loop.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Why a connection is answered and closed.
    enum Refusal {
        case headersTooLarge, requestLineTooLong, headTimeout, malformed, overCapacity

        var status: HTTPResponse.Status {
            switch self {
            case .headersTooLarge: .requestHeaderFieldsTooLarge
            case .requestLineTooLong: .uriTooLong
            case .headTimeout: .requestTimeout
            case .malformed: .badRequest
            case .overCapacity: .serviceUnavailable
            }
        }

        var code: String {
            switch self {
            case .headersTooLarge: "CARAVAN_HEADERS_TOO_LARGE"
            case .requestLineTooLong: "CARAVAN_URI_TOO_LONG"
            case .headTimeout: "CARAVAN_REQUEST_TIMEOUT"
            case .malformed: "CARAVAN_BAD_REQUEST"
            case .overCapacity: "CARAVAN_TOO_MANY_CONNECTIONS"
            }
        }

        var message: String {
            switch self {
            case .headersTooLarge: "The request's header fields are too large"
            case .requestLineTooLong: "The request line is too long"
            case .headTimeout: "The request head did not arrive in time"
            case .malformed: "The request is not valid HTTP/1.1"
            case .overCapacity: "The server has too many open connections; retry later"
            }
        }
    }

    private enum Phase {
        /// No byte of a request yet: the idle timer runs (before the first request only; afterwards Hummingbird's
        /// keep-alive timer does).
        case awaitingFirstRequest
        /// Reading a head.
        case head(HeadProgress)
        /// The head is complete: the body and the response are the HTTP layer's business.
        case inRequest
        /// The request ended; the next byte starts a new head.
        case awaitingNextRequest
        case refused
    }

    /// How much of a head has arrived: the request line's bytes, then the header fields' bytes, and the last two
    /// bytes seen (to find the blank line that ends the head across reads).
    private struct HeadProgress {
        var lineBytes = 0
        var lineEnded = false
        var fieldBytes = 0
        var last: (UInt8, UInt8) = (0, 0)
    }

    private let limits: ConnectionLimits
    private let refuseAtOnce: Bool
    private let logger: Logger
    private var phase = Phase.awaitingFirstRequest
    private var started = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(limits: ConnectionLimits, overCapacity: Bool, logger: Logger) {
        self.limits = limits
        self.refuseAtOnce = overCapacity
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    /// Once the connection is active: refuse it when past the cap, else give it the idle timeout to begin a request.
    private func start() {
        guard !started else { return }
        started = true
        if refuseAtOnce {
            refuse(.overCapacity)
        } else {
            schedule(after: limits.idleTimeout) { guardHandler in guardHandler.closeSilent() }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch phase {
        case .refused:
            return  // the answer is on its way; the rest is dropped
        case .inRequest:
            context.fireChannelRead(data)
            return
        case .awaitingFirstRequest, .awaitingNextRequest:
            phase = .head(HeadProgress())
            schedule(after: limits.headerTimeout) { guardHandler in guardHandler.refuse(.headTimeout) }
        case .head:
            break
        }
        if let refusal = scan(unwrapInboundIn(data)) {
            refuse(refusal)
            return
        }
        context.fireChannelRead(data)
    }

    /// Counts the head's bytes in `buffer`; the refusal when the request line or the header fields pass their limit.
    /// It jumps from line feed to line feed (`memchr`) rather than looking at every byte: an oversized head is
    /// counted in microseconds, so it never holds the event loop that other connections share.
    private func scan(_ buffer: ByteBuffer) -> Refusal? {
        guard case .head(var progress) = phase else { return nil }
        let (refusal, ended) = buffer.withUnsafeReadableBytes { bytes in Self.scan(bytes, &progress, limits: limits) }
        if ended {
            timer?.cancel()
            phase = .inRequest
        } else {
            phase = .head(progress)
        }
        return refusal
    }

    /// The refusal, if any, and whether the head ended within `bytes`.
    private static func scan(_ bytes: UnsafeRawBufferPointer, _ progress: inout HeadProgress,
                             limits: ConnectionLimits) -> (Refusal?, ended: Bool) {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        func lineFeed(from start: Int) -> Int? {
            guard start < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + start, Int32(lf), bytes.count - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
        /// The byte `back` places before `index`, this read's or the last ones of earlier reads.
        func byte(before index: Int, back: Int) -> UInt8 {
            let position = index - back
            if position >= 0 { return bytes[position] }
            return position == -1 ? progress.last.1 : progress.last.0
        }
        defer {
            if bytes.count >= 2 {
                progress.last = (bytes[bytes.count - 2], bytes[bytes.count - 1])
            } else if bytes.count == 1 {
                progress.last = (progress.last.1, bytes[0])
            }
        }
        var index = 0
        if !progress.lineEnded {
            guard let end = lineFeed(from: 0) else {
                progress.lineBytes += bytes.count
                return (progress.lineBytes > limits.maxRequestLineBytes ? .requestLineTooLong : nil, false)
            }
            progress.lineBytes += end
            if progress.lineBytes > limits.maxRequestLineBytes { return (.requestLineTooLong, false) }
            progress.lineEnded = true
            index = end + 1
        }
        // The head ends at a line feed right after another (`\n\n`) or after `\n\r`.
        while let feed = lineFeed(from: index) {
            let counted = progress.fieldBytes + feed - index + 1
            if counted > limits.maxHeaderBytes { return (.headersTooLarge, false) }
            progress.fieldBytes = counted
            let previous = byte(before: feed, back: 1)
            if previous == lf || (previous == cr && byte(before: feed, back: 2) == lf) { return (nil, true) }
            index = feed + 1
        }
        progress.fieldBytes += bytes.count - index
        return (progress.fieldBytes > limits.maxHeaderBytes ? .headersTooLarge : nil, false)
    }

    /// The HTTP layer read a whole request: the next byte starts a new head.
    func requestEnded() {
        if case .inRequest = phase { phase = .awaitingNextRequest }
    }

    /// A connection that sent no request within the idle timeout: closed, and logged.
    private func closeSilent() {
        guard let context else { return }
        logger.notice("HTTP connection closed: no request within the idle timeout",
                      metadata: ["http.refusal": "idle", "client.address": .string(Self.peer(of: context.channel))])
        context.close(promise: nil)
    }

    /// The client's address for the log, as the socket has it.
    static func peer(of channel: any Channel) -> String {
        channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
    }

    /// Answers `refusal` on the raw connection (past every HTTP encoder) and closes it; the first refusal wins.
    func refuse(_ refusal: Refusal) {
        guard let context else { return }
        if case .refused = phase { return }
        phase = .refused
        timer?.cancel()
        logger.notice("HTTP connection refused: \(refusal.message)",
                      metadata: ["http.refusal": .string(refusal.code), "http.status": .stringConvertible(refusal.status.code),
                                 "client.address": .string(Self.peer(of: context.channel))])
        let body = #"{"code":"\#(refusal.code)","details":null,"hint":null,"message":"\#(refusal.message)"}"#
        var head = "HTTP/1.1 \(refusal.status.code) \(refusal.status.reasonPhrase)\r\nConnection: close\r\n"
        head += "Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"
        if refusal == .overCapacity { head += "Retry-After: 1\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n\r\n"
        let buffer = context.channel.allocator.buffer(string: head + body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func schedule(after delay: Duration, _ action: @escaping @Sendable (ConnectionGuard) -> Void) {
        timer?.cancel()
        guard let context else { return }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(delay)) { action(loopBound.value) }
    }
}

/// Added last on the channel: turns an error of the HTTP parser (a control byte in a header, raw bytes in the
/// request line, a bad chunk size, a head past the parser's own limits) into the guard's answer and a close, where it
/// would otherwise leave the connection open without an answer. Passes everything else on untouched.
final class ParseErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let refusal: ConnectionGuard.Refusal = parseError == .headerOverflow ? .headersTooLarge : .malformed
        if let connectionGuard = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self) {
            connectionGuard.refuse(refusal)
        } else {
            context.close(promise: nil)
        }
    }
}

/// Between the head of a request with a body and its end, each read must come within the body timeout. When it
/// does not and no answer has begun, the body's reader is failed with `requestTimeout`, so the endpoint answers
/// `408` in its own error shape, marked `Connection: close`, and the connection is closed after it (or after another
/// timeout, should no answer come); an answer already under way is cut short by a close. Hummingbird's idle timer
/// counts from the same last read: its close of a connection whose body stalled is answered the same way first.
/// The end of a request tells the guard that a new head may begin.
final class RequestBodyTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: Duration
    private let logger: Logger
    private var timer: Scheduled<Void>?
    /// A request's head arrived and its end has not.
    private var readingBody = false
    /// The current request's answer has begun (its final head went out), whether or not its body was read.
    private var answerStarted = false
    /// The body stalled: the answer to come closes the connection.
    private var expired = false

    init(timeout: Duration, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            readingBody = true
            answerStarted = false
            schedule(context, then: .answer)
        case .body:
            schedule(context, then: .answer)
        case .end:
            readingBody = false
            timer?.cancel()
            timer = nil
            (try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self))?.requestEnded()
        }
        context.fireChannelRead(data)
    }

    /// What the timer does when it fires: answer the stall, or (no answer came) close.
    private enum Expiry {
        case answer, close
    }

    private func schedule(_ context: ChannelHandlerContext, then expiry: Expiry) {
        timer?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            let (handler, context) = bound.value
            switch expiry {
            case .answer: handler.bodyStalled(context)
            case .close: context.close(promise: nil)
            }
        }
    }

    /// No read within the timeout: the reader of the body fails (and the endpoint answers 408), unless the request
    /// was answered already (then the connection just closes); without an answer within another timeout, the
    /// connection is closed. Once only: the body timer and Hummingbird's idle timer may both come due in one tick.
    private func bodyStalled(_ context: ChannelHandlerContext) {
        guard !expired else { return }
        logger.notice("HTTP request body stalled: no read within the body timeout", metadata: [
            "http.refusal": "CARAVAN_REQUEST_TIMEOUT", "client.address": .string(ConnectionGuard.peer(of: context.channel))])
        guard !answerStarted else {
            context.close(promise: nil)
            return
        }
        expired = true
        schedule(context, then: .close)
        context.fireErrorCaught(CaravanError(.requestTimeout, "The request body did not arrive in time"))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.kind != .informational:
            answerStarted = true
            guard expired else { break }
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        case .end:
            guard expired else { break }
            let channel = context.channel
            context.writeAndFlush(data).whenComplete { result in
                promise?.completeWith(result)
                channel.close(promise: nil)
            }
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if readingBody, !answerStarted, mode == .all {
            // Hummingbird's idle timer on a stalled body: the 408 goes out first, then the close.
            if !expired { bodyStalled(context) }
            if let promise { context.channel.closeFuture.cascade(to: promise) }
            return
        }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }
}
