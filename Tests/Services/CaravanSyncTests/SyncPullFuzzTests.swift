import CaravanCore
import CaravanTesting
import CaravanSync
import CaravanTesting
import Places
import Testing

/// A sync pull's parameters come from outside too. Seeded fuzz of `tables` (names, junk, hundreds of
/// them), `cursor` (junk, base64 of JSON nested thousands deep, truncated JSON, random bytes) and `limit`: every
/// pull is served or refused with a client error (what the server answers below 500), never an internal failure.
@Suite("Sync pulls under fuzzed parameters")
struct SyncPullFuzzTests {
    @Test(arguments: Engine.allCases)
    func fuzzedPullsAreServedOrRefused(engine: Engine) async throws {
        let fixture = try await SyncFixture.make(engine)
        try await fixture.asService { tx in
            _ = try await tx.insert((1...5).map { SyncFixture.place("p\($0)") }, into: PlacesSchema.places, conflict: nil)
        }
        var fuzzer = QueryFuzzer(seed: 4302, columns: ["id"], tables: ["places", "favorites", "reviews", "categories", "caravan_changes", "nope"])
        let clientErrors: Set<CaravanError.Code> = [.parseError, .limitExceeded, .mustRefetch, .notSynced, .permissionDenied, .unknownTable, .invalidValue]
        var served = 0
        for index in 0..<150 {
            let (tables, cursor, limit) = fuzzer.syncPull()
            let identity = index % 3 == 0 ? Identity(role: .anon) : SyncFixture.user(SyncFixture.userA)
            do {
                _ = try await fixture.puller.pull(as: identity, tables: tables, cursor: cursor, limit: limit)
                served += 1
            } catch let error as CaravanError {
                #expect(clientErrors.contains(error.code), "case \(index): tables \(tables?.prefix(80) ?? "nil"), cursor \(cursor?.prefix(80) ?? "nil") → \(error)")
            }
        }
        #expect(served > 5, "\(served) of 150 served")
    }
}
