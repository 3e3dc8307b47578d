/// The error of the realtime layer: a stable code and a message safe to show a client.
package struct RealtimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible code.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        package var description: String { name }

        /// A frame that is not JSON or lacks topic/event.
        package static let malformedFrame = Code("malformedFrame")
        /// A join whose config cannot be served (bad binding, unknown table, bad filter).
        package static let invalidJoin = Code("invalidJoin")
        /// A limit was reached (channels per socket, joins or events per second).
        package static let limitReached = Code("limitReached")
        /// The token is invalid or expired.
        package static let invalidToken = Code("invalidToken")
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }
}
