import CaravanClient
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Places
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A subscriber that stops reading, on a real connection: once its queue passes `realtime_max_pending` its channel
/// gets the resync signal and `phx_close` (found when it reads again), while a subscriber that reads receives every
/// event and no signal.
@Suite("Realtime: a stalled subscriber", .timeLimit(.minutes(3)))
struct RealtimeStalledSubscriberTests {
    @Test func aSubscriberThatStopsReadingIsToldToResyncWhileAnotherReceivesEverything() async throws {
        // The stall timeout (a socket whose writes make no progress is dropped) far off: the bound acts first. The raw
        // clients send no heartbeats: the heartbeat timeout far off too (a loaded machine may take minutes).
        let settings = ["port": "0", "data_dir": temporaryDirectory(), "realtime_max_pending": "20", "realtime_stall_timeout": "600",
                        "realtime_heartbeat_timeout": "600"]
        let transport = AsyncHTTPClientTransport()
        do {
            try await CaravanHost.withServing(settings, apps: [PlacesModule.module], logger: DeviceUpgradeTests().logger) { serving in
                try await walk(serving, transport)
            }
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    func walk(_ serving: CaravanHost.Serving, _ transport: AsyncHTTPClientTransport) async throws {
        let port = try #require(URLComponents(string: serving.baseURL)?.port)
        let join = #"{"topic":"realtime:stall","event":"phx_join","ref":"1","payload":{"config":{"postgres_changes":[{"event":"INSERT","schema":"public","table":"places"}]},"access_token":"\#(serving.serviceRoleKey)"}}"#
        // The stalled client's receive window is a few KiB, so that little data fills the connection.
        let stalled = try await RawWebSocket.opened(port: port, apikey: serving.serviceRoleKey, receiveBuffer: 2048)
        defer { stalled.close() }
        let healthy = try await RawWebSocket.opened(port: port, apikey: serving.serviceRoleKey, receiveBuffer: nil)
        defer { healthy.close() }
        for socket in [stalled, healthy] {
            try socket.send(join)
            #expect(try await socket.nextTextOffThePool().contains(#""status":"ok""#))
        }
        let service = [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
        let name = String(repeating: "ن", count: 1000)
        var written = 0, healthyEvents = 0, resyncs = 0
        // Batches of 20 rows of about 2 KiB until the stalled socket's channel is told to resync (at most 100).
        for batch in 0..<100 where resyncs == 0 {
            let rows = (0..<20).map { #"{"id":"stall-\#(batch)-\#($0)","name_ar":"\#(name)","category":"cafe","category_ar":"مقهى"}"# }
            let created = try await transport.send(TransportRequest(method: "POST", url: serving.baseURL + "/rest/v1/places",
                                                                    headers: service + [("Prefer", "return=minimal")],
                                                                    body: Array(("[" + rows.joined(separator: ",") + "]").utf8)))
            #expect(created.status == 201)
            written += rows.count
            while healthyEvents < written {
                let text = try await healthy.nextTextOffThePool()
                #expect(!text.contains("resync"), "the reading subscriber is never told to resync")
                if text.contains(#""event":"postgres_changes""#) { healthyEvents += 1 }
            }
            let figures = try await transport.send(TransportRequest(method: "GET", url: serving.baseURL + "/admin/api/realtime", headers: service))
            resyncs = try JSONParser.parse(bytes: figures.body)["figures"]?["resyncs"].flatMap { if case .integer(let n) = $0 { Int(n) } else { nil } } ?? 0
        }
        #expect(resyncs == 1)
        #expect(healthyEvents == written)
        // The stalled client reads again: some events, then the resync signal, then the channel's close.
        var events = 0
        var signal: String?
        while true {
            let text = try await stalled.nextTextOffThePool()
            if text.contains(#""event":"postgres_changes""#) { events += 1 }
            if text.contains(#""event":"system""#), text.contains(#""status":"error""#) { signal = text }
            if text.contains(#""event":"phx_close""#) { break }
        }
        #expect(signal?.contains("Too many pending changes: resync") == true)
        #expect(events < written)
    }
}

/// An upgrade answered with something else than 101: the answer's head.
struct RawUpgradeRefusal: Error {
    let head: String
}

struct RawSocketError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A WebSocket client on a plain socket, read only when the test asks (a client that can stop reading). Its frames
/// are masked with a zero key; it reads unfragmented text frames and skips pings.
final class RawWebSocket: @unchecked Sendable {  // used by one task at a time
    let fd: Int32
    private var pending: [UInt8] = []

    init(port: Int, apikey: String, receiveBuffer: Int32?, path: String = "/realtime/v1/websocket") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError("socket() failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // A safety net against a test that would hang: a read waits at most 60 s.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawSocketError("connect() failed") }
        try write(Array(("GET \(path)?apikey=\(apikey)&vsn=1.0.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        while !pending.suffix(4).elementsEqual("\r\n\r\n".utf8) {  // the 101 response, read a byte at a time
            pending += try read(1)
        }
        guard String(decoding: pending, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw RawUpgradeRefusal(head: String(decoding: pending, as: UTF8.self))
        }
        pending = []
    }

    /// Connects and upgrades on a thread of its own: the handshake's blocking reads on the test's cooperative
    /// threads could starve the in-process server that must answer them (two threads on a two-core machine).
    static func opened(port: Int, apikey: String, receiveBuffer: Int32?, path: String = "/realtime/v1/websocket") async throws -> RawWebSocket {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try RawWebSocket(port: port, apikey: apikey, receiveBuffer: receiveBuffer, path: path) })
            }
        }
    }

    func close() { _ = Glibc.close(fd) }

    func send(_ text: String) throws {
        try sendFrame(opcode: 0x1, payload: Array(text.utf8))
    }

    /// One frame as a client sends it (masked with a zero key); `fin` false for a fragment followed by more.
    func sendFrame(opcode: UInt8, payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        frame += [0, 0, 0, 0] + payload  // a zero mask leaves the payload as it is
        try write(frame)
    }

    /// The next text frame's text.
    /// `nextText()` on a thread of its own: a blocking read on the test's cooperative thread could starve the
    /// in-process server's tasks (two threads on a two-core machine).
    func nextTextOffThePool() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try self.nextText() }) }
        }
    }

    /// The next frame of any kind (its opcode and payload), read on a thread of its own.
    func nextFrameOffThePool() async throws -> (opcode: UInt8, payload: [UInt8]) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try self.nextFrame() }) }
        }
    }

    func nextText() throws -> String {
        while true {
            let frame = try nextFrame()
            if frame.opcode == 0x1 { return String(decoding: frame.payload, as: UTF8.self) }
            if frame.opcode == 0x8 { throw RawSocketError("the server closed the socket") }
        }
    }

    func nextFrame() throws -> (opcode: UInt8, payload: [UInt8]) {
        let head = try read(2)
        var length = Int(head[1] & 0x7f)
        if length == 126 {
            length = try read(2).reduce(0) { $0 << 8 | Int($1) }
        } else if length == 127 {
            length = try read(8).reduce(0) { $0 << 8 | Int($1) }
        }
        return (head[0] & 0x0f, try read(length))
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: count)
        while bytes.count < count {
            let got = recv(fd, &chunk, count - bytes.count, 0)
            guard got > 0 else { throw RawSocketError("the socket ended (\(got), errno \(errno))") }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let done = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard done > 0 else { throw RawSocketError("send() failed") }
            sent += done
        }
    }
}
