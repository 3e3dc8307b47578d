public import CaravanCore
public import Hummingbird
import NIOCore

/// Per-request context: Hummingbird's core storage, the request id, the client address and the caller's verified
/// identity.
public struct CaravanRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `APIKeyMiddleware` for every request it lets through.
    public var identity: Identity?
    /// Set by `RequestLogMiddleware`.
    public var requestID: String
    /// The peer's IP address (abuse limits); "unknown" when the transport has none.
    public let clientIP: String

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.requestID = ""
        self.clientIP = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
