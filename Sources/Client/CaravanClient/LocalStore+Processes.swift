import CaravanClientSQLite

/// One store shared by several processes — an app and its extensions (widgets, intents) on a file in an app-group
/// folder, or `caravan-client` beside an app: SQLite's WAL lets them read and write at once (a writer waits for another
/// process's write, up to 10 s, instead of failing); one of them syncs at a time (`SyncEngine.sync` holds a lock on
/// `<store>-sync.lock`); and each follows the others' commits with `followOtherProcesses(every:)`.
extension LocalStore {
    /// Whether another process committed to the store since the last look (or since the store was opened). When one
    /// did, this store's live queries (`live`, `LiveQuery`), `observe` streams and sync-status counts fetch again, as
    /// after a write of this process.
    @discardableResult
    public func noticeOtherProcesses() throws -> Bool {
        try Self.local { try database.noticeOtherConnectionsCommits() }
    }

    /// Runs until the task is cancelled: looks for other processes' commits every `interval` (`noticeOtherProcesses`).
    /// A look costs one `PRAGMA data_version` on this store's writer connection.
    ///
    /// ```swift
    /// let following = Task { try await store.followOtherProcesses(every: .milliseconds(500)) }  // in the app and its widget
    /// ```
    public func followOtherProcesses(every interval: Duration,
                                     sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) async throws {
        while !Task.isCancelled {
            try noticeOtherProcesses()
            do {
                try await sleep(interval)
            } catch is CancellationError {
                return
            }
        }
    }

    /// The cross-process sync lock if no one (no other process, no other engine) holds it, else nil.
    func lockSync() throws -> ProcessLock? {
        try Self.local { try ProcessLock.tryAcquire(database.syncLockPath) }
    }
}
