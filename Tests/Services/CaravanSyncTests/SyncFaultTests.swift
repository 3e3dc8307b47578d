import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
import Places
import Logging
import Synchronization
import Testing

/// A real store whose write transactions fail as "storage unavailable" from the `failFrom`-th on (a database that
/// went away mid-batch).
final class FailingStore: Store {
    let base: any Store
    let failFrom: Int
    private let transactions = Mutex(0)

    init(_ base: any Store, failFrom: Int) {
        self.base = base
        self.failFrom = failFrom
    }

    var dialect: SQLDialect { base.dialect }
    func migrate(_ migrations: [Migration]) async throws -> [String] { try await base.migrate(migrations) }
    func appliedMigrations() async throws -> [String] { try await base.appliedMigrations() }
    func fetch(_ plan: ReadPlan) async throws -> ReadResult { try await base.fetch(plan) }
    func changes(after seq: Int64, limit: Int) async throws -> [Change] { try await base.changes(after: seq, limit: limit) }
    func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage {
        try await base.changeLogPage(after: seq, tables: tables, limit: limit)
    }
    func changeLogState() async throws -> ChangeLogState { try await base.changeLogState() }
    func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction { try await base.compactChangeLog(committedBefore: cutoff) }

    func transaction<T: Sendable>(_ access: AccessContext, rollback: Bool, grant: TransactionGrant, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> (T, [Change]) {
        let number = transactions.withLock { count -> Int in
            count += 1
            return count
        }
        if number >= failFrom { throw CaravanError(.storageUnavailable, "The database is temporarily unavailable") }
        return try await base.transaction(access, rollback: rollback, grant: grant, body)
    }
}

@Suite("Sync push under faults")
struct SyncFaultTests {
    @Test func aTransientFaultStopsTheBatchWithTheResultsSoFarAndTheRetryAppliesTheRest() async throws {
        let fixture = try await SyncFixture.make(.sqlite)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1")], into: PlacesSchema.places, conflict: nil) }
        let mutations = (0..<5).map { i in
            #"{"id":"\#(UUID().uuidString)","table":"menu_prices","op":"insert","record":{"place_id":"p1","item_name_ar":"item \#(i)","price":\#(i)}}"#
        }
        let batch = try PushBatch(bytes: Array(#"{"mutations":[\#(mutations.joined(separator: ","))]}"#.utf8))
        let failing = FailingStore(fixture.store, failFrom: 3)
        let flaky = SyncPusher(pipeline: WritePipeline(store: failing, publisher: ChangePublisher()), catalog: fixture.catalog, wireError: fixture.pusher.wireError)
        let stopped = try await flaky.push(batch, as: .serviceRole)
        #expect(stopped.results.count == 2)
        #expect(stopped.stoppedBy?.code == .storageUnavailable)
        #expect(try await fixture.visibleRows(PlacesSchema.menuPrices, as: .serviceRole).count == 2)

        let retried = try await fixture.pusher.push(batch, as: .serviceRole)
        #expect(retried.stoppedBy == nil)
        #expect(retried.results.map(\.replayed) == [true, true, false, false, false])
        #expect(retried.results.prefix(2).map(\.status) == stopped.results.map(\.status))
        #expect(try await fixture.visibleRows(PlacesSchema.menuPrices, as: .serviceRole).count == 5)
    }

    @Test func compactionPrunesOldVerdicts() async throws {
        let fixture = try await SyncFixture.make(.sqlite)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1")], into: PlacesSchema.places, conflict: nil) }
        let id = UUID().uuidString
        let batch = try PushBatch(bytes: Array(#"{"mutations":[{"id":"\#(id)","table":"places","op":"delete","key":{"id":"p1"}}]}"#.utf8))
        _ = try await fixture.pusher.push(batch, as: .serviceRole)
        #expect(try await fixture.pusher.push(batch, as: .serviceRole).results.first?.replayed == true)
        let kept = try await fixture.store.compactChangeLog(committedBefore: "2000-01-01T00:00:00.000000Z")
        #expect(kept.removedChanges == 0 && kept.removedVerdicts == 0)
        let pruned = try await fixture.store.compactChangeLog(committedBefore: "9999-01-01T00:00:00.000000Z")
        #expect(pruned.removedVerdicts == 1)
        #expect(try await fixture.pusher.push(batch, as: .serviceRole).results.first?.replayed == false,
                "past the retention window a mutation id is new again (clients must not hold mutations that long)")
    }
}

@Suite("Change-log compaction service")
struct CompactionServiceTests {
    @Test func itCompactsEveryIntervalUntilCancelled() async throws {
        let fixture = try await SyncFixture.make(.sqlite)
        let compactor = ChangeLogCompactor(store: fixture.store, retention: ChangeLogRetention(window: .zero, interval: .milliseconds(20)),
                                           clock: ContinuousClock(), now: { 32_000_000_000_000_000 }, logger: Logger(label: "test.compactor"))
        let running = Task { try await compactor.run() }
        for round in 1...2 {
            try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p\(round)")], into: PlacesSchema.places, conflict: nil) }
            let head = try await fixture.store.changeLogState().head
            var compacted = false
            for _ in 0..<1500 where !compacted {
                compacted = try await fixture.store.changeLogState().compactedThrough >= head
                if !compacted { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(compacted, "round \(round): the service compacted the new entries on its own")
        }
        running.cancel()
        let ended = await running.result
        #expect(throws: Never.self) { try ended.get() }
    }
}
