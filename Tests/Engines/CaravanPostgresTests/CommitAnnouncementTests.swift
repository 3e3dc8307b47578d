import CaravanCore
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import CaravanPostgres

/// Commits are announced after the write transactions, not inside them (a NOTIFY queued in a write transaction
/// serializes every commit of the database): this instance's listeners in process, other instances by one
/// coalesced NOTIFY.
@Suite("Commit announcements on PostgreSQL")
struct CommitAnnouncementTests {
    /// What `CommitAnnouncer.run` sent, and a gate that holds a send until the test opens it.
    final class Sends: Sendable {
        let sent = Mutex<[Int64]>([])
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let holding = Mutex(false)

        func send(_ seq: Int64) async {
            let hold = holding.withLock { $0 }
            if hold { await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } } }
            sent.withLock { $0.append(seq) }
        }

        func open() {
            holding.withLock { $0 = false }
            gate.withLock { $0?.resume(); $0 = nil }
        }
    }

    /// The bounds only catch a hang: beside the whole suite on 2 cores, the announcer's task has waited over 10 s for
    /// a thread (2026-11-28, alone: 0.15 s).
    @Test func commitsMadeWhileAnAnnouncementIsOnItsWayGoOutAsOneWithTheHighestSeq() async throws {
        let announcer = CommitAnnouncer(interval: .milliseconds(1))
        let sends = Sends()
        sends.holding.withLock { $0 = true }
        let running = Task { await announcer.run(logger: Logger(label: "test.announcer")) { await sends.send($0) } }
        announcer.committed(1)
        #expect(await eventually(within: .seconds(60)) { sends.gate.withLock { $0 != nil } }, "the first commit is announced at once")
        for seq in [5, 3, 9, 7] as [Int64] { announcer.committed(seq) }
        sends.open()
        #expect(await eventually(within: .seconds(60)) { sends.sent.withLock { $0 } == [1, 9] })
        try await Task.sleep(for: .milliseconds(50))
        #expect(sends.sent.withLock { $0 } == [1, 9], "nothing new committed: nothing more announced")
        announcer.committed(12)
        #expect(await eventually(within: .seconds(60)) { sends.sent.withLock { $0 } == [1, 9, 12] })
        running.cancel()
        await running.value

        // A store started again runs the announcer again: commits made meanwhile are announced then.
        announcer.committed(15)
        let again = Task { await announcer.run(logger: Logger(label: "test.announcer")) { await sends.send($0) } }
        #expect(await eventually(within: .seconds(60)) { sends.sent.withLock { $0 } == [1, 9, 12, 15] })
        again.cancel()
        await again.value
    }

    @Test func localListenersHearEachCommitOfThisInstance() async throws {
        let announcer = CommitAnnouncer(interval: .milliseconds(1))
        var commits = announcer.localCommits().makeAsyncIterator()
        announcer.committed(4)
        #expect(await commits.next() == 4)
        announcer.committed(6)
        #expect(await commits.next() == 6)
    }

    /// 8 writers make 160 commits on one instance. A raw LISTEN connection hears far fewer notifications (one per
    /// announcement interval, not one per transaction), the last naming the highest `seq`; another instance's
    /// listener, whose safety-net poll is too slow to matter, still publishes every change once, in `seq` order.
    @Test func manyCommitsAreAnnouncedByFewNotificationsAndReachTheOtherInstance() async throws {
        let base = try await makeNotesStore()
        var configuration = base.configuration
        configuration.commitAnnouncementInterval = .milliseconds(100)
        let writer = PostgresStore(configuration: configuration)
        await writer.start()
        let start = try await writer.latestChangeSeq()

        let other = ListeningInstance(on: base, after: start, pollInterval: .seconds(600))
        #expect(await other.listening())

        let heard = Mutex<[String]>([])
        let connection = try await PostgresConnection.connect(configuration: try base.configuration.makeConnectionConfiguration(), id: 99,
                                                              logger: Logger(label: "test.raw"))
        let isListening = Mutex(false)
        let rawListener = Task {
            try await connection.listen(on: PostgresChangeLog.channel) { notifications in
                isListening.withLock { $0 = true }
                for try await notification in notifications { heard.withLock { $0.append(notification.payload) } }
            }
        }
        #expect(await eventually(within: .seconds(30)) { isListening.withLock { $0 } })

        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    for step in 0..<20 { try await writer.insertNotes([note(Int64(w * 100 + step))]) }
                }
            }
            try await group.waitForAll()
        }
        let seqs = try await writer.allSeqs().filter { $0 > start }
        #expect(seqs.count == 160)
        #expect(await eventually(within: .seconds(30)) { heard.withLock { $0.last } == seqs.last.map(String.init) },
                "the last announcement names the highest seq")
        let notifications = heard.withLock { $0.count }
        #expect(notifications <= 80, "\(notifications) notifications for 160 commits: not coalesced")
        #expect(await eventually(within: .seconds(30)) { other.received.changes.count >= 160 })
        #expect(other.received.changes.map(\.seq) == seqs, "every change once, in seq order")

        rawListener.cancel()
        try? await connection.close()
        _ = await rawListener.result
        await other.stop()
        await writer.shutdown()
        await base.shutdown()
    }

    /// An instance that dies between a commit and its announcement: the other instances find the commit at their
    /// safety-net poll. (Here the entry is written by a statement that announces nothing.)
    @Test func aCommitNobodyAnnouncedIsFoundAtThePoll() async throws {
        let store = try await makeNotesStore()
        let instance = ListeningInstance(on: store, after: try await store.latestChangeSeq(), pollInterval: .milliseconds(300))
        #expect(await instance.listening())
        _ = try await store.unsafeRows(#"""
            INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "actor", "tx_id")
            SELECT 'notes', '{"id":1}', 'insert', '{"id":1,"body":"unannounced"}', 'service_role', NULL RETURNING "seq"::text
            """#)
        #expect(await eventually(within: .seconds(30)) { instance.received.changes.map(\.primaryKey) == [#"{"id":1}"#] })
        await instance.stop()
        await store.shutdown()
    }

    /// An announcement's own transaction takes a transaction id but never draws a `seq`: the horizon does not count
    /// it as running, so entries behind a rolled-back gap settle while one is open. (Held open here on purpose: a
    /// transaction whose statement is `SELECT pg_notify(…)` and that has taken its id.)
    @Test func anOpenAnnouncementDoesNotHoldSettledEntriesBack() async throws {
        let store = try await makeNotesStore()
        let start = try await store.latestChangeSeq()
        await #expect(throws: CaravanError.self) {
            _ = try await store.transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { transaction in
                _ = try await transaction.insert([note(1)], into: notes, conflict: nil)
                throw CaravanError(.raisedException, "rolled back on purpose: its seq becomes a gap")
            }
        }
        let announcing = try await PostgresConnection.connect(configuration: try store.configuration.makeConnectionConfiguration(), id: 98,
                                                              logger: Logger(label: "test.raw"))
        _ = try await announcing.query("BEGIN", logger: Logger(label: "test.raw")).get()
        _ = try await announcing.query("SELECT pg_notify('caravan_test', '1'), pg_current_xact_id()", logger: Logger(label: "test.raw")).get()
        try await store.insertNotes([note(2)])
        let delivered = try await store.changes(after: start, limit: 100)
        #expect(delivered.map(\.primaryKey) == [#"{"id":2}"#], "settled at once: nothing else was writing")
        _ = try await announcing.query("ROLLBACK", logger: Logger(label: "test.raw")).get()
        try await announcing.close()
        await store.shutdown()
    }
}
