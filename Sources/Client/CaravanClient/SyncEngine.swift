public import CaravanCore
import CaravanClientSQLite
import Foundation

/// What one sync did.
public struct SyncReport: Sendable, Hashable {
    public var pushed = 0
    public var rejected = 0
    public var pulled = 0
    public var hasMore = false
    /// The highest `seq` of the pulled changes (realtime ignores live changes at or below it).
    public var lastSeq: Int64?
    /// Nothing was done: another process (or another engine) was syncing the store. That sync pushes the writes in
    /// the outbox while it pushes, this process's too; sync again later for the rest and to pull.
    public var otherProcessSyncing = false
    /// Attachment uploads the server now holds, and those it refused for good (parked).
    public var uploaded = 0
    public var uploadsParked = 0

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("pushed", .integer(Int64(pushed))), ("rejected", .integer(Int64(rejected))),
                                                          ("pulled", .integer(Int64(pulled))), ("has_more", .bool(hasMore)),
                                                          ("uploaded", .integer(Int64(uploaded))), ("uploads_parked", .integer(Int64(uploadsParked)))]
        if otherProcessSyncing { members.append(("other_process_syncing", .bool(true))) }
        return .object(members)
    }
}

/// Retries of transient faults (offline, 503): exponential backoff with jitter, `Retry-After` respected.
public struct RetryPolicy: Sendable, Hashable {
    public var attempts: Int
    public var baseDelay: Duration
    public var maximumDelay: Duration

    public init(attempts: Int = 4, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(10)) {
        self.attempts = max(1, attempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before retry `attempt` (1-based): base · 2^(attempt−1), capped, times a jitter in [0.5, 1).
    public func delay(attempt: Int, jitter: Double, retryAfter: Double?) -> Duration {
        if let retryAfter, retryAfter > 0 { return .milliseconds(Int64(retryAfter * 1000)) }
        let exponential = baseDelay * Int(1 << min(attempt - 1, 20))
        let capped = min(exponential, maximumDelay)
        return capped * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}

/// Points where a test can stop the client the hard way (SIGKILL) to prove that nothing is lost or applied twice.
package struct SyncFaults: Sendable {
    /// After the server answered a push, before its verdicts are recorded (the reply is lost).
    package var afterPushReply: (@Sendable () -> Void)?
    /// Inside the transaction that applies a pulled page, before it commits.
    package var beforePullCommit: (@Sendable () -> Void)?
    /// After the server answered an attachment upload, before the answer is recorded.
    package var afterUploadReply: (@Sendable () -> Void)?

    package init(afterPushReply: (@Sendable () -> Void)? = nil, beforePullCommit: (@Sendable () -> Void)? = nil,
                 afterUploadReply: (@Sendable () -> Void)? = nil) {
        self.afterPushReply = afterPushReply
        self.beforePullCommit = beforePullCommit
        self.afterUploadReply = afterUploadReply
    }
}

/// Pushes the outbox, then pulls until up to date. One sync at a time: a call made while one runs waits for it and
/// shares its report. Across processes sharing the store, one syncs at a time too: a sync holds a lock on the file
/// `<store>-sync.lock`, and one that finds it held returns at once with `otherProcessSyncing` (nothing pushed twice).
public actor SyncEngine {
    public let store: LocalStore
    public let api: CaravanAPI
    public let session: SessionManager
    public let retry: RetryPolicy
    public let pushBatchSize: Int
    public let pullLimit: Int
    let sleep: @Sendable (Duration) async throws -> Void
    let jitter: @Sendable () -> Double
    /// Microseconds since 1970, now.
    let now: @Sendable () -> Int64
    let faults: SyncFaults
    /// What sync is doing, for the app's UI: `status.current`, `status.updates()`, `ObservedSyncStatus(status)`.
    public nonisolated let status: SyncStatusMonitor
    nonisolated let rejected = Broadcast<RejectedWrite>()
    private var running: Task<SyncReport, any Error>?

    public init(store: LocalStore, api: CaravanAPI, session: SessionManager, retry: RetryPolicy = RetryPolicy(), pushBatchSize: Int = 100,
                pullLimit: Int = 10_000, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                now: @escaping @Sendable () -> Int64) {
        self.init(store: store, api: api, session: session, retry: retry, pushBatchSize: pushBatchSize, pullLimit: pullLimit, sleep: sleep,
                  jitter: jitter, now: now, faults: SyncFaults())
    }

    /// The engine with a test's fault hooks (`caravan-client`'s crash points).
    package init(store: LocalStore, api: CaravanAPI, session: SessionManager, retry: RetryPolicy = RetryPolicy(), pushBatchSize: Int = 100,
                 pullLimit: Int = 10_000, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                 jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                 now: @escaping @Sendable () -> Int64, faults: SyncFaults) {
        self.store = store
        self.api = api
        self.session = session
        self.retry = retry
        self.pushBatchSize = max(1, min(pushBatchSize, 1000))
        self.pullLimit = pullLimit
        self.sleep = sleep
        self.jitter = jitter
        self.now = now
        self.faults = faults
        self.status = SyncStatusMonitor(store: store)
    }

    /// Every write the server refuses from now on, as the refusal is recorded (the row is back to the server's state
    /// by then, and the write parked in the outbox with its error), until the iterating task is cancelled.
    public nonisolated func rejections() -> AsyncStream<RejectedWrite> { rejected.subscribe() }

    /// Sends the queued attachment uploads (`uploadAttachments`), pushes every pending local write, then pulls `tables`
    /// until `has_more` is false. `filters` narrow pulled tables
    /// (shapes, in the REST filter grammar); each set of tables and filters keeps its own cursor.
    public func sync(tables: [String], filters: [SyncFilter] = []) async throws -> SyncReport {
        if let running { return try await running.value }
        let task = Task { try await self.run(tables: tables, filters: filters) }
        running = task
        defer { running = nil }
        return try await task.value
    }

    private func run(tables: [String], filters: [SyncFilter]) async throws -> SyncReport {
        do {
            guard let lock = try store.lockSync() else { return SyncReport(otherProcessSyncing: true) }
            defer { lock.release() }
            let started = now()
            var report = SyncReport()
            try await uploadAttachments(into: &report)  // first: a pushed row finds the object it names
            try await push(into: &report)
            let acknowledged = try store.acknowledgedIDs()
            try await pull(tables, filters: filters, into: &report)
            let finished = now()
            try store.forgetAcknowledged(acknowledged, scope: tables, filters: filters, syncedAt: Timestamp.format(microseconds: finished),
                                         durationMilliseconds: (finished - started) / 1000)
            try store.enforceCaches(now: finished / 1_000_000)
            try status.refreshCounts()
            status.update {
                $0.lastSyncedAt = Date(timeIntervalSince1970: Double(finished) / 1_000_000)
                $0.lastError = nil
            }
            return report
        } catch {
            try? status.refreshCounts()  // the sync's own error is the one reported
            status.update {
                $0.uploading = false
                $0.downloading = false
                $0.lastError = SyncStatus.Failure(error)
                if let error = error as? ClientError, error.kind == .offline { $0.connected = false }
            }
            throw error
        }
    }

    private func push(into report: inout SyncReport) async throws {
        let clientID = try store.clientID()
        defer { status.update { $0.uploading = false } }
        while true {
            let batch = try store.pendingBatch(limit: pushBatchSize)
            guard !batch.isEmpty else { return }
            status.update { $0.uploading = true }
            let verdicts = try await withRetries { token in
                try await self.api.push(batch.map(\.wireMutation), clientID: clientID, token: token)
            } onFailure: {
                try self.store.countAttempt(batch.map(\.mutationID))
            }
            faults.afterPushReply?()
            // Rows of rejected writes, and of updates and deletes that changed nothing (or whose first verdict was
            // lost), go back to the server's copy: no later pulled change would correct them.
            var restoring: [(table: TableSchema, rowKey: String, serverRow: JSONValue?)] = []
            var seen = Set<String>()
            var refusals: [RejectedWrite] = []
            for (entry, verdict) in zip(batch, verdicts) {
                switch verdict.status {
                case .applied:
                    report.pushed += 1
                    guard verdict.unconfirmed, entry.operation == "update" || entry.operation == "delete" else { continue }
                case .rejected(let code, let message):
                    report.rejected += 1
                    refusals.append(RejectedWrite(mutationID: entry.mutationID, subject: .row(table: entry.table, operation: entry.operation, key: entry.key),
                                                  code: code, message: message))
                }
                guard seen.insert(entry.table + "\u{1}" + entry.rowKey).inserted, case .object(let pairs) = entry.key else { continue }
                let serverRow = try await withRetries { token in try await self.api.fetchRow(entry.table, key: pairs.map { ($0.key, $0.value) }, token: token) }
                restoring.append((try store.table(entry.table), entry.rowKey, serverRow))
            }
            try store.record(verdicts, restoring: restoring)
            for refusal in refusals { rejected.send(refusal) }
            try status.refreshCounts()
            // A reply that covered only part of the batch (a transient fault on the server) leaves the rest pending.
            if verdicts.count < batch.count { throw ClientError(.transient, "the server stopped the push after \(verdicts.count) mutations") }
        }
    }

    /// Pulls page after page until `has_more` is false, then applies them all in one transaction with the last
    /// cursor: a server transaction (or a snapshot) split over pages is never seen half-applied by a reader (a live
    /// query), and local writes made meanwhile are not held up. The next page is fetched while the current one is
    /// decoded (straight into column values: `PullPageDecoder`). A crash before the end loses only the fetched
    /// pages: the cursor has not moved, they are pulled again.
    ///
    /// Tables pulled anew alone (`refetch=`), the others following on from the cursor: those whose declaration
    /// changed since the store pulled them (`LocalStore.tablesToRefetch`), and those a 409 names (their sync epoch
    /// was raised on the server). Their rows are dropped in the applying transaction (not those with writes waiting).
    /// A 409 naming no table, or a server that does not answer `refetch=`, pulls every table anew.
    private func pull(_ tables: [String], filters: [SyncFilter], into report: inout SyncReport) async throws {
        var cursor = try store.syncState(tables: tables, filters: filters).cursor
        status.update { $0.downloading = true }
        defer { status.update { $0.downloading = false } }
        let marked = try store.tablesToRefetch().intersection(tables)
        var resetting = marked  // tables whose rows the snapshot replaces
        var asking = cursor == nil ? [] : tables.filter(marked.contains)  // the next request's `refetch=`
        var refetches = 0
        var refetching = false
        var changes: [PulledRow] = []
        var prefetched: Task<[UInt8], any Error>?
        defer { prefetched?.cancel() }
        let decoder = PullPageDecoder(tables: store.tables)
        while true {
            let page: [UInt8]
            do {
                if let prefetched {
                    page = try await prefetched.value
                } else {
                    page = try await fetchPage(tables, filters: filters, after: cursor, refetch: asking)
                }
                prefetched = nil
            } catch let error as ClientError where error.kind == .mustRefetch && refetches < 3 {
                // The rows are dropped in the transaction that applies the snapshot, never before it.
                prefetched = nil
                refetches += 1
                let named = Set(error.refetchTables)
                if cursor != nil, !refetching, !named.isEmpty, named.isSubset(of: tables) {
                    resetting.formUnion(named)
                    asking = tables.filter(resetting.contains)
                    changes.removeAll { resetting.contains($0.table) }
                } else {
                    refetching = true
                    changes = []
                    cursor = nil
                    asking = []
                }
                continue
            }
            // The next page is asked for before this one is decoded: the server makes it meanwhile. Its cursor is
            // read from the page's end; a guess the decoded page does not confirm is dropped and asked again.
            let guessed = asking.isEmpty ? decoder.nextCursor(of: page) : nil
            if let guessed { prefetched = Task { try await self.fetchPage(tables, filters: filters, after: guessed) } }
            let reply = try await Self.decode(page, with: decoder)
            if !asking.isEmpty {
                asking = []
                if !resetting.isSubset(of: reply.refetched) {
                    // A server that does not know `refetch=` went on as asked before: every table anew.
                    refetching = true
                    changes = []
                    cursor = nil
                    continue
                }
            }
            if reply.hasMore, let next = reply.cursor {
                if next != guessed {
                    prefetched?.cancel()
                    prefetched = Task { try await self.fetchPage(tables, filters: filters, after: next) }
                }
            } else {
                prefetched?.cancel()
                prefetched = nil
            }
            changes += reply.changes
            if let last = reply.changes.lazy.map({ $0.seq }).max() { report.lastSeq = max(report.lastSeq ?? 0, last) }
            cursor = reply.cursor
            report.hasMore = reply.hasMore
            if !reply.hasMore {
                let whole = PullReply(changes: changes, cursor: reply.cursor, hasMore: false)
                report.pulled += try store.apply(whole, scope: tables, filters: filters, refetching: refetching, refetchingTables: resetting,
                                                 now: now() / 1_000_000, beforeCommit: faults.beforePullCommit)
                return
            }
        }
    }

    /// A page decoded off the actor, so that the next page's request (a task on the actor) goes out meanwhile.
    private nonisolated static func decode(_ page: [UInt8], with decoder: PullPageDecoder) async throws -> PullReply {
        try CaravanAPI.pullReply(from: page, decoder: decoder)
    }

    /// One page's body, undecoded.
    private func fetchPage(_ tables: [String], filters: [SyncFilter], after cursor: String?, refetch: [String] = []) async throws -> [UInt8] {
        try await withRetries { token in
            try await self.api.pullPage(tables: tables, filters: filters, cursor: cursor, refetch: refetch, limit: self.pullLimit, token: token)
        }
    }

    /// Runs `body` with a valid token, retrying transient faults with backoff and an expired token once.
    func withRetries<T: Sendable>(_ body: @Sendable (String?) async throws -> T, onFailure: () throws -> Void = {}) async throws -> T {
        var attempt = 0
        var refreshed = false
        while true {
            attempt += 1
            do {
                let result = try await body(try await session.accessToken(forceRefresh: false))
                status.update { $0.connected = true }
                return result
            } catch let error as ClientError where error.kind == .unauthorized && !refreshed && (try? session.current()) != nil {
                refreshed = true
                _ = try await session.accessToken(forceRefresh: true)
            } catch let error as ClientError where (error.kind == .offline || error.kind == .transient) && attempt < retry.attempts {
                status.update {
                    $0.lastError = SyncStatus.Failure(error)
                    if error.kind == .offline { $0.connected = false }
                }
                try onFailure()
                try await sleep(retry.delay(attempt: attempt, jitter: jitter(), retryAfter: error.retryAfter))
            }
        }
    }
}
