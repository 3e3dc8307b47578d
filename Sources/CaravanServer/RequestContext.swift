import CaravanCore
import Hummingbird

/// Per-request context: Hummingbird's core storage, the request id and the caller's verified identity.
public struct CaravanRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `APIKeyMiddleware` for every request it lets through.
    public var identity: Identity?
    /// Set by `RequestLogMiddleware`.
    public var requestID: String

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.requestID = ""
    }
}
