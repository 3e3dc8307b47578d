import CaravanCore
import CaravanTesting
import CaravanSQLite
import CaravanTesting
import Foundation
import GRDB
import Testing

/// A table with one column of every type, and rows that exercise NULLs, Unicode, case and arrays.
enum Fixture {
    static let table = Fixtures.everyType

    static let names: [String?] = ["Café Nour", "CAFÉ NOUR", "café", "Bloom", "ORCHARD", "100% juice", "a_b", "ميس كافيه", nil, "Starbucks", "starbucks", "x*y?[z]"]
    static let tagSets: [[String]?] = [["cafe", "quiet"], ["cafe"], [], nil, ["loud", "family"], ["quiet"]]

    static func row(_ i: Int) -> RowValues {
        var values: [Value] = []
        values.append(.integer(Int64(i)))
        values.append(i % 5 == 0 ? .null : .text(String(format: "%08x-0000-4000-8000-%012x", i * 7919, i)))
        values.append(names[i % names.count].map(Value.text) ?? .null)
        values.append(i % 4 == 0 ? .null : .double(Double(i % 7) * 0.75))
        values.append(i % 6 == 0 ? .null : .double(Double(i) * 1.25))
        values.append(i % 3 == 0 ? .null : .bool(i % 2 == 0))
        let seconds = Int64(1_767_225_600 + i * 3600)
        values.append(i % 7 == 0 ? .null : .text(Timestamp.format(microseconds: seconds * 1_000_000)))
        values.append(.text(Timestamp.canonicalDate(String(format: "2026-01-%02d", i % 28 + 1)) ?? ""))
        values.append(i % 2 == 0 ? .json("{\"n\":\(i)}") : .null)
        let tags: [String]? = tagSets[i % tagSets.count]
        values.append(tags.map { ColumnType.textArray($0) } ?? .null)
        return RowValues(columns: table.columns.map(\.name), values: values)
    }

    static let rows: [RowValues] = (0..<36).map(row)

    /// A fresh store holding `rows`.
    static func store(_ engine: Engine) async throws -> any Store {
        let store = try await engine.makeStore(migrations: [try renderedMigration("fixture", [table])])
        let outcomes = try await store.upsert(rows, into: table, conflictColumns: ["id"])
        #expect(outcomes.allSatisfy { if case .inserted = $0 { true } else { false } })
        return store
    }

    /// One store per engine for tests that only read it.
    static func sharedStore(_ engine: Engine) async throws -> any Store {
        try await SharedFixtureStores.shared.store(engine)
    }

    /// The ids the in-memory evaluator admits for `filter`.
    static func expectedIDs(_ filter: BoundPredicate) -> [Int64] {
        rows.compactMap { row in
            guard filter.evaluate({ row[$0] ?? .null }) == true, case .integer(let id)? = row["id"] else { return nil }
            return id
        }
    }
}

/// The read-only fixture stores, built once per engine.
actor SharedFixtureStores {
    static let shared = SharedFixtureStores()
    private var stores: [Engine: any Store] = [:]

    func store(_ engine: Engine) async throws -> any Store {
        if let store = stores[engine] { return store }
        let store = try await Fixture.store(engine)
        stores[engine] = store
        return store
    }
}

func ids(_ result: ReadResult) -> [Int64] {
    result.rows.compactMap { row -> Int64? in if case .integer(let id) = row[0] { return id } else { return nil } }
}

func plan(_ queryString: String, count: Bool = false, access: BoundPredicate = .constant(true), maxRows: Int? = nil) throws -> ReadPlan {
    let query = try QueryParser.parseRead(QueryString(queryString))
    return try ReadPlan(table: Fixture.table, query: query, access: access, maxRows: maxRows, includeCount: count)
}

@Suite("Reads on every engine")
struct ReadTests {
    static let filters = [
        "name=eq.Café Nour", "name=neq.Bloom", "name=like.*afé*", "name=ilike.*CAFÉ*", "name=ilike.café", "name=like.100\\%*",
        "name=like.a\\_b", "name=like.x[*]y*", "name=like.x*y?[z]", "name=match.^[Ss]tar", "name=imatch.^star", "name=is.null", "name=is.not_null",
        "name=in.(Bloom,ORCHARD,\"Café Nour\")", "name=not.in.(Bloom)", "name=isdistinct.Bloom", "name=gt.S", "name=lte.Bloom",
        "score=gt.1.5", "score=lte.1e0", "score=is.null", "price=gte.10", "price=lt.5.5", "flag=is.true", "flag=is.false",
        "flag=is.unknown", "flag=eq.TRUE", "flag=not.is.true", "at=gt.2026-01-01T05:00:00", "at=lt.2026-01-01T10:00:00%2B02:00",
        "day=eq.2026-01-03", "day=gte.2026-01-20", "tags=cs.{cafe}", "tags=cs.{cafe,quiet}", "tags=cd.{cafe,quiet}",
        "tags=ov.{loud,quiet}", "tags=not.cs.{cafe}", "tags=eq.{cafe}", "tags=is.null", "doc=is.null",
        "key=eq.00001EEF-0000-4000-8000-000000000001", "name=like(any).{Bloom,*Nour}", "name=ilike(all).{*a*,*r*}",
        "score=gt(any).{2,3}", "or=(name.eq.Bloom,and(score.gt.1,flag.is.true))", "not.or=(name.is.null,score.is.null)",
        "and=(id.gte.3,id.lt.20,or(tags.cs.{quiet},name.ilike.*bucks))", "id=in.()", "name=not.like.*a*",
    ]

    /// Differential test: for each filter, the engine returns exactly the rows the in-memory evaluator admits.
    @Test(arguments: Engine.allCases, filters)
    func sqlMatchesTheEvaluator(engine: Engine, filter: String) async throws {
        let store = try await Fixture.sharedStore(engine)
        let plan = try plan(filter)
        let result = try await store.fetch(plan)
        #expect(ids(result) == Fixture.expectedIDs(plan.filter), "filter \(filter)")
    }

    @Test func everyFilterSelectsSomethingAndNotEverything() throws {
        // Guards the differential test against vacuous filters.
        let informative = try Self.filters.filter { filter in
            let count = Fixture.expectedIDs(try plan(filter).filter).count
            return count > 0 && count < Fixture.rows.count
        }
        #expect(informative.count >= Self.filters.count - 2)
    }

    @Test(arguments: Engine.allCases)
    func orderWithNullPlacementAndSeveralKeys(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        let result = try await store.fetch(try plan("select=id,score&order=score.desc.nullslast,id.desc"))
        let scores = result.rows.map { $0[1] }
        let firstNull = scores.firstIndex(of: .null)!
        #expect(scores[firstNull...].allSatisfy { $0 == .null })
        let nonNull: [Double] = scores[..<firstNull].map { value -> Double in if case .double(let d) = value { return d } else { return -1 } }
        #expect(nonNull == nonNull.sorted(by: >))
        let nullsFirstDefault = try await store.fetch(try plan("select=id,score&order=score.desc"))
        #expect(nullsFirstDefault.rows.first?[1] == .null)
        let ascendingDefault = try await store.fetch(try plan("select=id,score&order=score.asc"))
        #expect(ascendingDefault.rows.last?[1] == .null)
    }

    @Test(arguments: Engine.allCases)
    func limitOffsetAndCount(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        let result = try await store.fetch(try plan("flag=is.true&limit=3&offset=2", count: true))
        let all = Fixture.expectedIDs(try plan("flag=is.true").filter)
        #expect(ids(result) == Array(all[2..<5]))
        #expect(result.totalCount == all.count)
    }

    @Test(arguments: Engine.allCases)
    func maxRowsCapsTheLimit(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        #expect(try await store.fetch(try plan("", maxRows: 10)).rows.count == 10)
        #expect(try await store.fetch(try plan("limit=50", maxRows: 10)).rows.count == 10)
        #expect(try await store.fetch(try plan("limit=4", maxRows: 10)).rows.count == 4)
    }

    @Test(arguments: Engine.allCases)
    func accessRuleIsAndedIntoTheQuery(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        let closed = try await store.fetch(try plan("limit=5", count: true, access: .constant(false)))
        #expect(closed.rows.isEmpty)
        #expect(closed.totalCount == 0)
    }

    @Test(arguments: Engine.allCases)
    func valuesComeBackTyped(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        let result = try await store.fetch(try plan("id=eq.2"))
        let row = Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), result.rows[0]))
        #expect(row["flag"] == .bool(true))
        #expect(row["price"] == .double(2.5))
        #expect(row["tags"] == .json(#"[]"#))
        #expect(row["doc"] == .json(#"{"n":2}"#))
        #expect(row["at"] == .text("2026-01-01T02:00:00.000000Z"))
    }

    @Test(arguments: Engine.allCases)
    func hostileValuesAreBoundNotSpliced(engine: Engine) async throws {
        let store = try await Fixture.sharedStore(engine)
        for value in ["'; DROP TABLE things; --", "\" OR 1=1 --", "x') OR ('1'='1"] {
            let result = try await store.fetch(try plan("name=eq.\(value)"))
            #expect(result.rows.isEmpty)
        }
        #expect(try await store.fetch(try plan("")).rows.count == Fixture.rows.count)
    }
}

@Suite("Batched upserts on every engine")
struct UpsertTests {
    @Test(arguments: Engine.allCases)
    func aRefusedRowIsRolledBackAloneAndTheOthersCommit(engine: Engine) async throws {
        let store = try await Fixture.store(engine)
        let good = RowValues(["id": .integer(100), "name": .text("new")])
        let duplicateKey = RowValues(["id": .integer(101), "tags": .text("not json")])
        let update = RowValues(["id": .integer(1), "name": .text("renamed")])
        let outcomes = try await store.upsert([good, duplicateKey, update], into: Fixture.table, conflictColumns: ["id"])
        guard outcomes.count == 3, case .inserted = outcomes[0], case .rejected(let error) = outcomes[1], case .updated = outcomes[2] else {
            Issue.record("unexpected outcomes \(outcomes)"); return
        }
        // SQLite's JSON CHECK refuses the text; Postgres refuses it as input to text[] (22P02).
        #expect(error.code == (engine == .sqlite ? .checkViolation : .invalidValue))
        #expect(ids(try await store.fetch(try plan("id=in.(100,101)"))) == [100])
        let renamed = try await store.fetch(try plan("select=id,name&id=eq.1"))
        #expect(renamed.rows.first?[1] == .text("renamed"))
    }

    @Test(arguments: Engine.allCases)
    func constraintErrorsGetPostgresCodes(engine: Engine) async throws {
        let store = try await engine.makeStore(migrations: [Migration(id: "t", sql: [.sqlite: """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id), label TEXT UNIQUE);
            INSERT INTO parent VALUES (1);
            """, .postgres: """
            CREATE TABLE parent (id int8 PRIMARY KEY);
            CREATE TABLE child (id int8 PRIMARY KEY, parent_id int8 NOT NULL REFERENCES parent(id), label text UNIQUE);
            INSERT INTO parent VALUES (1);
            """])])
        let child = TableSchema("child", columns: [Column("id", .integer, nullable: false), Column("parent_id", .integer, nullable: false), Column("label", .text)], primaryKey: ["id"])
        let outcomes = try await store.upsert([
            RowValues(["id": .integer(1), "parent_id": .integer(1), "label": .text("a")]),
            RowValues(["id": .integer(2), "parent_id": .integer(9), "label": .text("b")]),
            RowValues(["id": .integer(3), "parent_id": .null, "label": .text("c")]),
            RowValues(["id": .integer(4), "parent_id": .integer(1), "label": .text("a")]),
        ], into: child, conflictColumns: ["id"])
        let codes: [CaravanError.Code?] = outcomes.map { outcome -> CaravanError.Code? in
            if case .rejected(let error) = outcome { return error.code } else { return nil }
        }
        #expect(codes == [nil, .foreignKeyViolation, .notNullViolation, .uniqueViolation])
    }
}
