import CaravanClient
import CaravanCore
import Synchronization
import Testing

/// Read-your-writes across read replicas: the SDK sends the latest consistency token a write answer carried on its
/// REST reads and RPC calls (`X-Caravan-Consistency`), and nothing before it has one.
@Suite struct ConsistencyTokenTests {
    @Test func restReadsAndRPCCallsCarryTheLatestTokenFromAWriteAnswer() async throws {
        let transport = RecordingTransport()
        let api = CaravanAPI(baseURL: "http://caravan.test", apiKey: "key", transport: transport)
        _ = try await api.fetchRow("notes", key: [("id", .integer(1))], token: nil)
        transport.answerToken = "c1-0000000003000f88"
        _ = try await api.rpc("touch", arguments: .object([]), token: nil)
        transport.answerToken = nil
        _ = try await api.fetchRow("notes", key: [("id", .integer(1))], token: nil)
        transport.answerToken = "c1-0000000003001000"
        _ = try await api.rpc("touch", arguments: .object([]), token: nil)
        _ = try await api.fetchRow("notes", key: [("id", .integer(1))], token: nil)

        let sent = transport.sent.withLock { $0 }.map { request in
            (request.method, request.headers.first { $0.0 == "X-Caravan-Consistency" }?.1)
        }
        #expect(sent.map(\.0) == ["GET", "POST", "GET", "POST", "GET"])
        // RPC calls carry it too (a read-only function may run on a replica).
        #expect(sent.map(\.1) == [nil, nil, "c1-0000000003000f88", "c1-0000000003000f88", "c1-0000000003001000"])
    }
}

/// Answers every request with an empty JSON array, carrying `answerToken` when set; records what it was sent.
private final class RecordingTransport: HTTPTransport {
    let sent = Mutex<[TransportRequest]>([])
    private let token = Mutex<String?>(nil)

    var answerToken: String? {
        get { token.withLock { $0 } }
        set { token.withLock { $0 = newValue } }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        sent.withLock { $0.append(request) }
        let headers = [("Content-Type", "application/json")] + (answerToken.map { [("X-Caravan-Consistency", $0)] } ?? [])
        return TransportResponse(status: 200, headers: headers, body: Array("[]".utf8))
    }
}
