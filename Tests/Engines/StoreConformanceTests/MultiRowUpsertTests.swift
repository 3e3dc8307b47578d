import CaravanCore
import CaravanTesting
import Foundation
import Testing

/// A multi-row upsert looks its conflict keys up once for the whole statement. The oracle is the same rows upserted
/// one by one, each row a statement of its own (looked up alone): the same rows stored, the same answers in the same
/// order, the same change log — with keys repeated inside the statement, keys sent in another spelling and NULL keys.
@Suite struct MultiRowUpsertTests {
    static let items = TableSchema(
        "items",
        columns: [Column("id", .uuid, nullable: false), Column("code", .text), Column("n", .integer, nullable: false)],
        primaryKey: ["id"],
        uniques: [["code"]]
    )
    static let module = AppModule(name: "stock", tables: [items], migrations: [Migration(id: "stock-0001", changes: [.createTable(items)])])
    static let catalog = Catalog(modules: [SystemModule.module, module])

    static func id(_ number: Int, upper: Bool = false) -> Value {
        let text = String(format: "00000000-0000-4000-8000-%012x", number)
        return .text(upper ? text.uppercased() : text)
    }

    static func row(_ number: Int, code: String?, n: Int, upper: Bool = false) -> RowValues {
        RowValues(columns: ["id", "code", "n"], values: [id(number, upper: upper), code.map { .text($0) } ?? .null, .integer(Int64(n))])
    }

    /// 40 stored rows, then a statement of 300: half the keys stored already, many repeated, some NULL codes (on fresh
    /// ids, which no code conflict can reach), and with `capitals` some ids in capitals: PostgreSQL's uuid type
    /// matches them with the stored lowercase ones (which the lookup, comparing values, misses: the insert skips and
    /// the row is looked up alone). The pipeline's callers coerce ids from the wire, so only PostgreSQL gets them.
    static func statement(conflictOnCode: Bool, capitals: Bool, seed: UInt64) -> (stored: [RowValues], sent: [RowValues]) {
        var random = SplitMix64(state: seed)
        let stored = (0..<40).map { row($0, code: "c\($0)", n: $0) }
        var fresh = 1_000
        let sent = (0..<300).map { i -> RowValues in
            let number = Int(random.next() % 80)
            if conflictOnCode, random.next() % 10 == 0 {
                fresh += 1
                return row(fresh, code: nil, n: i)
            }
            return row(number, code: "c\(number)", n: i, upper: capitals && random.next() % 7 == 0)
        }
        return (stored, sent)
    }

    struct Result: Equatable {
        var answers: [[Value]] = []
        var inserted = 0
        var updated = 0
        var table: [[Value]] = []
        var log: [[Value]] = []
    }

    static func run(_ engine: Engine, stored: [RowValues], sent: [RowValues], conflict: ConflictTarget, oneStatement: Bool) async throws -> Result {
        let store = try await engine.makeStore(migrations: module.migrations)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let service = catalog.access(for: .serviceRole)
        _ = try await pipeline.run(service) { tx in try await tx.insert(stored, into: items, conflict: nil) }
        var result = Result()
        let statements = oneStatement ? [sent] : sent.map { [$0] }
        for rows in statements {
            let outcome = try await pipeline.run(service) { tx in try await tx.insert(rows, into: items, conflict: conflict) }
            result.answers += outcome.rows
            result.inserted += outcome.inserted
            result.updated += outcome.updated
        }
        let table = Query(order: [OrderTerm(column: "id")])
        result.table = try await store.fetch(try ReadPlan(table: items, query: table, access: .constant(true), maxRows: nil, includeCount: false)).rows
        let log = Query(select: ["table_name", "primary_key", "op", "record", "old_record"].map { .column(name: $0, alias: nil, cast: nil) },
                        order: [OrderTerm(column: "seq")])
        result.log = try await store.fetch(try ReadPlan(table: SystemModule.changeLog, query: log, access: .constant(true), maxRows: nil, includeCount: false)).rows
        return result
    }

    /// The first row where two lists differ, with both sides (short, where a failure is read).
    static func firstDifference(_ left: [[Value]], _ right: [[Value]]) -> String? {
        guard left != right else { return nil }
        let index = left.indices.first { $0 >= right.count || left[$0] != right[$0] } ?? right.count
        return "row \(index) of \(left.count)/\(right.count): \(index < left.count ? "\(left[index])" : "-") ≠ \(index < right.count ? "\(right[index])" : "-")"
    }

    @Test("a multi-row upsert stores, answers and logs what the same rows upserted one by one do",
          arguments: Engine.allCases, [(["id"], ConflictTarget.Resolution.merge), (["id"], .ignore), (["code"], .merge), (["code"], .ignore)])
    func multiRowUpsertEqualsRowByRow(engine: Engine, target: ([String], ConflictTarget.Resolution)) async throws {
        let conflict = ConflictTarget(columns: target.0, resolution: target.1)
        let (stored, sent) = Self.statement(conflictOnCode: target.0 == ["code"], capitals: target.0 == ["id"] && engine == .postgres, seed: 7)
        let together = try await Self.run(engine, stored: stored, sent: sent, conflict: conflict, oneStatement: true)
        let oneByOne = try await Self.run(engine, stored: stored, sent: sent, conflict: conflict, oneStatement: false)
        #expect(together.inserted == oneByOne.inserted)
        #expect(together.updated == oneByOne.updated)
        #expect(Self.firstDifference(together.answers, oneByOne.answers) == nil)
        #expect(Self.firstDifference(together.table, oneByOne.table) == nil)
        #expect(Self.firstDifference(together.log, oneByOne.log) == nil)
        // The workload reaches both outcomes, and repeats keys inside the statement.
        #expect(together.inserted > 0 && (target.1 == .ignore || together.updated > 0))
        #expect(Set(sent.map { $0["id"] }).count < sent.count)
    }
}
