import CaravanCore
import CaravanClientSQLite
public import Foundation
public import Observation
import Synchronization

/// What sync is doing, for an app's UI (PowerSync's `SyncStatus`): whether the server answers, whether writes are
/// going up or changes coming down, how many local writes wait and how many the server refused, when the last sync
/// finished and the last failure, with its stable code.
public struct SyncStatus: Sendable, Hashable {
    /// The last exchange with the server (a sync request, the realtime socket) reached it.
    public var connected = false
    /// A push of the outbox is under way.
    public var uploading = false
    /// A pull is under way.
    public var downloading = false
    /// Local writes not yet acknowledged by the server.
    public var pending = 0
    /// Local writes the server refused (kept with their error; `LocalStore.outbox()`).
    public var parked = 0
    /// Attachment uploads queued and not yet on the server, and those it refused (`LocalStore.attachments()`).
    public var pendingUploads = 0
    public var parkedUploads = 0
    /// When the last complete sync (push, then pull until up to date) finished.
    public var lastSyncedAt: Date?
    /// The failure of the last sync or connection attempt; nil once one succeeds.
    public var lastError: Failure?

    public init() {}

    /// A failure as an app shows it: `code` is stable (the server's code, such as `42501` or `invalid_credentials`,
    /// else the kind of fault: `offline`, `transient`, `unauthorized`, `mustRefetch`, `refused`, `local`).
    public struct Failure: Sendable, Hashable {
        public let code: String
        public let message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }

        init(_ error: any Error) {
            if let error = error as? ClientError {
                self.init(code: error.code ?? "\(error.kind)", message: error.message)
            } else {
                self.init(code: "local", message: "\(error)")
            }
        }
    }
}

extension SyncStatus {
    mutating func apply(_ counts: OutboxCounts) {
        pending = counts.pending
        parked = counts.parked
        pendingUploads = counts.pendingUploads
        parkedUploads = counts.parkedUploads
    }
}

/// The sync status of one store: the current value, a stream of its changes, and an observable object for SwiftUI
/// (`ObservedSyncStatus`). The `SyncEngine` and the `RealtimeClient` report to it; the outbox counts follow the store.
public final class SyncStatusMonitor: Sendable {
    let store: LocalStore
    private let state = Mutex(State())

    private struct State {
        var status = SyncStatus()
        var subscribers: [UInt64: AsyncStream<SyncStatus>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var following: Task<Void, Never>?
    }

    init(store: LocalStore) {
        self.store = store
    }

    deinit {
        state.withLock { state in
            state.following?.cancel()
            for continuation in state.subscribers.values { continuation.finish() }
        }
    }

    /// The status now.
    public var current: SyncStatus { state.withLock { $0.status } }

    /// The status now, then each change of it, until the iterating task is cancelled. The outbox counts follow every
    /// committed local write.
    public func updates() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            continuation.yield(state.status)
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        followOutbox()
        return stream
    }

    /// Changes the status and tells the subscribers when it differs.
    package func update(_ change: (inout SyncStatus) -> Void) {
        state.withLock { state in
            var status = state.status
            change(&status)
            guard status != state.status else { return }
            state.status = status
            for continuation in state.subscribers.values { continuation.yield(status) }
        }
    }

    /// Reads the outbox counts into the status now.
    func refreshCounts() throws {
        let counts = try store.read { try $0.outboxCounts() }
        update { $0.apply(counts) }
    }

    /// Follows the outbox counts (once, from the first subscriber on), so a local write shows in `pending` at once.
    private func followOutbox() {
        state.withLock { state in
            guard state.following == nil else { return }
            let counts = store.database.observe { try $0.outboxCounts() }
            state.following = Task { [weak self] in
                do {
                    for try await value in counts {
                        self?.update { $0.apply(value) }
                    }
                } catch {
                    self?.update { $0.lastError = SyncStatus.Failure(error) }
                }
            }
        }
    }
}

/// The sync status as an observable object for SwiftUI: `status` is set on the main actor at each change.
///
/// ```swift
/// @State var sync = ObservedSyncStatus(engine.status)
/// var body: some View { Text(sync.status.pending == 0 ? "Up to date" : "\(sync.status.pending) waiting") }
/// ```
@MainActor
@Observable
public final class ObservedSyncStatus {
    public private(set) var status: SyncStatus
    @ObservationIgnored private let following = FollowingTask()

    public init(_ monitor: SyncStatusMonitor) {
        status = monitor.current
        let updates = monitor.updates()
        following.start(Task { [weak self] in
            for await status in updates {
                guard let self else { return }
                if self.status != status { self.status = status }
            }
        })
    }

    /// Stops following (also done when the object goes away).
    public nonisolated func cancel() { following.cancel() }

    deinit { following.cancel() }
}
