import CaravanClient
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Places
import Testing

/// A realtime socket on a real connection, as its event-loop handler serves it: WebSocket control frames, fragmented
/// messages, closes from either side, refused upgrades, and no socket left counted once its connection is gone.
@Suite("Realtime: the socket on its connection", .timeLimit(.minutes(3)))
struct RealtimeSocketTests {
    static let settings = ["port": "0", "realtime_heartbeat_timeout": "600"]

    static func join(_ topic: String, key: String) -> String {
        #"{"topic":"realtime:\#(topic)","event":"phx_join","ref":"1","payload":{"config":{"postgres_changes":[{"event":"INSERT","schema":"public","table":"places"}]},"access_token":"\#(key)"}}"#
    }

    static func port(_ serving: CaravanHost.Serving) throws -> Int {
        try #require(URLComponents(string: serving.baseURL)?.port)
    }

    /// The open sockets the server counts (`GET /admin/api/realtime`).
    static func openSockets(_ serving: CaravanHost.Serving, _ transport: AsyncHTTPClientTransport) async throws -> Int64 {
        let headers = [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)")]
        let answer = try await transport.send(TransportRequest(method: "GET", url: serving.baseURL + "/admin/api/realtime", headers: headers))
        guard case .integer(let sockets)? = try JSONParser.parse(bytes: answer.body)["figures"]?["sockets"] else {
            throw RawSocketError("no socket count in \(String(decoding: answer.body, as: UTF8.self))")
        }
        return sockets
    }

    static func withServer(_ body: (CaravanHost.Serving, AsyncHTTPClientTransport) async throws -> Void) async throws {
        let transport = AsyncHTTPClientTransport()
        do {
            try await CaravanHost.withServing(settings.merging(["data_dir": temporaryDirectory()]) { $1 }, apps: [PlacesModule.module],
                                              logger: DeviceUpgradeTests().logger) { serving in
                try await body(serving, transport)
            }
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    @Test func pingsAreAnsweredFragmentsJoinedAndACloseEchoed() async throws {
        try await Self.withServer { serving, transport in
            let socket = try await RawWebSocket.opened(port: try Self.port(serving), apikey: serving.serviceRoleKey, receiveBuffer: nil)
            defer { socket.close() }
            try socket.sendFrame(opcode: 0x9, payload: Array("p1".utf8))
            let pong = try await socket.nextFrameOffThePool()
            #expect(pong.opcode == 0xA && pong.payload == Array("p1".utf8))
            // A join sent in two fragments is one message.
            let join = Array(Self.join("fragments", key: serving.serviceRoleKey).utf8)
            try socket.sendFrame(opcode: 0x1, payload: Array(join[..<40]), fin: false)
            try socket.sendFrame(opcode: 0x0, payload: Array(join[40...]))
            #expect(try await socket.nextTextOffThePool().contains(#""status":"ok""#))
            #expect(try await Self.openSockets(serving, transport) == 1)
            try socket.sendFrame(opcode: 0x8, payload: [0x03, 0xE8])
            let close = try await socket.nextControlFrame()
            #expect(close.opcode == 0x8 && close.payload == [0x03, 0xE8], "the close is echoed with its code")
            #expect(try await eventually(within: .seconds(30)) { try await Self.openSockets(serving, transport) == 0 })
        }
    }

    @Test func socketsWhoseConnectionsEndAreNoLongerCounted() async throws {
        try await Self.withServer { serving, transport in
            var sockets: [RawWebSocket] = []
            for index in 0..<40 {
                let socket = try await RawWebSocket.opened(port: try Self.port(serving), apikey: serving.serviceRoleKey, receiveBuffer: nil)
                sockets.append(socket)
                try socket.send(Self.join("many-\(index)", key: serving.serviceRoleKey))
                #expect(try await socket.nextTextOffThePool().contains(#""status":"ok""#))
            }
            #expect(try await Self.openSockets(serving, transport) == 40)
            // The connections end without a close frame, as when a phone loses its network.
            for socket in sockets { socket.close() }
            #expect(try await eventually(within: .seconds(30)) { try await Self.openSockets(serving, transport) == 0 })
        }
    }

    @Test func anUpgradeElsewhereIsRefusedWithJSON() async throws {
        try await Self.withServer { serving, _ in
            let port = try Self.port(serving)
            let refusal = await #expect(throws: RawUpgradeRefusal.self) {
                try await RawWebSocket.opened(port: port, apikey: serving.serviceRoleKey, receiveBuffer: nil, path: "/realtime/v1/elsewhere")
            }
            #expect(refusal?.head.hasPrefix("HTTP/1.1 404") == true)
            #expect(refusal?.head.lowercased().contains("content-type: application/json") == true)
        }
    }

    @Test func aShutdownTellsOpenSocketsTheServerGoesAway() async throws {
        var socket: RawWebSocket?
        try await Self.withServer { serving, _ in
            let open = try await RawWebSocket.opened(port: try Self.port(serving), apikey: serving.serviceRoleKey, receiveBuffer: nil)
            try open.send(Self.join("shutdown", key: serving.serviceRoleKey))
            #expect(try await open.nextTextOffThePool().contains(#""status":"ok""#))
            socket = open
        }
        let open = try #require(socket)
        defer { open.close() }
        let close = try await open.nextControlFrame()
        #expect(close.opcode == 0x8 && close.payload == [0x03, 0xE9], "a close frame with 1001, going away")
    }
}

extension RawWebSocket {
    /// The next frame that is not a message (the join is followed by a `system` message).
    func nextControlFrame() async throws -> (opcode: UInt8, payload: [UInt8]) {
        while true {
            let frame = try await nextFrameOffThePool()
            if frame.opcode != 0x1 { return frame }
        }
    }
}
