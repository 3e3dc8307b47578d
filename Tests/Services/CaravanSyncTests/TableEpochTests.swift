import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
import Places
import Testing

/// A table's sync epoch raised by a breaking change: a cursor made before gets 409 must-refetch for that table only,
/// and a pull with `refetch=` snapshots it again while the other tables follow the log on.
@Suite("Per-table sync epochs on both engines")
struct TableEpochTests {
    /// The Places module with `places` at sync epoch 2.
    static let bumped = Catalog(modules: [SystemModule.module, with(PlacesModule.module, syncEpochs: ["places": 2])])

    static func with(_ module: AppModule, syncEpochs: [String: Int]) -> AppModule {
        AppModule(name: module.name, tables: module.tables, migrations: module.migrations, policies: module.policies, functions: module.functions,
                  behaviours: module.behaviours, schedules: module.schedules, asyncFunctions: module.asyncFunctions,
                  clientCaches: module.clientCaches, buckets: module.buckets, edgeFunctions: module.edgeFunctions, removals: module.removals,
                  syncEpochs: syncEpochs)
    }

    static func favorite(_ place: String, note: String) -> RowValues {
        RowValues(["user_id": .text(SyncFixture.userA), "place_id": .text(place), "note": .text(note)])
    }

    @Test(arguments: Engine.allCases)
    func aRaisedEpochRefetchesThatTableAlone(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        let user = SyncFixture.user(SyncFixture.userA)
        let tables = "places,favorites"
        try await fixture.asService { tx in
            _ = try await tx.insert((1...4).map { SyncFixture.place("p\($0)") }, into: PlacesSchema.places, conflict: nil)
            _ = try await tx.insert([Self.favorite("p1", note: "one")], into: PlacesSchema.favorites, conflict: nil)
        }
        var replica: [String: [String: String]] = [:]
        let (before, _) = try await fixture.pullAll(as: user, tables: tables, from: nil, limit: 3, into: &replica)
        #expect(!before.encoded.isEmpty && before.tableEpochs.isEmpty, "all at epoch 1: the cursor is written as before")

        // Changes of both tables after the cursor; then the server's places get epoch 2.
        try await fixture.asService { tx in
            let id = try PlacesSchema.places.requireColumn("id")
            _ = try await tx.update(PlacesSchema.places, set: RowValues(["name_en": .text("Renamed")]), where: .compare(id, .eq, .text("p2")))
            _ = try await tx.delete(from: PlacesSchema.places, where: .compare(id, .eq, .text("p3")))
            _ = try await tx.insert([Self.favorite("p2", note: "two")], into: PlacesSchema.favorites, conflict: nil)
        }
        let puller = SyncPuller(store: fixture.store, catalog: Self.bumped)
        do {
            _ = try await puller.pull(as: user, tables: tables, cursor: before.encoded, limit: 100)
            Issue.record("a cursor from before the epoch was raised was accepted")
        } catch let error as CaravanError {
            #expect(error.code == .mustRefetch && error.details == "tables=places", "\(error)")
        }
        // Naming another table only is not enough.
        await #expect(throws: CaravanError.self) { try await puller.pull(as: user, tables: tables, cursor: before.encoded, refetch: "favorites", limit: 100) }

        // The refetch: places snapshotted again (in pages), favorites from the cursor on.
        var changes: [PulledChange] = []
        var page = try await puller.pull(as: user, tables: tables, cursor: before.encoded, refetch: "places", limit: 2)
        #expect(page.refetched == ["places"])
        changes += page.changes
        while page.hasMore {
            page = try await puller.pull(as: user, tables: tables, cursor: page.cursor.encoded, limit: 2)
            #expect(page.refetched.isEmpty, "only the reply to refetch= says so")
            changes += page.changes
        }
        let favorites = changes.filter { $0.table == "favorites" }
        #expect(favorites.count == 1 && favorites.first?.recordJSON?.contains(#""note":"two""#) == true, "favorites go on from the cursor")
        let places = changes.filter { $0.table == "places" }
        #expect(places.allSatisfy { $0.operation == .upsert } && Set(places.map(\.keyJSON)).count == 3,
                "places: the snapshot of the three rows, none of the logged changes it holds: \(places.map(\.keyJSON))")
        replica["places"] = [:]
        for change in changes {
            switch change.operation {
            case .upsert: replica[change.table, default: [:]][change.keyJSON] = change.recordJSON
            case .delete: replica[change.table, default: [:]][change.keyJSON] = nil
            case .evict: Issue.record("nothing to evict")
            }
        }
        #expect(replica["places"] == (try await fixture.visibleRows(PlacesSchema.places, as: user)))
        #expect(replica["favorites"] == (try await fixture.visibleRows(PlacesSchema.favorites, as: user)))

        // The new cursor carries epoch 2: valid for the bumped server, followed on as usual.
        #expect(page.cursor.tableEpochs == [2, 1] && page.cursor.refetch == nil)
        try await fixture.asService { tx in _ = try await tx.insert([SyncFixture.place("p9")], into: PlacesSchema.places, conflict: nil) }
        let after = try await puller.pull(as: user, tables: tables, cursor: page.cursor.encoded, limit: 100)
        #expect(after.changes.map(\.keyJSON) == [#"{"id":"p9"}"#])
        // A server still at epoch 1 (an old instance) refuses it the same way, for places alone.
        await #expect(throws: CaravanError.self) { try await fixture.puller.pull(as: user, tables: tables, cursor: after.cursor.encoded, limit: 100) }
        // A cursor without the epochs (an old client's, or one made before epochs existed) still serves tables at epoch 1.
        _ = try await puller.pull(as: user, tables: "favorites", cursor: try await fixture.puller.pull(as: user, tables: "favorites", cursor: nil, limit: 100)
            .cursor.encoded, limit: 100)
    }

    @Test(arguments: Engine.allCases)
    func aRefetchMidSnapshotOrOfAnUnknownTableIsRefused(_ engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        let user = SyncFixture.user(SyncFixture.userA)
        try await fixture.asService { tx in _ = try await tx.insert((1...3).map { SyncFixture.place("p\($0)") }, into: PlacesSchema.places, conflict: nil) }
        let midSnapshot = try await fixture.puller.pull(as: user, tables: "places,favorites", cursor: nil, limit: 1)
        #expect(midSnapshot.hasMore)
        let puller = SyncPuller(store: fixture.store, catalog: Self.bumped)
        do {
            _ = try await puller.pull(as: user, tables: "places,favorites", cursor: midSnapshot.cursor.encoded, refetch: "places", limit: 10)
            Issue.record("a refetch of a cursor inside a snapshot was accepted")
        } catch let error as CaravanError {
            #expect(error.code == .mustRefetch && error.details == nil, "the whole pull anew: \(error)")
        }
        var replica: [String: [String: String]] = [:]
        let done = try await fixture.pullAll(as: user, tables: "places,favorites", from: nil, limit: 100, into: &replica).0
        await #expect(throws: CaravanError.self) { try await fixture.puller.pull(as: user, tables: "places,favorites", cursor: done.encoded, refetch: "reviews", limit: 10) }
        // A refetch of an unchanged table is served (a client whose declaration of it changed).
        let again = try await fixture.puller.pull(as: user, tables: "places,favorites", cursor: done.encoded, refetch: "places", limit: 10)
        #expect(again.refetched == ["places"] && again.changes.filter { $0.table == "places" }.count == 3)
    }
}
