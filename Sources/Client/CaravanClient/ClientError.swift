/// What can go wrong between the client and the server, by what the caller should do about it.
public struct ClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The server could not be reached (connection refused, reset, timed out): local work is kept; try later.
        case offline
        /// A transient server fault (503, 5xx): retry later, with the same mutation ids.
        case transient
        /// The credentials were refused (401, bad password, refresh token revoked): sign in again.
        case unauthorized
        /// The sync cursor must be dropped and the tables pulled anew (409 `CARAVAN_MUST_REFETCH`).
        case mustRefetch
        /// The server refused the request for good (4xx with a code).
        case refused
        /// The local store or the caller's input is wrong.
        case local
    }

    public let kind: Kind
    /// The server's error code (`42501`, `invalid_credentials`, …) when it sent one.
    public let code: String?
    public let message: String
    /// Seconds the server asked to wait (`Retry-After`).
    public let retryAfter: Double?
    /// For `mustRefetch`: the tables whose sync epoch was raised, when only they must be pulled anew (the 409's
    /// `details`, `tables=a,b`); empty: every table of the pull.
    package var refetchTables: [String] = []

    public init(_ kind: Kind, code: String? = nil, _ message: String, retryAfter: Double? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "ClientError(\(kind)\(code.map { ", \($0)" } ?? "")): \(message)" }
}
