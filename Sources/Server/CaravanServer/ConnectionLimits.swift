import CaravanCore
import CaravanSync

/// How long and how large one HTTP connection may be, and how many may be open at once (the `http_*` settings).
/// A slow or silent client cannot hold the server's descriptors: heads and bodies must keep arriving, idle
/// keep-alive connections are closed, and connections past the cap are refused at once. WebSockets keep their own
/// heartbeat rule once upgraded.
///
/// - `http_max_header_bytes` (default 65536): the header fields of one request; more is `431` and a close
/// - `http_max_request_line_bytes` (default `query_max_length` + 16384): the request line; longer is `414` and a close
/// - `http_idle_timeout` (default `75s`, as nginx's `keepalive_timeout`): a connection with no request in progress
/// - `http_header_timeout` (default `60s`, as nginx's `client_header_timeout`): to send a whole request head; `408`
/// - `http_body_timeout` (default `60s`, as nginx's `client_body_timeout`): between two reads of a request body;
///   `408` in the endpoint's error shape
/// - `http_max_connections` (default: the descriptor limit less a reserve for the database and files): past it a new
///   connection is answered `503` and closed, and counted in `caravan_http_connections_refused_total`
package struct ConnectionLimits: Sendable, Hashable {
    package var maxHeaderBytes = 64 * 1024
    package var maxRequestLineBytes: Int
    package var idleTimeout: Duration = .seconds(75)
    package var headerTimeout: Duration = .seconds(60)
    package var bodyTimeout: Duration = .seconds(60)
    /// nil: derived from the process's descriptor limit at start (`ConnectionLimits.connectionCap(descriptorLimit:)`).
    package var maxConnections: Int?

    package init(maxQueryLength: Int = QueryLimits().maxQueryLength) {
        maxRequestLineBytes = maxQueryLength + 16 * 1024
    }

    static let keys = ["http_max_header_bytes", "http_max_request_line_bytes", "http_idle_timeout", "http_header_timeout",
                       "http_body_timeout", "http_max_connections"]

    /// Reads the `http_*` keys through `lookup`.
    static func resolve(_ lookup: (String) -> String?, maxQueryLength: Int) throws(CaravanError) -> ConnectionLimits {
        var limits = ConnectionLimits(maxQueryLength: maxQueryLength)
        for (key, range, path) in [("http_max_header_bytes", 1024...(1 << 20), \ConnectionLimits.maxHeaderBytes),
                                   ("http_max_request_line_bytes", 1024...(4 << 20), \ConnectionLimits.maxRequestLineBytes)] {
            guard let text = lookup(key) else { continue }
            guard let value = Int(text), range.contains(value) else {
                throw CaravanError(.invalidValue, "\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(32))\"")
            }
            limits[keyPath: path] = value
        }
        for (key, path) in [("http_idle_timeout", \ConnectionLimits.idleTimeout), ("http_header_timeout", \ConnectionLimits.headerTimeout),
                            ("http_body_timeout", \ConnectionLimits.bodyTimeout)] {
            guard let text = lookup(key) else { continue }
            guard let duration = ChangeLogRetention.parseDuration(text), duration > .zero, duration <= .seconds(86_400) else {
                throw CaravanError(.invalidValue, "\(key) must be a duration such as 30s or 5m, got \"\(text.prefix(32))\"")
            }
            limits[keyPath: path] = duration
        }
        if let text = lookup("http_max_connections") {
            guard let value = Int(text), value >= 1 else {
                throw CaravanError(.invalidValue, "http_max_connections must be a positive integer, got \"\(text.prefix(32))\"")
            }
            limits.maxConnections = value
        }
        return limits
    }

    /// The cap below a soft descriptor limit of `descriptorLimit`: an eighth of the descriptors (at least 32) stay
    /// for the database, storage files and listening sockets.
    package static func connectionCap(descriptorLimit: Int) -> Int {
        max(1, descriptorLimit - max(32, descriptorLimit / 8))
    }

    /// The cap in force: the configured one, never above what the descriptors allow.
    package func effectiveMaxConnections(descriptorLimit: Int) -> Int {
        let ceiling = Self.connectionCap(descriptorLimit: descriptorLimit)
        return min(maxConnections ?? ceiling, ceiling)
    }
}
