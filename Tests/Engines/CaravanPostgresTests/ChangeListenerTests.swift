import CaravanCore
import CaravanPostgres
import Logging
import Testing

@Suite("Change listener: realtime across instances")
struct ChangeListenerTests {
    /// One running instance: a store (its own pool), a publisher, a listener feeding it, and a pipeline that
    /// leaves publishing to the listener.
    struct Instance {
        let store: PostgresStore
        let publisher = ChangePublisher()
        let listener: ChangeListener
        let received: Collector
        let pipeline: WritePipeline
        let task: Task<Void, any Error>

        init(store: PostgresStore, after seq: Int64?, pollInterval: Duration = .seconds(60)) {
            self.store = store
            var configuration = ChangeListener.Configuration()
            configuration.pollInterval = pollInterval  // long: delivery within the test's wait proves NOTIFY works
            received = Collector(publisher.subscribe())
            listener = ChangeListener(store: store, publisher: publisher, after: seq, configuration: configuration, logger: Logger(label: "test.listener"))
            pipeline = WritePipeline(store: store, publisher: publisher, publication: .byChangeLog)
            let listener = self.listener
            task = Task { try await listener.run() }
        }

        func write(_ id: Int64) async throws {
            try await pipeline.run(catalog.access(for: .serviceRole)) { transaction in
                _ = try await transaction.insert([note(id)], into: notes, conflict: nil)
            }
        }

        func stop() async {
            task.cancel()
            _ = await task.result
            received.stop()
            await store.shutdown()
        }
    }

    @Test func aWriteOnOneInstanceReachesEveryInstanceOnceInSeqOrder() async throws {
        let storeA = try await makeNotesStore()
        let storeB = PostgresStore(configuration: storeA.configuration)
        await storeB.start()
        let a = Instance(store: storeA, after: nil)
        let b = Instance(store: storeB, after: nil)
        #expect(await eventually(within: .seconds(30)) { a.listener.isListening && b.listener.isListening })

        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<40 {
                group.addTask { try await (id.isMultiple(of: 2) ? a : b).write(Int64(id)) }
            }
            try await group.waitForAll()
        }
        let logged = try await storeA.allSeqs()
        #expect(logged.count == 40)
        for instance in [a, b] {
            #expect(await eventually(within: .seconds(30)) { instance.received.changes.count >= 40 })
        }
        // A sentinel written after everything: once it arrives, any duplicate would have arrived before it.
        try await a.write(1000)
        for instance in [a, b] {
            #expect(await eventually(within: .seconds(30)) { instance.received.changes.last?.primaryKey == #"{"id":1000}"# })
            let seqs = instance.received.changes.map(\.seq)
            #expect(seqs == (try await storeA.allSeqs()), "every change once, in seq order")
            #expect(instance.listener.deliveredSeq == seqs.last)
        }
        await a.stop()
        await b.stop()
    }

    /// Started with a cursor, a listener first publishes what was committed after it (catch-up), then new writes.
    @Test func aListenerStartedWithACursorCatchesUp() async throws {
        let store = try await makeNotesStore()
        try await store.insertNotes([note(1)])
        let before = try await store.latestChangeSeq()
        try await store.insertNotes([note(2), note(3)])
        let instance = Instance(store: store, after: before)
        #expect(await eventually(within: .seconds(30)) { instance.received.changes.count == 2 })
        try await instance.write(4)
        #expect(await eventually(within: .seconds(30)) { instance.received.changes.count == 3 })
        #expect(instance.received.changes.map(\.primaryKey) == [#"{"id":2}"#, #"{"id":3}"#, #"{"id":4}"#])
        await instance.stop()
    }

    /// `tx=rollback` and failed transactions log nothing and announce nothing.
    @Test func rolledBackWritesAreNotPublished() async throws {
        let store = try await makeNotesStore()
        let instance = Instance(store: store, after: 0)
        #expect(await eventually(within: .seconds(30)) { instance.listener.isListening })
        try await instance.pipeline.run(catalog.access(for: .serviceRole), rollback: true) { transaction in
            _ = try await transaction.insert([note(1)], into: notes, conflict: nil)
        }
        await #expect(throws: CaravanError.self) {
            try await instance.pipeline.run(catalog.access(for: .serviceRole)) { transaction in
                _ = try await transaction.insert([note(2), note(2)], into: notes, conflict: nil)
            }
        }
        try await instance.write(3)
        #expect(await eventually(within: .seconds(30)) { !instance.received.changes.isEmpty })
        #expect(instance.received.changes.map(\.primaryKey) == [#"{"id":3}"#])
        await instance.stop()
    }
}
