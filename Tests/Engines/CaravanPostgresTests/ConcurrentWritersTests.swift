import CaravanCore
import CaravanTesting
import CaravanPostgres
import Foundation
import Logging
import Synchronization
import Testing

/// Write transactions run concurrently on PostgreSQL (no global write lock); readers of the change log still see
/// every committed entry once, in an order consistent with commits, and never half a transaction.
@Suite("Concurrent writers on PostgreSQL")
struct ConcurrentWritersTests {
    static let hotRows: [Int64] = [1, 2, 3]

    /// One transaction of a writer: locks a hot row (first update), reads its `n` from that update's result, sets
    /// `n + 1` (second update) and adds a note. Every 7th transaction fails after writing, so it rolls back and its
    /// `seq`s become gaps that never fill.
    static func work(_ pipeline: WritePipeline, writer: Int, step: Int) async throws {
        let hot = hotRows[(writer + step) % hotRows.count]
        let noteID = Int64(writer * 10_000 + step)
        let failing = (writer * 31 + step) % 7 == 0
        do {
            try await pipeline.run(catalog.access(for: .serviceRole)) { transaction in
                let key = BoundPredicate.compare(try counters.requireColumn("id"), .eq, .integer(hot))
                let locked = try await transaction.update(counters, set: RowValues(["writer": .text("w\(writer)")]), where: key)
                guard case .integer(let n)? = locked.rows.first?[1] else { throw CaravanError(.internalFailure, "no counter \(hot)") }
                _ = try await transaction.update(counters, set: RowValues(["n": .integer(n + 1)]), where: key)
                _ = try await transaction.insert([note(noteID)], into: notes, conflict: nil)
                if failing { throw CaravanError(.raisedException, "rolled back on purpose") }
            }
        } catch let error as CaravanError where failing && error.code == .raisedException {
            // expected: the transaction rolled back
        }
    }

    /// 8 writers on two instances (two stores with their own pools on one database); a listener on a third
    /// instance and a reader polling `changes(after:)` on the first follow the log while they write.
    @Test func eightWritersOnTwoInstancesAndEveryReaderSeesEachEntryOnceInCommitOrder() async throws {
        let a = try await makeNotesStore(connections: 6)
        let b = PostgresStore(configuration: a.configuration)
        let c = PostgresStore(configuration: a.configuration)
        await b.start()
        await c.start()
        let setup = WritePipeline(store: a, publisher: ChangePublisher(), publication: .byChangeLog)
        try await setup.run(catalog.access(for: .serviceRole)) { transaction in
            _ = try await transaction.insert(Self.hotRows.map { RowValues(["id": .integer($0), "n": .integer(0)]) }, into: counters, conflict: nil)
        }
        let start = try await a.latestChangeSeq()

        let publisher = ChangePublisher()
        let heard = Collector(publisher.subscribe())
        var listening = ChangeListener.Configuration()
        listening.pollInterval = .seconds(60)  // delivery must not depend on the safety-net poll
        let listener = ChangeListener(store: c, publisher: publisher, after: start, configuration: listening, logger: Logger(label: "test.listener"))
        let listenerTask = Task { try await listener.run() }
        #expect(await eventually(within: .seconds(30)) { listener.isListening })

        let done = Mutex(false)
        async let polled: [[Change]] = {
            var pages: [[Change]] = []
            var cursor = start
            while true {
                let finished = done.withLock { $0 }
                let page = try await a.changes(after: cursor, limit: 200)
                if !page.isEmpty { pages.append(page) }
                cursor = page.last?.seq ?? cursor
                if finished && page.isEmpty { return pages }
            }
        }()

        let writers = 8, steps = 25
        let pipelines = [a, b].map { WritePipeline(store: $0, publisher: ChangePublisher(), publication: .byChangeLog) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for step in 0..<steps { try await Self.work(pipelines[writer % 2], writer: writer, step: step) }
                }
            }
            try await group.waitForAll()
        }
        done.withLock { $0 = true }
        let pollPages = try await polled
        let fromPolling = pollPages.flatMap { $0 }

        // The truth: a fresh instance reads the whole log once nothing is running.
        let fresh = PostgresStore(configuration: a.configuration)
        await fresh.start()
        let committed = try await fresh.changes(after: start, limit: 100_000)
        let rolledBack = (0..<writers).flatMap { w in (0..<steps).filter { ($0 * 1 + w * 31) % 7 == 0 } }.count
        let transactions = writers * steps - rolledBack
        #expect(committed.count == transactions * 3, "each committed transaction logs two updates and one insert")
        #expect(await eventually(within: .seconds(30)) { heard.changes.count >= committed.count })

        for (name, seen) in [("polling reader", fromPolling), ("listener", heard.changes)] {
            #expect(seen.map(\.seq) == committed.map(\.seq), "\(name): an entry was skipped, repeated or reordered; missing \(Set(committed.map(\.seq)).subtracting(seen.map(\.seq)).sorted()), extra \(Set(seen.map(\.seq)).subtracting(committed.map(\.seq)).sorted())")
            // Commit order per row: the entries that set a hot row's `n` carry 1, 2, 3, … in delivery order.
            for hot in Self.hotRows {
                let values = seen.filter { $0.table == "counters" && $0.primaryKey == #"{"id":\#(hot)}"# }.compactMap { change -> Int64? in
                    guard let new = change.record.flatMap(Self.counter), let old = change.oldRecord.flatMap(Self.counter), new != old else { return nil }
                    return new
                }
                #expect(!values.isEmpty)
                #expect(values == values.indices.map { Int64($0 + 1) }, "\(name): row \(hot) changes out of commit order: \(values)")
            }
        }
        // Whole transactions: every page the polling reader got that its limit did not cut holds all the entries of
        // each transaction in it (the closed mark never falls inside a transaction).
        let entriesOfTransaction = Dictionary(grouping: committed, by: \.transaction).mapValues { Set($0.map(\.seq)) }
        for page in pollPages where page.count < 200 {
            let seqs = Set(page.map(\.seq))
            for transaction in Set(page.map(\.transaction)) {
                #expect(entriesOfTransaction[transaction]?.isSubset(of: seqs) == true, "a page split transaction \(transaction)")
            }
        }
        let finalCounts = try await fresh.unsafeRows(#"SELECT "n"::text FROM "counters" ORDER BY "id""#).compactMap { $0.first ?? nil }.compactMap { Int64($0) }
        #expect(finalCounts.reduce(0, +) == Int64(transactions), "every committed transaction incremented one counter exactly once")

        listenerTask.cancel()
        _ = await listenerTask.result
        heard.stop()
        for store in [fresh, c, b, a] { await store.shutdown() }
    }

    static func counter(in record: String) -> Int64? {
        guard let range = record.range(of: "\"n\":") else { return nil }
        return Int64(record[range.upperBound...].prefix { $0.isNumber })
    }

    /// A transaction that stays open after drawing a `seq` holds back every entry drawn after it; none is lost, and
    /// they arrive in order once it commits. One that rolls back leaves a gap that readers step over.
    @Test(arguments: [true, false])
    func aLongOpenTransactionDelaysDeliveryButLosesNothing(commits: Bool) async throws {
        let store = try await makeNotesStore(connections: 6)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher(), publication: .byChangeLog)
        let written = Gate()
        let release = Gate()
        let long = Task {
            try await pipeline.run(catalog.access(for: .serviceRole)) { transaction in
                _ = try await transaction.insert([note(1)], into: notes, conflict: nil)
                // Waiting for the entry's `seq` draws it now (a transaction otherwise draws its `seq`s at COMMIT).
                #expect(await transaction.lastLoggedSeq == 1)
                written.open()
                await release.wait()  // the transaction stays open
                if !commits { throw CaravanError(.raisedException, "rolled back on purpose") }
            }
        }
        await written.wait()
        for id in Int64(2)...6 { try await store.insertNotes([note(id)]) }

        // While it is open: nothing after its entry (seq 1) is delivered, whoever asks and however often.
        for _ in 0..<5 {
            #expect(try await store.changes(after: 0, limit: 100).isEmpty)
            #expect(try await store.latestChangeSeq() == 0)
            try await Task.sleep(for: .milliseconds(50))
        }
        release.open()
        _ = await long.result
        // Settled once the transactions running at an observation have ended (a commit announcement's NOTIFY is one).
        let expected = commits ? 6 : 5
        #expect(try await eventually(within: .seconds(30)) { try await store.changes(after: 0, limit: 100).count == expected })
        let delivered = try await store.changes(after: 0, limit: 100)
        #expect(delivered.map(\.seq) == (commits ? Array(Int64(1)...6) : Array(Int64(2)...6)))
        #expect(delivered.map(\.primaryKey) == (commits ? (1...6) : (2...6)).map { #"{"id":\#($0)}"# })
        await store.shutdown()
    }

    /// A transaction draws its `seq`s together, right before COMMIT: one that has written rows and stays open holds
    /// nothing back, and two whose row writes interleave get consecutive `seq`s each, labelled with their first, so
    /// the closed mark falls between them.
    @Test func aTransactionDrawsItsSeqsTogetherAtCommit() async throws {
        let store = try await makeNotesStore(connections: 6)
        let access = catalog.access(for: .serviceRole)
        let firstWrote = (0..<3).map { _ in Gate() }
        let secondWrote = (0..<3).map { _ in Gate() }
        let release = Gate()
        // Their row writes alternate: 1, 2, 3, 4, 5, 6.
        async let first: [Change] = store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            for n in 0..<3 {
                _ = try await transaction.insert([note(Int64(1 + 2 * n))], into: notes, conflict: nil)
                firstWrote[n].open()
                await secondWrote[n].wait()
            }
            await release.wait()  // stays open while the other commits
        }.1
        let second = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            for n in 0..<3 {
                await firstWrote[n].wait()
                _ = try await transaction.insert([note(Int64(2 + 2 * n))], into: notes, conflict: nil)
                secondWrote[n].open()
            }
        }.1
        // The open one has written three rows but drawn nothing: the other's entries are delivered at once.
        #expect(second.map(\.seq) == [1, 2, 3])
        #expect(second.map(\.transaction) == [1, 1, 1])
        #expect(try await store.changes(after: 0, limit: 100).map(\.primaryKey) == [2, 4, 6].map { #"{"id":\#($0)}"# })
        release.open()
        let firstChanges = try await first
        #expect(firstChanges.map(\.seq) == [4, 5, 6])
        #expect(firstChanges.map(\.transaction) == [4, 4, 4])
        #expect(try await eventually(within: .seconds(30)) { try await store.changes(after: 0, limit: 100).count == 6 })
        let log = try await store.changes(after: 0, limit: 100)
        #expect(log.map(\.seq) == Array(1...6))
        #expect(log.map(\.transaction) == [1, 1, 1, 4, 4, 4])
        #expect(log.map(\.primaryKey) == [2, 4, 6, 1, 3, 5].map { #"{"id":\#($0)}"# })
        await store.shutdown()
    }

    /// A transaction of more entries than one append statement carries: every entry is logged once, in order, all
    /// labelled with the transaction's first `seq`; one whose first entry was drawn early (something waited for its
    /// `seq`) labels its later entries with it.
    @Test func largeAndEarlyDrawnTransactionsKeepOneLabel() async throws {
        let store = try await makeNotesStore(connections: 4)
        let access = catalog.access(for: .serviceRole)
        let rows = (1...Int64(2 * PostgresStore.changeBatchLimit + 10)).map(note)
        let large = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            _ = try await transaction.insert(rows, into: notes, conflict: nil)
        }.1
        #expect(large.map(\.seq) == Array(1...Int64(rows.count)))
        #expect(Set(large.map(\.transaction)) == [1])
        let early = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            _ = try await transaction.insert([note(100_001)], into: notes, conflict: nil)
            _ = await transaction.lastLoggedSeq
            _ = try await transaction.insert([note(100_002), note(100_003)], into: notes, conflict: nil)
        }.1
        let next = Int64(rows.count + 1)
        #expect(early.map(\.seq) == [next, next + 1, next + 2])
        #expect(early.map(\.transaction) == [next, next, next])
        let log = try await store.changes(after: 0, limit: 10_000)
        #expect(log.map(\.seq) == Array(1...next + 2))
        #expect(log.map(\.transaction) == Array(repeating: 1, count: rows.count) + [next, next, next])
        #expect(log.map(\.primaryKey) == (rows.indices.map { Int64($0 + 1) } + [100_001, 100_002, 100_003]).map { #"{"id":\#($0)}"# })
        await store.shutdown()
    }

    /// Upserts row by row, each in a savepoint, one of them refused: the refused row's entry is not logged, the
    /// others are, in order, under one label.
    @Test func aRefusedRowInASavepointLeavesNoEntry() async throws {
        let store = try await makeNotesStore(connections: 4)
        let access = catalog.access(for: .serviceRole)
        let outcomes = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            try await transaction.upsertEach([note(1), RowValues(["id": .null, "body": .text("no key")]), note(2)], into: notes, conflictColumns: ["id"])
        }
        #expect(outcomes.0.count == 3)
        if case .rejected = outcomes.0[1] {} else { Issue.record("the row without a key was not refused: \(outcomes.0)") }
        #expect(outcomes.1.map(\.primaryKey) == [1, 2].map { #"{"id":\#($0)}"# })
        let log = try await store.changes(after: 0, limit: 100)
        #expect(log.map(\.primaryKey) == [1, 2].map { #"{"id":\#($0)}"# })
        #expect(Set(log.map(\.transaction)) == [log[0].seq])
        await store.shutdown()
    }

    /// Two transactions whose entries interleave (1 and 3 are one's, 2 and 4 the other's): a sync page cut by its
    /// limit after 1 goes on to 4, the first point where no transaction has entries on both sides.
    @Test func aSyncPageCutInsideInterleavedTransactionsGoesOnToAWholeEnd() async throws {
        let store = try await makeNotesStore(connections: 6)
        let steps = (1...3).map { _ in Gate() }
        let access = catalog.access(for: .serviceRole)
        async let first: Void = store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            // Each entry has drawn its `seq` before the other side goes on (an append is sent without waiting for
            // its answer: `lastLoggedSeq` waits for it).
            _ = try await transaction.insert([note(1)], into: notes, conflict: nil)
            _ = await transaction.lastLoggedSeq
            steps[0].open()
            await steps[1].wait()
            _ = try await transaction.insert([note(3)], into: notes, conflict: nil)
            _ = await transaction.lastLoggedSeq
            steps[2].open()
        }.0
        async let second: Void = store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            await steps[0].wait()
            _ = try await transaction.insert([note(2)], into: notes, conflict: nil)
            _ = await transaction.lastLoggedSeq
            steps[1].open()
            await steps[2].wait()
            _ = try await transaction.insert([note(4)], into: notes, conflict: nil)
        }.0
        _ = try await (first, second)
        let page = try await store.changeLogPage(after: 0, tables: ["notes"], limit: 1)
        #expect(page.changes.map(\.seq) == [1, 2, 3, 4])
        #expect(page.changes.map(\.transaction) == [1, 2, 1, 2])
        #expect(page.reachedLimit)
        await store.shutdown()
    }

    /// Two transactions lock two rows in opposite orders: PostgreSQL ends one with a deadlock (40P01); the store
    /// runs that one again, and both writes land.
    @Test func aDeadlockedTransactionIsRunAgainAndBothWritesLand() async throws {
        let store = try await makeNotesStore(connections: 6)
        try await store.insertNotes([note(1), note(2)])
        let runs = RunCounter()
        let firstLocks = Rendezvous(parties: 2)
        let seqs = try await withThrowingTaskGroup(of: [Change].self) { group in
            for (first, second) in [(Int64(1), Int64(2)), (2, 1)] {
                group.addTask {
                    try await store.transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { transaction in
                        let attempt = runs.next()
                        let column = try notes.requireColumn("id")
                        _ = try await transaction.update(notes, set: RowValues(["body": .text("first \(first)")]), where: .compare(column, .eq, .integer(first)))
                        if attempt <= 2 {
                            // Both hold their first row before either asks for its second.
                            await firstLocks.arrive(waitingAtMost: .seconds(10))
                        }
                        _ = try await transaction.update(notes, set: RowValues(["body": .text("then \(second)")]), where: .compare(column, .eq, .integer(second)))
                    }.1
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.count == 3, "one of the two ran twice")
        #expect(seqs.allSatisfy { $0.count == 2 })
        // The rolled-back attempt left gaps: they settle once the transactions running at an observation have ended
        // (a commit announcement's NOTIFY is one), so the first read may still hold the later entries back.
        #expect(try await eventually(within: .seconds(30)) { try await store.changes(after: 0, limit: 100).count >= 2 + 4 })
        let log = try await store.changes(after: 0, limit: 100)
        #expect(log.count == 2 + 4, "two inserts, then two updates from each transaction, nothing from the rolled-back attempt")
        await store.shutdown()
    }

    /// Concurrent upserts of one new key on two instances: one inserts, the others merge into its row; none is
    /// refused with a unique violation.
    @Test func concurrentUpsertsOfOneNewKeyInsertOnceAndMergeTheRest() async throws {
        let a = try await makeNotesStore(connections: 8)
        let b = PostgresStore(configuration: a.configuration)
        await b.start()
        let pipelines = [a, b].map { WritePipeline(store: $0, publisher: ChangePublisher(), publication: .byChangeLog) }
        let outcomes = try await withThrowingTaskGroup(of: [RowOutcome].self) { group in
            for i in 0..<16 {
                group.addTask {
                    try await pipelines[i % 2].run(catalog.access(for: .serviceRole)) { transaction in
                        try await transaction.upsertEach([RowValues(["id": .integer(777), "body": .text("writer \(i)")])], into: notes, conflictColumns: ["id"])
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let inserted = outcomes.filter { if case .inserted = $0 { true } else { false } }.count
        let updated = outcomes.filter { if case .updated = $0 { true } else { false } }.count
        #expect(inserted == 1 && updated == 15, "outcomes: \(outcomes)")
        let log = try await a.changes(after: 0, limit: 100)
        #expect(log.filter { $0.operation == .insert }.count == 1)
        #expect(log.filter { $0.operation == .update }.count == 15)
        await b.shutdown()
        await a.shutdown()
    }
}

/// Counts the runs of a transaction body (bodies run on the store's pool threads).
final class RunCounter: Sendable {
    private let runs = Mutex(0)

    /// Counts one more run; returns its number (1 for the first).
    func next() -> Int { runs.withLock { $0 += 1; return $0 } }

    var count: Int { runs.withLock { $0 } }
}
