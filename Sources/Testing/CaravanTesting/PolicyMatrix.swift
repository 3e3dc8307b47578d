public import CaravanCore

/// A module's policy matrix, run against its fixture: how many rows of each table each actor reads, and what each
/// write does for each actor (rows touched, or the code it is refused with), every write rolled back. A test states
/// the expected matrix as data and expects no mismatch:
///
/// ```swift
/// let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
/// #expect(try await matrix.readMismatches(NotesModule.module.tables, expected: ["notes": [.owner: 2, .other: 0]]) == [])
/// #expect(await matrix.writeMismatches("pin a note", expected: [.owner: .rows(1), .other: .rows(0)]) { tx in … } == [])
/// ```
public struct PolicyMatrix<Actor: Hashable & Sendable & CaseIterable>: Sendable where Actor.AllCases: Sendable {
    public let fixture: any ModuleFixture
    public let identity: @Sendable (Actor) -> Identity

    public init(fixture: any ModuleFixture, identity: @escaping @Sendable (Actor) -> Identity) {
        self.fixture = fixture
        self.identity = identity
    }

    /// Each table × each actor: the rows read under the select policy, against `expected[table][actor]`. Returns one
    /// line per disagreement (empty when all agree); a table of `tables` that `expected` leaves out is one too, so a
    /// new table cannot go unchecked.
    public func readMismatches(_ tables: [TableSchema], expected: [String: [Actor: Int]]) async throws -> [String] {
        var mismatches: [String] = []
        for table in tables {
            guard let row = expected[table.name] else {
                mismatches.append("\(table.name): not in the matrix")
                continue
            }
            for actor in Actor.allCases {
                let count = try await fixture.visibleCount(of: table, as: identity(actor))
                if count != row[actor] {
                    mismatches.append("\(actor) reads \(count) row(s) of \(table.name), expected \(row[actor].map(String.init) ?? "nothing stated")")
                }
            }
        }
        return mismatches
    }

    /// `body` run as each actor in a transaction rolled back afterwards, against `expected[actor]`. Returns one line
    /// per disagreement, naming the write (`name`).
    public func writeMismatches(_ name: String, expected: [Actor: Outcome],
                                _ body: @escaping @Sendable (any StoreTransaction) async throws -> WriteOutcome) async -> [String] {
        var mismatches: [String] = []
        for actor in Actor.allCases {
            let outcome = await fixture.attempt(as: identity(actor), body)
            if outcome != expected[actor] {
                mismatches.append("\(name) by \(actor): \(outcome), expected \(expected[actor].map(\.description) ?? "nothing stated")")
            }
        }
        return mismatches
    }
}
