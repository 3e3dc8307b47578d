import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
import Places
import Testing

@Suite("Sync pull and push on both engines")
struct SyncEngineTests {
    @Test(arguments: Engine.allCases)
    func snapshotThenLogConvergesWithTheVisibleRows(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        try await fixture.asService { tx in
            _ = try await tx.insert((1...7).map { SyncFixture.place("p\($0)", active: $0 != 7) }, into: PlacesSchema.places, conflict: nil)
        }
        let anon = Identity(role: .anon)
        var replica: [String: [String: String]] = [:]
        let (cursor, pages) = try await fixture.pullAll(as: anon, tables: "places", from: nil, limit: 2, into: &replica)
        #expect(pages.count >= 3, "a 6-row snapshot in pages of 2")
        #expect(replica["places"]?.count == 6, "the inactive place is not in anon's snapshot")
        #expect(replica["places"] == (try await fixture.visibleRows(PlacesSchema.places, as: anon)))

        let places = PlacesSchema.places
        try await fixture.asService { tx in
            let id = try places.requireColumn("id")
            _ = try await tx.update(places, set: RowValues(["is_active": .bool(false)]), where: .compare(id, .eq, .text("p2")))
            _ = try await tx.update(places, set: RowValues(["is_active": .bool(true)]), where: .compare(id, .eq, .text("p7")))
            _ = try await tx.update(places, set: RowValues(["name_en": .text("Renamed")]), where: .compare(id, .eq, .text("p3")))
            _ = try await tx.delete(from: places, where: .compare(id, .eq, .text("p4")))
            _ = try await tx.insert([SyncFixture.place("p8"), SyncFixture.place("p9", active: false)], into: places, conflict: nil)
        }
        var delta = replica
        let (_, deltaPages) = try await fixture.pullAll(as: anon, tables: "places", from: cursor, limit: 1000, into: &delta)
        let changes = deltaPages.flatMap { $0 }
        #expect(delta["places"] == (try await fixture.visibleRows(PlacesSchema.places, as: anon)))
        #expect(changes.contains { $0.operation == .delete && $0.keyJSON == #"{"id":"p2"}"# }, "moved out of view: a delete")
        #expect(changes.contains { $0.operation == .upsert && $0.keyJSON == #"{"id":"p7"}"# }, "moved into view: an upsert")
        #expect(changes.contains { $0.operation == .delete && $0.keyJSON == #"{"id":"p4"}"# })
        #expect(!changes.contains { $0.keyJSON == #"{"id":"p9"}"# }, "a row anon never sees sends nothing")
        #expect(changes.map(\.seq) == changes.map(\.seq).sorted())
    }

    @Test(arguments: Engine.allCases)
    func aTransactionIsNeverSplitAcrossPages(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        let anon = Identity(role: .anon)
        let start = try await fixture.puller.pull(as: anon, tables: "places", cursor: nil, limit: 10)
        try await fixture.asService { tx in
            _ = try await tx.insert((1...5).map { SyncFixture.place("t\($0)") }, into: PlacesSchema.places, conflict: nil)
        }
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("u1")], into: PlacesSchema.places, conflict: nil) }
        let page = try await fixture.puller.pull(as: anon, tables: "places", cursor: start.cursor.encoded, limit: 2)
        #expect(page.changes.map(\.keyJSON) == (1...5).map { #"{"id":"t\#($0)"}"# })
        #expect(page.hasMore)
        let rest = try await fixture.puller.pull(as: anon, tables: "places", cursor: page.cursor.encoded, limit: 2)
        #expect(rest.changes.map(\.keyJSON) == [#"{"id":"u1"}"#])
        #expect(!rest.hasMore)
    }

    @Test(arguments: Engine.allCases)
    func usersPullOnlyTheirOwnFavorites(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1")], into: PlacesSchema.places, conflict: nil) }
        let a = SyncFixture.user(SyncFixture.userA), b = SyncFixture.user(SyncFixture.userB)
        var replicaA: [String: [String: String]] = [:]
        var replicaB: [String: [String: String]] = [:]
        let (cursorA, _) = try await fixture.pullAll(as: a, tables: "favorites", from: nil, limit: 100, into: &replicaA)
        let (cursorB, _) = try await fixture.pullAll(as: b, tables: "favorites", from: nil, limit: 100, into: &replicaB)
        let insert = { (user: String) in
            #"{"mutations":[{"id":"\#(UUID().uuidString)","table":"favorites","op":"insert","record":{"user_id":"\#(user)","place_id":"p1"}}]}"#
        }
        _ = try await fixture.pusher.push(try PushBatch(bytes: Array(insert(SyncFixture.userA).utf8)), as: a)
        _ = try await fixture.pusher.push(try PushBatch(bytes: Array(insert(SyncFixture.userB).utf8)), as: b)
        _ = try await fixture.pullAll(as: a, tables: "favorites", from: cursorA, limit: 100, into: &replicaA)
        _ = try await fixture.pullAll(as: b, tables: "favorites", from: cursorB, limit: 100, into: &replicaB)
        #expect(replicaA["favorites"]?.count == 1 && replicaA["favorites"]?.values.allSatisfy { $0.contains(SyncFixture.userA) } == true)
        #expect(replicaB["favorites"]?.count == 1 && replicaB["favorites"]?.values.allSatisfy { $0.contains(SyncFixture.userB) } == true)
        await #expect(throws: CaravanError.self) { try await fixture.puller.pull(as: a, tables: "favorites", cursor: cursorB.encoded, limit: 10) }
    }

    @Test(arguments: Engine.allCases)
    func pushIsIdempotentAndARejectionDoesNotBlockTheBatch(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1"), SyncFixture.place("p2")], into: PlacesSchema.places, conflict: nil) }
        let a = SyncFixture.user(SyncFixture.userA)
        let favorite = UUID().uuidString.lowercased()
        let body = #"""
        {"client_id":"c1","mutations":[
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"insert","record":{"id":"\#(favorite)","user_id":"\#(SyncFixture.userA)","place_id":"p1","note":"x"}},
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"insert","record":{"user_id":"\#(SyncFixture.userB)","place_id":"p2"}},
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"update","key":{"id":"\#(favorite)"},"record":{"note":"y"}},
          {"id":"\#(UUID().uuidString)","table":"nope","op":"delete","key":{"id":"1"}}
        ]}
        """#
        let batch = try PushBatch(bytes: Array(body.utf8))
        let first = try await fixture.pusher.push(batch, as: a)
        #expect(first.stoppedBy == nil)
        guard first.results.count == 4, case .applied(let insertSeq) = first.results[0].status, case .rejected(let refusal) = first.results[1].status,
              case .applied(let updateSeq) = first.results[2].status, case .rejected(let unknown) = first.results[3].status else {
            Issue.record("unexpected results \(first.results)")
            return
        }
        #expect(updateSeq > insertSeq)
        #expect(refusal["code"] == .string("permissionDenied"))
        #expect(unknown["code"] == .string("unknownTable"))
        for _ in 0..<3 {
            let again = try await fixture.pusher.push(batch, as: a)
            #expect(again.results.map(\.status) == first.results.map(\.status))
            #expect(again.results.allSatisfy { $0.replayed })
        }
        let rows = try await fixture.visibleRows(PlacesSchema.favorites, as: .serviceRole)
        #expect(rows.count == 1)
        #expect(rows.values.first?.contains(#""note":"y""#) == true)
        let head = try await fixture.store.changeLogState().head
        #expect(head == updateSeq, "replays logged nothing")
    }

    @Test(arguments: Engine.allCases)
    func anUpdateThatChangesNoRowSaysSo(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1")], into: PlacesSchema.places, conflict: nil) }
        let mine = UUID().uuidString.lowercased()
        let body = #"""
        {"client_id":"c1","mutations":[
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"insert","record":{"id":"\#(mine)","user_id":"\#(SyncFixture.userB)","place_id":"p1"}},
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"update","key":{"id":"\#(mine)"},"record":{"note":"b"}}
        ]}
        """#
        let written = try await fixture.pusher.push(try PushBatch(bytes: Array(body.utf8)), as: SyncFixture.user(SyncFixture.userB))
        #expect(written.results.map(\.changed) == [true, true])
        #expect(written.results[1].json["changed"] == nil, "an effective write's verdict is unchanged on the wire")
        // Another user's update of that row (hidden from them by the policy) and a delete of a row that is gone.
        let hidden = #"""
        {"client_id":"c2","mutations":[
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"update","key":{"id":"\#(mine)"},"record":{"note":"a"}},
          {"id":"\#(UUID().uuidString)","table":"favorites","op":"delete","key":{"id":"\#(UUID().uuidString.lowercased())"}}
        ]}
        """#
        let noop = try await fixture.pusher.push(try PushBatch(bytes: Array(hidden.utf8)), as: SyncFixture.user(SyncFixture.userA))
        guard noop.results.count == 2, case .applied = noop.results[0].status, case .applied = noop.results[1].status else {
            Issue.record("unexpected results \(noop.results)")
            return
        }
        #expect(noop.results.map(\.changed) == [false, false])
        #expect(noop.results.allSatisfy { $0.json["changed"] == .bool(false) }, "the client reads such a row back")
        let rows = try await fixture.visibleRows(PlacesSchema.favorites, as: .serviceRole)
        #expect(rows.values.first?.contains(#""note":"b""#) == true)
    }

    @Test(arguments: Engine.allCases)
    func compactionAndForeignCursorsMustRefetch(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        let anon = Identity(role: .anon)
        let before = try await fixture.puller.pull(as: anon, tables: "places", cursor: nil, limit: 10)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p1")], into: PlacesSchema.places, conflict: nil) }
        let compaction = try await fixture.store.compactChangeLog(committedBefore: "9999-01-01T00:00:00.000000Z")
        #expect(compaction.removedChanges >= 1)
        let state = try await fixture.store.changeLogState()
        #expect(state.compactedThrough == state.head)
        await #expect(throws: CaravanError.self) { try await fixture.puller.pull(as: anon, tables: "places", cursor: before.cursor.encoded, limit: 10) }
        let foreign = SyncCursor(epoch: "another-history", scope: before.cursor.scope, position: .log(seq: state.head))
        await #expect(throws: CaravanError.self) { try await fixture.puller.pull(as: anon, tables: "places", cursor: foreign.encoded, limit: 10) }
        // After compaction a new snapshot still works, and its cursor follows the log.
        let fresh = try await fixture.puller.pull(as: anon, tables: "places", cursor: nil, limit: 10)
        #expect(fresh.changes.map(\.keyJSON) == [#"{"id":"p1"}"#])
        #expect(!fresh.hasMore)
        let next = try await fixture.puller.pull(as: anon, tables: "places", cursor: fresh.cursor.encoded, limit: 10)
        #expect(next.changes.isEmpty && !next.hasMore)
    }

    @Test(arguments: Engine.allCases)
    func tablesMustBeSyncedAndReadable(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        let anon = Identity(role: .anon)
        for (tables, code) in [("favorites", CaravanError.Code.permissionDenied), ("users", .unknownTable), ("caravan_sync_mutations", .unknownTable),
                               ("nope", .unknownTable), ("places,places", .parseError), ("", .parseError)] {
            do {
                _ = try await fixture.puller.pull(as: anon, tables: tables, cursor: nil, limit: 10)
                Issue.record("pulled \(tables)")
            } catch let error as CaravanError {
                #expect(error.code == code, "\(tables)")
            }
        }
    }
}
