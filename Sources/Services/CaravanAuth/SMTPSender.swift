import CaravanCore
import Foundation
import NIOPosix
package import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
package import Darwin
#endif

/// Email over an SMTP relay (plain SMTP, optional AUTH PLAIN); anything else goes to `fallback`. Conversations block
/// a thread each, so they run on a pool of their own: a slow relay never holds the threads password hashing needs.
///
/// A `Service`: `init` only stores values; `run()` starts the pool's threads and stops them on graceful shutdown
/// (or cancellation), after the conversations under way. Run it in the server's `ServiceGroup`; a message sent
/// while it is not running fails (and the flow answers `unexpected_failure`).
package final class SMTPSender: MessageSender, Service {
    let configuration: SMTPConfiguration
    let fallback: any MessageSender
    let pool: NIOThreadPool

    package init(configuration: SMTPConfiguration, fallback: any MessageSender, threads: Int = 4) {
        self.configuration = configuration
        self.fallback = fallback
        self.pool = NIOThreadPool(numberOfThreads: threads)
    }

    /// Runs the conversation threads until graceful shutdown or cancellation, then stops them.
    package func run() async throws {
        pool.start()
        do {
            try await gracefulShutdown()
        } catch is CancellationError {
            // Cancellation ends the service like a graceful shutdown: stop the threads below.
        }
        try await pool.shutdownGracefully()
    }

    package func send(_ message: OutgoingMessage) async throws {
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
        // The message is accepted; a relay that hangs up without answering QUIT has lost nothing.
        do { try connection.command("QUIT", expect: 221) } catch { return }
    }

    final class Connection {
        let fd: Int32
        var buffer: [UInt8] = []

        init(host: String, port: Int) throws {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = PlatformSocket.stream
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
                    PlatformSocket.suppressSIGPIPE(fd)
                    if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                        self.fd = fd
                        return
                    }
                    PlatformSocket.close(fd)
                }
                current = info.pointee.ai_next
            }
            throw CaravanError(.storageUnavailable, "cannot connect to SMTP host \(host):\(port)")
        }

        func close() { PlatformSocket.close(fd) }

        func command(_ line: String, expect code: Int) throws {
            let bytes = Array((line + "\r\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { PlatformSocket.send(fd, $0) }
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

/// The socket calls whose spelling differs between Linux (Glibc) and Apple platforms (Darwin). Everything
/// platform-specific in the SMTP client goes through here.
enum PlatformSocket {
    /// `SOCK_STREAM` (an enum on Glibc, an `Int32` on Darwin).
    static var stream: Int32 {
        #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
        #elseif canImport(Darwin)
        SOCK_STREAM
        #endif
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #elseif canImport(Darwin)
        _ = Darwin.close(fd)
        #endif
    }

    /// Sends without raising SIGPIPE on a closed peer (`MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on Darwin).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #elseif canImport(Darwin)
        Darwin.send(fd, bytes.baseAddress, bytes.count, 0)
        #endif
    }

    /// On Darwin, where `send` has no `MSG_NOSIGNAL`, sets `SO_NOSIGPIPE` on the socket; nothing on Linux.
    static func suppressSIGPIPE(_ fd: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}
