import Dispatch
import NIOCore

/// The process's event loops, handed out in turn. `EventLoopGroup.any()` prefers the loop it is called on, and
/// the pool opens every connection from its own task, so with the default group all connections land on one loop:
/// every query's answer, and the decoding and encoding that follow it, then run on that one thread while the
/// others idle. Through this group the pool spreads its connections over every loop.
final class SpreadEventLoopGroup: EventLoopGroup, Sendable {
    let base: any EventLoopGroup

    init(_ base: any EventLoopGroup) {
        self.base = base
    }

    func next() -> any EventLoop { base.next() }

    func any() -> any EventLoop { base.next() }

    func makeIterator() -> EventLoopIterator { base.makeIterator() }

    /// The shared loops outlive the store: shutting them down is not this group's to do.
    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async { callback(EventLoopError.unsupportedOperation) }
    }

    func _preconditionSafeToSyncShutdown(file: StaticString, line: UInt) {}
}
