import AsyncHTTPClient
import Foundation
public import NIOCore
import NIOHTTP1

/// AsyncHTTPClient, the transport on Linux. Owns its client: call `shutdown()` when done.
public final class AsyncHTTPClientTransport: HTTPTransport {
    private let client: HTTPClient
    public let timeout: TimeAmount

    public init(timeout: TimeAmount = .seconds(60)) {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5), read: timeout)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = timeout
    }

    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// A transport for the length of `body`, shut down after it whether it returned or threw (a client left running
    /// when it goes away stops the process).
    public nonisolated(nonsending) static func using<Result>(_ body: (AsyncHTTPClientTransport) async throws -> Result) async throws -> Result {
        let transport = AsyncHTTPClientTransport()
        let result: Result
        do {
            result = try await body(transport)
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
        return result
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await client.execute(outgoing, timeout: timeout)
            let body = try await response.body.collect(upTo: 256 * 1024 * 1024)
            return TransportResponse(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                                     body: Array(buffer: body))
        } catch let error as ClientError {
            throw error
        } catch {
            // Refused, reset, timed out, TLS: the server is out of reach; nothing local is lost.
            throw ClientError(.offline, "the server is unreachable: \(error)")
        }
    }
}
