import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
@testable import GroupDecisions
import Testing


/// Item 8, server side: the synced tables take an offline client's queued vote through `/sync/v1` push (the path
/// CaravanClient's outbox uses); once the decision closed, the vote is rejected with a stable code, not retried.
@Suite("GroupDecisions sync push")
struct SyncPushTests {
    static func push(_ f: F, as user: Int, decision: String, ranking: [String]) async throws -> MutationResult {
        let mutation = JSONValue.object([
            ("id", .string(UUID().uuidString.lowercased())), ("table", .string("votes")), ("op", .string("upsert")),
            ("record", .object([("decision_id", .string(decision)), ("user_id", .string(F.uuid(user))), ("rankings", .array(ranking.map(JSONValue.string)))])),
        ])
        let batch = try PushBatch(bytes: Array(JSONValue.object([("mutations", .array([mutation]))]).jsonText.utf8))
        let pusher = SyncPusher(pipeline: f.pipeline, catalog: f.catalog) { error, _ in
            .object([("code", .string("\(error.code)")), ("message", .string(error.message))])
        }
        let outcome = try await pusher.push(batch, as: Identity(role: .authenticated, userID: F.uuid(user)))
        return try #require(outcome.results.first)
    }

    @Test("the module's synced tables are the client's: collections, decisions, votes, notifications with their owners")
    func syncedTables() {
        let synced = Dictionary(uniqueKeysWithValues: GroupDecisionsSchema.tables.filter(\.isSynced).map { ($0.name, $0.owner) })
        #expect(synced["collections"] == .some("owner_id"))
        #expect(synced["decisions"] == .some("created_by"))
        #expect(synced["votes"] == .some("user_id"))
        #expect(synced["notifications"] == .some("user_id"))
        #expect(synced["co_members"] == nil && synced["notification_outbox"] == nil && synced["users"] == nil)
    }

    @Test("a queued vote is applied while the decision is active and rejected cleanly once it closed", arguments: Engine.allCases)
    func voteAfterClose(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await DecisionFunctionsTests.seed(f)
        let decision = try await DecisionFunctionsTests.create(f, "tiered", collection: collection)
        let applied = try await Self.push(f, as: 2, decision: decision, ranking: [F.uuid(1001)])
        guard case .applied = applied.status else { Issue.record("an active decision's vote was \(applied.status)"); return }
        _ = try await f.call("close_decision", as: F.uuid(1), ["decision_id": .string(decision)])
        let late = try await Self.push(f, as: 3, decision: decision, ranking: [F.uuid(1002)])
        guard case .rejected(let error) = late.status else { Issue.record("a closed decision took a vote"); return }
        #expect(error["code"] == .string("permissionDenied"), "\(error)")
        #expect(try await f.rows(GroupDecisionsSchema.votes).count == 1)
    }
}
