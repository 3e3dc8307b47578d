import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Counts the open connections against the cap; a connection past it is refused (and counted) at once.
final class ConnectionGate: Sendable {
    let capacity: Int
    private let open = Atomic<Int>(0)
    private let onRefusal: @Sendable () -> Void

    init(capacity: Int, onRefusal: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onRefusal = onRefusal
    }

    /// Counts a new connection until `closed` is called; false when it is past the cap (counted as a refusal).
    func admit() -> Bool {
        let count = open.add(1, ordering: .relaxed).newValue
        guard count <= capacity else {
            onRefusal()
            return false
        }
        return true
    }

    func closed() { open.subtract(1, ordering: .relaxed) }

    var openConnections: Int { open.load(ordering: .relaxed) }
}

/// Hummingbird's HTTP/1.1 + WebSocket channel behind the connection guard: every connection is counted against the
/// cap, its raw bytes pass the `ConnectionGuard` first, and parser errors reach the `ParseErrorResponder` last.
struct GuardedHTTPChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let limits: ConnectionLimits
    let gate: ConnectionGate
    /// Where refusals and timeouts are logged.
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = gate.admit()
        let gate = self.gate
        channel.closeFuture.whenComplete { _ in gate.closed() }
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(limits: limits, overCapacity: !admitted, logger: self.logger), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(ParseErrorResponder())
            try channel.pipeline.syncOperations.addHandler(RefusedUpgradeAnswer())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
