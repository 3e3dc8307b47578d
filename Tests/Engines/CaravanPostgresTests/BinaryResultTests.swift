import CaravanCore
import CaravanPostgres
import Foundation
import Testing

/// Result columns of these types come back in PostgreSQL's binary form and are rendered in Swift; each must equal
/// what PostgreSQL's own SQL rendering gives (`::float8`, `to_char`, `::text`, `to_jsonb`), the independent reference.
@Suite("Binary result columns on PostgreSQL")
struct BinaryResultTests {
    static let samples = TableSchema("samples", columns: [
        Column("id", .integer, nullable: false), Column("n", .decimal(precision: 40, scale: 30)), Column("j", .json), Column("t", .timestamp),
        Column("u", .uuid), Column("a", .textArray), Column("s", .text), Column("i4", .integer), Column("f", .double), Column("b", .boolean),
    ], primaryKey: ["id"])

    static let numerics = ["0", "-0.5", "1.2345", "4.35", "24.7136", "46.67531", "123456789.123456789", "0.000000000000000000012345",
                           "-98765.4321", "99999999999999999999.5", "0.1", "1.0000000000000000000000001", "10000", "-10000.0001",
                           "'NaN'", "'Infinity'", "'-Infinity'", "NULL"]

    @Test func numericsTimestampsUUIDsJSONAndArraysReadAsPostgreSQLRendersThem() async throws {
        let store = try await makeNotesStore()
        _ = try await store.unsafeRows(#"CREATE TABLE "samples" ("id" int8 PRIMARY KEY, "n" numeric, "j" jsonb, "t" timestamptz, "u" uuid, "a" text[], "s" text, "i4" int4, "f" float8, "b" boolean)"#)
        for (i, n) in Self.numerics.enumerated() {
            let t = i % 3 == 0 ? "NULL" : "'2026-11-26T01:0\(i % 10):00.\(String(format: "%06d", i * 123_457 % 1_000_000))Z'"
            _ = try await store.unsafeRows("""
                INSERT INTO "samples" VALUES (\(i), \(n)::numeric, '{"b": [1, 2.50, "x"], "a": {"ü": null}}', \(t),
                  gen_random_uuid(), \(["ARRAY['a', 'b \"q\"', 'ث', '']", "ARRAY[]::text[]", "ARRAY['x', NULL, 'ي']"][i % 3]), \(i % 4 == 0 ? "NULL" : "'نص \(i) \\u{1F600}'"), \(i * 1_000_003 - 9_000_000),
                  \(i % 5 == 0 ? "NULL" : "\(Double(i) / 7 - 1)"), \(i % 3 == 0 ? "NULL" : (i % 2 == 0 ? "TRUE" : "FALSE"))) RETURNING 'ok'
                """)
        }
        let plan = try ReadPlan(table: Self.samples, query: Query(order: [OrderTerm(column: "id", direction: .ascending)]), access: .constant(true),
                                maxRows: nil, includeCount: false)
        let read = try await store.fetch(plan).rows
        let reference = try await store.unsafeRows("""
            SELECT "n"::float8::text, "j"::text, to_char("t" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), "u"::text, to_jsonb("a")::text,
              "s", "i4"::text, "f"::text, "b"::text, "id"::text
            FROM "samples" ORDER BY "samples"."id"
            """)
        #expect(read.count == Self.numerics.count)
        for (row, expected) in zip(read, reference) {
            let number: Value = expected[0].map { text in Value.double(Double(text) ?? .nan) } ?? .null
            if case .double(let value) = number, value.isNaN {
                guard case .double(let got) = row[1] else { Issue.record("NaN read as \(row[1])"); continue }
                #expect(got.isNaN)
            } else {
                #expect(row[1] == number, "numeric \(expected[0] ?? "NULL")")
            }
            let json: String = try #require(expected[1])
            let time: Value = expected[2].map { Value.text($0) } ?? .null
            let uuid: String = try #require(expected[3])
            let array: String = try #require(expected[4])
            #expect(row[2] == Value.json(try JSONParser.parse(json).jsonText))
            #expect(row[3] == time)
            #expect(row[4] == Value.text(uuid))
            #expect(row[5] == Value.json(try JSONParser.parse(array).jsonText))
            #expect(row[6] == (expected[5].map { Value.text($0) } ?? .null))
            #expect(row[7] == (expected[6].flatMap { Int64($0) }.map { Value.integer($0) } ?? .null))
            #expect(row[8] == (expected[7].flatMap { Double($0) }.map { Value.double($0) } ?? .null))
            #expect(row[9] == (expected[8].map { Value.bool($0 == "true") } ?? .null))
            #expect(row[0] == (expected[9].flatMap { Int64($0) }.map { Value.integer($0) } ?? .null))
        }
        await store.shutdown()
    }

    /// Numerics of up to 17 digits with the point anywhere (the range the exact shortcut covers, and past it),
    /// each read as PostgreSQL's own `::float8` gives it.
    @Test func randomNumericsReadAsTheirFloat8Cast() async throws {
        let store = try await makeNotesStore()
        _ = try await store.unsafeRows(#"CREATE TABLE "numbers" ("id" int8 PRIMARY KEY, "n" numeric)"#)
        var generator = SystemRandomNumberGenerator()
        var literals: [String] = []
        for _ in 0..<1_500 {
            let digits = String((0..<Int.random(in: 1...17, using: &generator)).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let point = Int.random(in: 0...digits.count, using: &generator)
            var literal = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if literal.hasPrefix(".") { literal = "0" + literal }
            if Bool.random(using: &generator) { literal = "-" + literal }
            let exponent = Int.random(in: 0..<10, using: &generator) < 7 ? "" : ["e-9", "e12", "e-25", "e30"][Int.random(in: 0...3, using: &generator)]
            literals.append(literal + exponent)
        }
        _ = try await store.unsafeRows(#"INSERT INTO "numbers" SELECT i, (v)::numeric FROM unnest(ARRAY["# + literals.map { "'\($0)'" }.joined(separator: ",")
                                       + #"]::text[]) WITH ORDINALITY AS t(v, i) RETURNING 'ok'"#)
        let table = TableSchema("numbers", columns: [Column("id", .integer, nullable: false), Column("n", .decimal(precision: 60, scale: 40))], primaryKey: ["id"])
        let plan = try ReadPlan(table: table, query: Query(order: [OrderTerm(column: "id", direction: .ascending)]), access: .constant(true),
                                maxRows: nil, includeCount: false)
        let read = try await store.fetch(plan).rows
        let reference = try await store.unsafeRows(#"SELECT "n"::float8::text, "n"::text FROM "numbers" ORDER BY "id""#)
        #expect(read.count == literals.count)
        for (row, expected) in zip(read, reference) {
            let float8 = try #require(expected[0])
            #expect(row[1] == .double(try #require(Double(float8))), "numeric \(expected[1] ?? "")")
        }
        await store.shutdown()
    }
}
