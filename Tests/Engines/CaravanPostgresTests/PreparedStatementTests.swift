import CaravanCore
import CaravanTesting
@testable import CaravanPostgres
import Testing

@Suite("Prepared statements on PostgreSQL")
struct PreparedStatementTests {
    static func idsFrom(_ first: Int64) throws -> ReadPlan {
        try ReadPlan(table: notes, query: Query(filters: [.condition(Condition(column: "id", op: .gte, operand: .scalar(String(first))))],
                                                order: [OrderTerm(column: "id", direction: .ascending)]),
                     access: .constant(true), maxRows: nil, includeCount: false)
    }

    static func ids(_ result: ReadResult) -> [Value] { result.rows.map { $0[0] } }

    @Test func aRepeatedReadRunsPreparedAndReadsWhatItReadUnprepared() async throws {
        let store = try await makeNotesStore(connections: 2)
        try await store.insertNotes((1...12).map(note))
        // Writes run prepared too: the insert's shape, seen twelve times. (The change-log append is sent without
        // waiting for its answer, always unnamed.)
        let written = store.preparedStatementShapes
        #expect(written == 1)
        var unpreparedConfiguration = store.configuration
        unpreparedConfiguration.preparesStatements = false
        let unprepared = PostgresStore(configuration: unpreparedConfiguration)
        await unprepared.start()
        for first in Int64(0)..<10 {
            let prepared = try await store.fetch(Self.idsFrom(first))
            let reference = try await unprepared.fetch(Self.idsFrom(first))
            #expect(Self.ids(prepared) == (max(first, 1)...12).map { Value.integer($0) })
            #expect(prepared.rows == reference.rows)
        }
        // Seen once, the shape ran unnamed; from its second run on, under one name (whatever the bound value).
        #expect(store.preparedStatementShapes == written + 1)
        #expect(unprepared.preparedStatementShapes == 0)
        // A read with a count runs its page in a transaction: the same shape, the same name.
        let counted = try await store.fetch(ReadPlan(table: notes, query: Query(filters: [.condition(Condition(column: "id", op: .gte, operand: .scalar("5")))],
                                                                              order: [OrderTerm(column: "id", direction: .ascending)]),
                                                     access: .constant(true), maxRows: nil, includeCount: true))
        #expect(counted.totalCount == 8 && Self.ids(counted).count == 8)
        #expect(store.preparedStatementShapes == written + 1)
        await unprepared.shutdown()
        await store.shutdown()
    }

    /// A connection that failed to prepare a statement keeps that failure for its name: a failure that can pass
    /// (here the table is not there yet) must not stick to the shape.
    @Test func aPreparationThatFailedForAPassingReasonDoesNotStick() async throws {
        let store = try await makeNotesStore(connections: 1)
        let later = TableSchema("later", columns: [Column("id", .integer, nullable: false)], primaryKey: ["id"])
        let plan = try ReadPlan(table: later, query: Query(order: [OrderTerm(column: "id")]), access: .constant(true), maxRows: nil, includeCount: false)
        for _ in 0..<3 {
            await #expect(throws: CaravanError.self) { _ = try await store.fetch(plan) }
        }
        _ = try await store.unsafeRows(#"CREATE TABLE "later" ("id" int8 PRIMARY KEY)"#)
        _ = try await store.unsafeRows(#"INSERT INTO "later" VALUES (7), (3) RETURNING 'ok'"#)
        for _ in 0..<3 {
            #expect(try await store.fetch(plan).rows == [[.integer(3)], [.integer(7)]])
        }
        await store.shutdown()
    }

    @Test func shapesAreAdmittedOnTheirSecondSightingUpToTheCapacity() {
        let statements = PreparedStatements(capacity: 2, candidateCapacity: 8)
        #expect(statements.name(for: "SELECT $1", bindings: [.integer(1)]) == nil)
        let first = statements.name(for: "SELECT $1", bindings: [.integer(2)])
        #expect(first != nil)
        #expect(statements.name(for: "SELECT $1", bindings: [.integer(3)]) == first)
        // The same text with a value of another kind is another shape (PostgreSQL is told the parameter types).
        #expect(statements.name(for: "SELECT $1", bindings: [.text("a")]) == nil)
        let second = statements.name(for: "SELECT $1", bindings: [.text("b")])
        #expect(second != nil && second != first)
        // Full: a third shape runs unnamed however often it is seen; the admitted ones keep their names.
        for _ in 0..<3 { #expect(statements.name(for: "SELECT 2", bindings: []) == nil) }
        #expect(statements.name(for: "SELECT $1", bindings: [.integer(4)]) == first)
        // A refused shape runs unnamed from then on.
        statements.refuse("SELECT $1", bindings: [.integer(0)])
        for _ in 0..<2 { #expect(statements.name(for: "SELECT $1", bindings: [.integer(5)]) == nil) }
        #expect(statements.count == 1)
    }
}
