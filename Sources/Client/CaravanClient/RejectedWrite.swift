public import CaravanCore
import Synchronization

/// A local write the server refused for good (a policy, a constraint, a rule the device could not check): a row
/// write's row is back to the server's state and the write parked in the outbox with this error; an attachment
/// upload is parked in the store with it. `SyncEngine.rejections()` hands every one to the app as it is recorded.
public struct RejectedWrite: Sendable, Hashable {
    public enum Subject: Sendable, Hashable {
        /// A row write of the outbox: its table, its operation (`insert`, `update`, `upsert`, `delete`) and the row's
        /// primary key.
        case row(table: String, operation: String, key: JSONValue)
        /// An attachment upload (`stageUpload`, `queueUpload`).
        case upload(bucket: String, path: String)
    }

    /// The outbox mutation's id; nil for an upload (its bucket and path name it).
    public let mutationID: String?
    public let subject: Subject
    /// The server's stable code (`42501` a policy refused the row, `23503` a missing referenced row, `AccessDenied`
    /// a bucket policy refused the upload, `EntityTooLarge`, …).
    public let code: String
    public let message: String

    public init(mutationID: String?, subject: Subject, code: String, message: String) {
        self.mutationID = mutationID
        self.subject = subject
        self.code = code
        self.message = message
    }

    /// The refused row's table; nil for an upload.
    public var table: String? {
        if case .row(let table, _, _) = subject { table } else { nil }
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
