import CaravanCore
import CaravanTesting
import Foundation
import Synchronization
@testable import GroupDecisions
import Testing

/// A migrated store with the module on a hand-moved clock and a seeded random source, plus helpers to seed rows
/// as the service role and to act as a signed-in user.
final class GroupDecisionsFixture: ModuleFixture {
    let store: any Store
    let catalog: Catalog
    let pipeline: WritePipeline
    let module: AppModule
    /// A wall clock tests move by hand.
    let now: ManualClock

    init(engine: Engine, seed: UInt64 = 19) async throws {
        let now = ManualClock(microseconds: Timestamp.parseMicroseconds("2026-11-25T12:00:00Z") ?? 0)
        self.now = now
        module = GroupDecisionsModule.make(clock: now.wallClock, random: .seeded(seed))
        store = try await engine.makeStore(migrations: GroupDecisionsMigrations.all)
        catalog = try Catalog.validated(modules: [SystemModule.module, module])
        pipeline = WritePipeline(store: store, publisher: ChangePublisher())
    }




    /// Auth users and their app profiles, named `user<n>`.
    func makeUsers(_ numbers: [Int]) async throws {
        try await asService { tx in
            _ = try await tx.insert(numbers.map { RowValues(["id": .text(Self.uuid($0))]) }, into: SystemModule.users, conflict: nil)
            _ = try await tx.insert(numbers.map { RowValues(["id": .text(Self.uuid($0)), "name": .text("User \($0)"), "username": .text("user\($0)")]) },
                              into: GroupDecisionsSchema.users, conflict: nil)
        }
    }

    /// Restaurants `r<n>` with ids uuid(1000 + n).
    func makeRestaurants(_ numbers: [Int]) async throws {
        try await asService { tx in
            _ = try await tx.insert(numbers.map { RowValues(["id": .text(Self.uuid(1000 + $0)), "google_place_id": .text("place-\($0)"), "name": .text("R\($0)")]) },
                              into: GroupDecisionsSchema.restaurants, conflict: nil)
        }
    }
}

typealias F = GroupDecisionsFixture
let S = GroupDecisionsSchema.self

/// A stored JSON object's members by key: PostgreSQL's jsonb keeps its own key order, so stored objects compare
/// member by member, not in the order they were written.
func members(ofJSON text: String) throws -> [String: JSONValue] {
    guard case .object(let pairs) = try JSONParser.parse(text) else { return [:] }
    return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
}

extension ManualClock {
    func advance(seconds: Int64) { advance(by: .seconds(seconds)) }
    /// `now + seconds` as a timestamp text.
    func timestamp(in seconds: Int64) -> String { Timestamp.format(microseconds: microseconds + seconds * 1_000_000) }
}
