import CaravanCore
import Foundation

/// One HTTP exchange, as the client needs it (no streaming: sync pages are bounded).
public struct TransportRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct TransportResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// How the client reaches the server. `AsyncHTTPClientTransport` on Linux (and anywhere AsyncHTTPClient builds);
/// `URLSessionTransport` on Apple platforms. A failure to reach the server throws `ClientError(.offline)`.
public protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

#if canImport(Darwin)
/// URLSession, for Apple platforms.
public struct URLSessionTransport: HTTPTransport {
    public let session: URLSession
    public let timeout: TimeInterval

    public init(session: URLSession = .shared, timeout: TimeInterval = 60) {
        self.session = session
        self.timeout = timeout
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.url) else { throw ClientError(.local, "not a URL: \(request.url)") }
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body.map { Data($0) }
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { throw ClientError(.offline, "no HTTP response") }
            let headers = http.allHeaderFields.compactMap { key, value in (key as? String).map { ($0, "\(value)") } }
            return TransportResponse(status: http.statusCode, headers: headers, body: Array(data))
        } catch let error as URLError {
            throw ClientError(.offline, "the server is unreachable: \(error.code.rawValue)")
        }
    }
}
#endif
