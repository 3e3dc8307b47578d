import CaravanCore
import CaravanTesting
import CaravanPostgres
import Testing

/// The pipeline locks the rows it updates `FOR NO KEY UPDATE`, the lock PostgreSQL's own UPDATE takes when no key
/// changes. Adding a child row takes `KEY SHARE` on its parent (the foreign key check); `FOR UPDATE` would conflict
/// with that, so two transactions that each add a child and then update the parent would deadlock, each holding
/// `KEY SHARE` and waiting for the other's.
@Suite("Row locks on PostgreSQL")
struct RowLockTests {
    @Test func addingChildrenAndUpdatingTheirParentConcurrentlyNeverDeadlocks() async throws {
        let store = try await makeNotesStore(connections: 8)
        let database = store.configuration.database
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher(), publication: .byChangeLog)
        let parentKey = BoundPredicate.compare(try parents.requireColumn("id"), .eq, .integer(1))
        try await pipeline.run(catalog.access(for: .serviceRole)) { transaction in
            _ = try await transaction.insert([RowValues(["id": .integer(1), "n": .integer(0)])], into: parents, conflict: nil)
        }
        let writers = 8, steps = 12
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for step in 0..<steps {
                        try await pipeline.run(catalog.access(for: .serviceRole)) { transaction in
                            let child = Int64(writer * 1_000 + step)
                            _ = try await transaction.insert([RowValues(["id": .integer(child), "parent_id": .integer(1)])], into: children, conflict: nil)
                            let parent = try await transaction.update(parents, set: RowValues(["n": .integer(child)]), where: parentKey)
                            guard parent.rows.count == 1 else { throw CaravanError(.internalFailure, "the parent was not updated") }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.unsafeRows(#"SELECT count(*)::text FROM "children""#).first?.first == "\(writers * steps)")
        // Each backend reports its deadlocks when it exits: close the pool, then read the database's count.
        await store.shutdown()
        let observer = try await makeNotesStore(connections: 1)
        let deadlocks = try await observer.unsafeRows("SELECT deadlocks::text FROM pg_stat_database WHERE datname = '\(database)'")
        #expect(deadlocks.first?.first == "0")
        await observer.shutdown()
    }
}
