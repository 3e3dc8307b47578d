import CaravanCore
import Foundation
import Logging
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// How a message travels.
public enum MessageChannel: String, Sendable {
    case email
    case sms
}

/// A code on its way to a user.
public struct OutgoingMessage: Sendable, Hashable {
    public let channel: MessageChannel
    public let recipient: String
    public let subject: String
    public let body: String

    public init(channel: MessageChannel, recipient: String, subject: String, body: String) {
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.body = body
    }
}

/// Where one-time codes leave the server.
public protocol MessageSender: Sendable {
    func send(_ message: OutgoingMessage) async throws
}

/// The development sender: writes every message to the log and to the `auth_outbox` table, where developers and
/// tests read the codes.
public struct OutboxSender: MessageSender {
    let pipeline: WritePipeline
    let catalog: Catalog
    let logger: Logger

    public init(pipeline: WritePipeline, catalog: Catalog, logger: Logger) {
        self.pipeline = pipeline
        self.catalog = catalog
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        let row = RowValues([
            "channel": .text(message.channel.rawValue), "recipient": .text(message.recipient),
            "subject": .text(message.subject), "body": .text(message.body),
        ])
        let dayAgo = Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 - 86_400) * 1_000_000)
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            // Messages older than a day are pruned: the outbox is for reading codes now, not an archive of them.
            _ = try tx.delete(from: AuthSchema.outbox, where: .compare(try AuthSchema.outbox.requireColumn("created_at"), .lt, .text(dayAgo)))
            return try tx.insert([row], into: AuthSchema.outbox, conflict: nil)
        }
        logger.notice("auth message (development outbox)", metadata: [
            "message.channel": .string(message.channel.rawValue), "message.recipient": .string(message.recipient),
            "message.body": .string(message.body),
        ])
    }
}

/// Email over an SMTP relay (plain SMTP, optional AUTH PLAIN); anything else goes to `fallback`. Conversations block
/// a thread each, so they run on a pool of their own: a slow relay never holds the threads password hashing needs.
public final class SMTPSender: MessageSender {
    let configuration: SMTPConfiguration
    let fallback: any MessageSender
    let pool: NIOThreadPool

    public init(configuration: SMTPConfiguration, fallback: any MessageSender, threads: Int = 4) {
        self.configuration = configuration
        self.fallback = fallback
        self.pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    deinit { pool.shutdownGracefully { _ in } }

    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .email else { return try await fallback.send(message) }
        let configuration = self.configuration
        try await pool.runIfActive { try SMTPSession.deliver(message, via: configuration) }
    }
}

/// One blocking SMTP conversation (run on a thread pool): EHLO, optional AUTH PLAIN, MAIL, RCPT, DATA, QUIT.
enum SMTPSession {
    static func deliver(_ message: OutgoingMessage, via configuration: SMTPConfiguration) throws {
        for field in [message.recipient, configuration.from] where field.contains("\r") || field.contains("\n") || field.contains(">") {
            throw CaravanError(.invalidValue, "address contains a forbidden character")
        }
        let connection = try Connection(host: configuration.host, port: configuration.port)
        defer { connection.close() }
        try connection.expect(220)
        try connection.command("EHLO caravan", expect: 250)
        if let username = configuration.username, let password = configuration.password {
            let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            try connection.command("AUTH PLAIN \(token)", expect: 235)
        }
        try connection.command("MAIL FROM:<\(configuration.from)>", expect: 250)
        try connection.command("RCPT TO:<\(message.recipient)>", expect: 250)
        try connection.command("DATA", expect: 354)
        let subject = message.subject.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        let body = message.body.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }.joined(separator: "\r\n")
        try connection.command("From: <\(configuration.from)>\r\nTo: <\(message.recipient)>\r\nSubject: \(subject)\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n\r\n\(body)\r\n.", expect: 250)
        try? connection.command("QUIT", expect: 221)
    }

    final class Connection {
        let fd: Int32
        var buffer: [UInt8] = []

        init(host: String, port: Int) throws {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else {
                throw CaravanError(.storageUnavailable, "cannot resolve SMTP host \(host)")
            }
            defer { freeaddrinfo(result) }
            var current: UnsafeMutablePointer<addrinfo>? = first
            while let info = current {
                let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
                if fd >= 0 {
                    var timeout = timeval(tv_sec: 15, tv_usec: 0)
                    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                        self.fd = fd
                        return
                    }
                    Glibc.close(fd)
                }
                current = info.pointee.ai_next
            }
            throw CaravanError(.storageUnavailable, "cannot connect to SMTP host \(host):\(port)")
        }

        func close() { Glibc.close(fd) }

        func command(_ line: String, expect code: Int) throws {
            let bytes = Array((line + "\r\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { throw CaravanError(.storageUnavailable, "SMTP connection lost") }
                sent += n
            }
            try expect(code)
        }

        /// Reads one (possibly multi-line) reply and checks its code.
        func expect(_ code: Int) throws {
            while true {
                let line = try readLine()
                guard line.count >= 3, let replyCode = Int(line.prefix(3)) else {
                    throw CaravanError(.storageUnavailable, "SMTP server sent a malformed reply")
                }
                if line.count > 3, line[line.index(line.startIndex, offsetBy: 3)] == "-" { continue }
                guard replyCode == code else {
                    throw CaravanError(.storageUnavailable, "SMTP server refused: \(line.prefix(200))")
                }
                return
            }
        }

        private func readLine() throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[..<newline].filter { $0 != UInt8(ascii: "\r") }
                    buffer.removeSubrange(...newline)
                    return String(decoding: line, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 1024)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw CaravanError(.storageUnavailable, "SMTP connection closed") }
                buffer.append(contentsOf: chunk[..<n])
            }
        }
    }
}
