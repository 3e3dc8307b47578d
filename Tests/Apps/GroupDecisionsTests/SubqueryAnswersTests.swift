import CaravanCore
import CaravanTesting
@testable import CaravanSync
import Foundation
@testable import GroupDecisions
import Synchronization
import Testing

/// A pull answers the membership subqueries of a page's logged rows together: the answers equal one read per question,
/// and the number of reads does not grow with the number of changes.
@Suite("Sync: a page's subqueries answered together")
struct SubqueryAnswersTests {
    /// Ten groups, six users, memberships chosen at random (user 1 is everyone's admin).
    static func groups(_ f: F, seed: UInt64) async throws -> [String] {
        var random = SplitMix64(state: seed)
        try await f.makeUsers(Array(1...6))
        let groups = (0..<10).map { F.uuid(700 + $0) }
        var members: [RowValues] = []
        for group in groups {
            members.append(RowValues(["group_id": .text(group), "user_id": .text(F.uuid(1)), "role": .text("admin")]))
            for user in 2...6 where random.next() % 2 == 0 {
                members.append(RowValues(["group_id": .text(group), "user_id": .text(F.uuid(user)), "role": .text(random.next() % 3 == 0 ? "admin" : "member")]))
            }
        }
        try await f.asService { [members] tx in
            _ = try await tx.insert(groups.map { RowValues(["id": .text($0), "name": .text("G"), "created_by": .text(F.uuid(1))]) }, into: S.groups, conflict: nil)
            _ = try await tx.insert(members, into: S.groupMembers, conflict: nil)
        }
        return groups
    }

    @Test("batched answers equal one read per question (mixed shapes, NULLs, unknown groups)", arguments: Engine.allCases)
    func batchedEqualsOneReadEach(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let groups = try await Self.groups(f, seed: 5) + [F.uuid(799)]
        let table = S.groupMembers
        let group = try table.requireColumn("group_id"), user = try table.requireColumn("user_id"), role = try table.requireColumn("role")
        var questions: Set<SubqueryAnswers.Question> = []
        for g in groups {
            for u in 1...7 {
                questions.insert(.init(table: table, predicate: .and([.compare(group, .eq, .text(g)), .compare(user, .eq, .text(F.uuid(u)))])))
                // The same subquery with its conditions the other way round, and one more condition.
                questions.insert(.init(table: table, predicate: .and([.compare(user, .eq, .text(F.uuid(u))), .compare(group, .eq, .text(g)),
                                                                      .compare(role, .eq, .text("admin"))])))
            }
            questions.insert(.init(table: table, predicate: .and([.compare(group, .eq, .text(g)), .compare(user, .eq, .null)])))
        }
        questions.insert(.init(table: table, predicate: .compare(group, .eq, .text(groups[0]))))
        var answers = SubqueryAnswers()
        try await answers.answer(questions, store: f.store)
        var batched = 0
        for question in questions {
            let plan = try ReadPlan(table: table, query: Query(limit: 1), access: question.predicate, maxRows: nil, includeCount: false)
            let oracle = try await !f.store.fetch(plan).rows.isEmpty
            if let known = answers.known(question.predicate, in: table) {
                batched += 1
                #expect(known == oracle, "\(question.predicate)")
            }
            #expect(try await answers.exists(question.predicate, in: table, store: f.store) == oracle)
        }
        #expect(batched >= questions.count - 1)
    }

    @Test("a delta pull by a user outside every group reads as often for 300 changes as for 30", arguments: Engine.allCases)
    func readsDoNotGrowWithChanges(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let groups = try await Self.groups(f, seed: 9)
        try await f.makeUsers([9])
        let counting = ReadCountingStore(f.store)
        let puller = SyncPuller(store: counting, catalog: f.catalog)
        let outsider = Identity(role: .authenticated, userID: F.uuid(9))
        func readsForDelta(collections count: Int, start: Int) async throws -> (reads: Int, changes: Int) {
            let cursor = try await puller.pull(as: outsider, tables: "collections,group_members", cursor: nil, limit: 10_000).cursor
            try await f.asService { tx in
                _ = try await tx.insert((0..<count).map { i in
                    RowValues(["id": .text(F.uuid(10_000 + start + i)), "name": .text("C\(i)"), "type": .text("group"), "owner_id": .text(F.uuid(1)),
                               "group_id": .text(groups[i % groups.count])])
                }, into: S.collections, conflict: nil)
            }
            let before = counting.reads
            let page = try await puller.pull(as: outsider, tables: "collections,group_members", cursor: cursor.encoded, limit: 10_000)
            return (counting.reads - before, page.changes.count)
        }
        let small = try await readsForDelta(collections: 30, start: 0)
        let large = try await readsForDelta(collections: 300, start: 1_000)
        #expect(small.changes == 0 && large.changes == 0)
        #expect(large.reads == small.reads)
        #expect(large.reads <= 3)
    }
}

/// A store that counts its reads (`fetch`) and forwards everything.
final class ReadCountingStore: Store {
    let base: any Store
    private let count = Mutex(0)
    var reads: Int { count.withLock { $0 } }

    init(_ base: any Store) { self.base = base }

    var dialect: SQLDialect { base.dialect }
    func migrate(_ migrations: [Migration]) async throws -> [String] { try await base.migrate(migrations) }
    func appliedMigrations() async throws -> [String] { try await base.appliedMigrations() }
    func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        count.withLock { $0 += 1 }
        return try await base.fetch(plan)
    }
    func transaction<T: Sendable>(_ access: AccessContext, rollback: Bool, grant: TransactionGrant,
                                  _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> (T, [Change]) {
        try await base.transaction(access, rollback: rollback, grant: grant, body)
    }
    func changes(after seq: Int64, limit: Int) async throws -> [Change] { try await base.changes(after: seq, limit: limit) }
    func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage {
        try await base.changeLogPage(after: seq, tables: tables, limit: limit)
    }
    func changeLogState() async throws -> ChangeLogState { try await base.changeLogState() }
    func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction { try await base.compactChangeLog(committedBefore: cutoff) }
}
