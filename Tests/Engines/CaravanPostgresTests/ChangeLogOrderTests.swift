import CaravanCore
import CaravanPostgres
import Synchronization
import Testing

@Suite("Change-log order on PostgreSQL")
struct ChangeLogOrderTests {
    /// Many writers commit concurrently while a reader follows the log with `changes(after:)`, moving its cursor to
    /// the last seq it saw. If a transaction could commit a smaller seq after a larger one was visible, the reader
    /// would step over it and the test would find a hole.
    @Test func aReaderFollowingTheLogSeesEverySeqOnceInOrder() async throws {
        let writers = 8, transactionsPerWriter = 30, notesPerTransaction = 3
        let store = try await makeNotesStore(connections: writers + 1)
        let done = Mutex(false)
        async let followed: [Int64] = {
            var seen: [Int64] = []
            var cursor: Int64 = 0
            while true {
                let finished = done.withLock { $0 }  // read before polling: a last poll after the end drains all
                let page = try await store.changes(after: cursor, limit: 1000)
                seen.append(contentsOf: page.map(\.seq))
                cursor = page.last?.seq ?? cursor
                if finished && page.isEmpty { return seen }
            }
        }()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for t in 0..<transactionsPerWriter {
                        let first = Int64((writer * transactionsPerWriter + t) * notesPerTransaction)
                        try await store.insertNotes((first..<first + Int64(notesPerTransaction)).map(note))
                    }
                }
            }
            try await group.waitForAll()
        }
        done.withLock { $0 = true }
        let seen = try await followed
        let total = writers * transactionsPerWriter * notesPerTransaction
        #expect(seen.count == total)
        #expect(seen == Array(1...Int64(total)), "the reader skipped, repeated or reordered entries")
        #expect(try await store.allSeqs() == seen)
        await store.shutdown()
    }
}
