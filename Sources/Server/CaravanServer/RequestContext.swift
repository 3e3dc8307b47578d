package import CaravanCore
package import Hummingbird
import NIOCore

/// Per-request context: Hummingbird's core storage, the request id, the client address and the caller's verified
/// identity.
package struct CaravanRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// Set by `APIKeyMiddleware` for every request it lets through.
    package var identity: Identity?
    /// Set by `RequestLogMiddleware`.
    package var requestID: String
    /// Set by `RequestLogMiddleware` when it keeps recent requests; `APIKeyMiddleware` notes the verified role in it.
    package var roleNote: RequestRoleNote?
    /// The peer's IP address (abuse limits); "unknown" when the transport has none.
    package let clientIP: String

    package init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.requestID = ""
        self.roleNote = nil
        self.clientIP = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
