/// The error of the realtime layer: a stable code and a message safe to show a client.
public struct RealtimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A frame that is not JSON or lacks topic/event.
        public static let malformedFrame = Code("malformedFrame")
        /// A join whose config cannot be served (bad binding, unknown table, bad filter).
        public static let invalidJoin = Code("invalidJoin")
        /// A limit was reached (channels per socket, joins or events per second).
        public static let limitReached = Code("limitReached")
        /// The token is invalid or expired.
        public static let invalidToken = Code("invalidToken")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
