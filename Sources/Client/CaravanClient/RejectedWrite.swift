public import CaravanCore
import Synchronization

/// A local write the server refused for good (a policy, a constraint, a rule the device could not check): the row
/// is back to the server's state and the write is parked in the outbox with this error. `SyncEngine.rejections()`
/// hands every one to the app as it is recorded.
public struct RejectedWrite: Sendable, Hashable {
    public let mutationID: String
    public let table: String
    /// `insert`, `update`, `upsert` or `delete`.
    public let operation: String
    /// The row's primary key.
    public let key: JSONValue
    /// The server's stable code (`42501` a policy refused it, `23505` a duplicate key, `23514` a check, …).
    public let code: String
    public let message: String

    public init(mutationID: String, table: String, operation: String, key: JSONValue, code: String, message: String) {
        self.mutationID = mutationID
        self.table = table
        self.operation = operation
        self.key = key
        self.code = code
        self.message = message
    }
}

/// Hands each value to every current subscriber's stream (values sent before a subscription are not replayed).
package final class Broadcast<Element: Sendable>: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())
    private let buffer: Int

    /// `buffer`: the values a slow subscriber may fall behind by; older ones are dropped for it.
    package init(buffer: Int = 1024) {
        self.buffer = buffer
    }

    deinit {
        subscribers.withLock { state in
            for continuation in state.continuations.values { continuation.finish() }
        }
    }

    package func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(buffer))
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    package func send(_ value: Element) {
        subscribers.withLock { state in
            for continuation in state.continuations.values { continuation.yield(value) }
        }
    }
}
