import CaravanCore
import CaravanTesting
import CaravanPostgres
import NIOPosix
import Testing

/// The async storage port on PostgreSQL: a write transaction's body runs on the event loop of the connection it
/// holds, and one that waits holds that connection, not a thread.
@Suite("Async transactions on PostgreSQL")
struct AsyncTransactionTests {
    /// 16 write transactions are open at once, each waiting (suspended) after its insert — far more than the
    /// machine's cores, which are all the threads they have. None has committed while they wait; once released, all
    /// commit. Each body runs on an event loop, before and after its awaits (a thread-pool design fails this).
    @Test func transactionsThatWaitHoldConnectionsNotThreads() async throws {
        let open = 16
        let store = try await makeNotesStore(connections: 24)
        let written = RunCounter()
        let offLoop = RunCounter()
        let release = Gate()
        let access = catalog.access(for: .serviceRole)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 1...open {
                group.addTask {
                    _ = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
                        if MultiThreadedEventLoopGroup.currentEventLoop == nil { _ = offLoop.next() }
                        _ = try await transaction.insert([note(Int64(id))], into: notes, conflict: nil)
                        _ = written.next()
                        await release.wait()
                        if MultiThreadedEventLoopGroup.currentEventLoop == nil { _ = offLoop.next() }
                    }
                }
            }
            #expect(await eventually(within: .seconds(30)) { written.count == open }, "every transaction wrote while all were open (\(written.count) of \(open))")
            #expect(try await store.unsafeRows(#"SELECT count(*)::text FROM "notes""#) == [["0"]], "none committed while they wait")
            release.open()
            try await group.waitForAll()
        }
        #expect(try await store.unsafeRows(#"SELECT count(*)::text FROM "notes""#) == [["\(open)"]])
        #expect(try await store.changes(after: 0, limit: 100).count == open)
        #expect(offLoop.count == 0, "a transaction body ran off the event loops")
        await store.shutdown()
    }
}
