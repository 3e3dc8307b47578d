import CaravanCore
import CaravanTesting
import Testing

let everyType = Fixtures.everyType

private func bind(_ column: String, _ value: String) throws -> BoundPredicate {
    try QueryParser.parseFilter(column: column, value: value).bound(to: everyType)
}

private func code(of body: () throws -> Void) -> CaravanError.Code? {
    do { try body(); return nil } catch let error as CaravanError { return error.code } catch { return nil }
}

@Suite("Typing filter operands against columns")
struct BindingTests {
    @Test func uppercaseUUIDsAreCanonicalLowercase() throws {
        guard case .compare(_, .eq, let value) = try bind("key", "eq.3F6C0E1A-0000-4000-8000-00000000ABCD") else { Issue.record("shape"); return }
        #expect(value == .text("3f6c0e1a-0000-4000-8000-00000000abcd"))
    }

    @Test func numbersMayUseExponents() throws {
        guard case .compare(_, .gt, let value) = try bind("score", "gt.1e+20") else { Issue.record("shape"); return }
        #expect(value == .double(1e20))
    }

    @Test func booleansMatchCaseInsensitively() throws {
        guard case .compare(_, .eq, let value) = try bind("flag", "eq.TRUE") else { Issue.record("shape"); return }
        #expect(value == .bool(true))
    }

    @Test func zonelessTimestampsAreUTCAndOffsetsAreApplied() throws {
        guard case .compare(_, .gte, let a) = try bind("at", "gte.2026-01-01T12:00:00.123"),
              case .compare(_, .gte, let b) = try bind("at", "gte.2026-01-01T15:00:00.123+03:00") else { Issue.record("shape"); return }
        #expect(a == .text("2026-01-01T12:00:00.123000Z"))
        #expect(a == b)
    }

    @Test(arguments: [("id", "eq.abc"), ("id", "eq.1.5"), ("score", "eq.NaN"), ("flag", "eq.maybe"), ("key", "eq.not-a-uuid"),
                      ("at", "eq.yesterday"), ("day", "eq.2026-02-30"), ("doc", "eq.{bad"), ("id", "in.(1,x)")])
    func badValuesAre22P02(column: String, value: String) {
        #expect(code { _ = try bind(column, value) } == .invalidValue)
    }

    @Test func decimalPrecisionOverflowIs22003() {
        #expect(code { _ = try bind("price", "eq.10000") } == .numericOutOfRange)
    }

    @Test(arguments: [("id", "like.1*"), ("tags", "gt.{a}"), ("name", "cs.{a}"), ("id", "is.true"),
                      ("id", "fts.word"), ("doc", "lt.{}"), ("id", "sl.(1,2)")])
    func operatorsThatDoNotFitTheTypeArePGRST127(column: String, value: String) {
        #expect(code { _ = try bind(column, value) } == .unsupportedOperator)
    }

    @Test func unknownColumnIs42703AndNamesItself() {
        do {
            _ = try bind("nope", "eq.1")
            Issue.record("expected an error")
        } catch let error as CaravanError {
            #expect(error.code == .unknownColumn)
            #expect(error.message == "column things.nope does not exist")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func badRegexAndDanglingEscapeAreRefused() {
        #expect(code { _ = try bind("name", "match.(unclosed") } == .invalidRegularExpression)
        #expect(code { _ = try bind("name", "like.abc\\") } == .invalidEscapeSequence)
    }

    @Test func likeStarsBecomePercent() throws {
        guard case .like(_, let pattern, true) = try bind("name", "ilike.*caf*") else { Issue.record("shape"); return }
        #expect(pattern == "%caf%")
    }

    @Test func anyAllExpandToOrAnd() throws {
        guard case .or(let parts) = try bind("name", "like(any).{a*,b*}") else { Issue.record("shape"); return }
        #expect(parts.count == 2)
        guard case .and = try bind("id", "gt(all).{1,2}") else { Issue.record("shape"); return }
    }
}

@Suite("In-memory evaluation with SQL three-valued logic")
struct EvaluatorTests {
    let row: [String: Value] = [
        "key": .text("3f6c0e1a-0000-4000-8000-00000000abcd"), "name": .text("Café Nour"), "id": .integer(3),
        "score": .double(4.5), "flag": .bool(true), "tags": .json(#"["cafe","quiet"]"#),
    ]

    func eval(_ column: String, _ value: String) throws -> Bool? {
        try bind(column, value).evaluate { row[$0] ?? .null }
    }

    @Test func comparisons() throws {
        #expect(try eval("id", "gt.2") == true)
        #expect(try eval("id", "lte.2") == false)
        #expect(try eval("score", "eq.4.5") == true)
        #expect(try eval("name", "neq.Café Nour") == false)
    }

    @Test func nullsAreUnknownExceptForIsAndIsDistinct() throws {
        #expect(try eval("price", "eq.1") == nil)
        #expect(try eval("price", "neq.1") == nil)
        #expect(try eval("price", "isdistinct.1") == true)
        #expect(try eval("price", "is.null") == true)
        #expect(try eval("price", "is.not_null") == false)
        #expect(try eval("price", "not.eq.1") == nil)
    }

    @Test func likeIlikeAndRegex() throws {
        #expect(try eval("name", "like.*Nour") == true)
        #expect(try eval("name", "like.*nour") == false)
        #expect(try eval("name", "ilike.CAFÉ*") == true)
        #expect(try eval("name", "like.Caf_ Nour") == true)
        #expect(try eval("name", "match.^Caf") == true)
        #expect(try eval("name", "imatch.^caf") == true)
        #expect(try eval("name", "match.^caf") == false)
    }

    @Test func likeEscapes() {
        #expect(LikePattern.matches("100%", pattern: "100\\%", caseInsensitive: false))
        #expect(!LikePattern.matches("1000", pattern: "100\\%", caseInsensitive: false))
        #expect(LikePattern.matches("a_b", pattern: "a\\_b", caseInsensitive: false))
        #expect(LikePattern.matches("abcabc", pattern: "%b%c", caseInsensitive: false))
        #expect(!LikePattern.matches("abcabd", pattern: "%b%c", caseInsensitive: false))
    }

    @Test func inListWithNull() throws {
        #expect(try eval("id", "in.(1,3)") == true)
        #expect(try eval("id", "in.(1,2)") == false)
    }

    @Test func arrays() throws {
        #expect(try eval("tags", "cs.{cafe}") == true)
        #expect(try eval("tags", "cs.{cafe,loud}") == false)
        #expect(try eval("tags", "cd.{cafe,quiet,loud}") == true)
        #expect(try eval("tags", "ov.{loud,quiet}") == true)
        #expect(try eval("tags", "ov.{loud}") == false)
        #expect(try eval("tags", #"cs.["quiet"]"#) == true)
    }

    @Test func booleansWithIs() throws {
        #expect(try eval("flag", "is.true") == true)
        #expect(try eval("flag", "is.false") == false)
        #expect(try eval("flag", "is.unknown") == false)
    }
}

@Suite("Timestamps and JSON")
struct TimestampJSONTests {
    @Test(arguments: [
        ("2026-01-01", "2026-01-01T00:00:00.000000Z"),
        ("2026-01-01 12:00:00", "2026-01-01T12:00:00.000000Z"),
        ("2026-01-01T12:00:00.123456+00:00", "2026-01-01T12:00:00.123456Z"),
        ("2026-01-01T01:30:00-0230", "2026-01-01T04:00:00.000000Z"),
        ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.500000Z"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000000Z"),
    ])
    func canonicalTimestamps(input: String, expected: String) {
        #expect(Timestamp.canonical(input) == expected)
    }

    @Test(arguments: ["2026-13-01", "2025-02-29", "2026-01-01T25:00", "2026-01-01T12:00:00+", "20260101", "2026-01-01Tnoon"])
    func rejectedTimestamps(input: String) {
        #expect(Timestamp.canonical(input) == nil)
    }

    @Test func jsonRoundTripKeepsOrderAndEscapes() throws {
        let text = #"{"b":1,"a":[true,null,2.5,"\u00e9\n\"x\""],"c":{}}"#
        let parsed = try JSONParser.parse(text)
        #expect(parsed.jsonText == #"{"b":1,"a":[true,null,2.5,"é\n\"x\""],"c":{}}"#)
        #expect(try JSONParser.parse(parsed.jsonText) == parsed)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01x", "\"\\ud800\"", "[1] 2", "nul"])
    func malformedJSON(text: String) {
        #expect { _ = try JSONParser.parse(text) } throws: { ($0 as? CaravanError)?.code == .malformedBody }
    }
}

@Suite("Row validation against the schema")
struct RowValidatorTests {
    let table = TableSchema(
        "reviews",
        columns: [Column("id", .integer, nullable: false), Column("rating", .integer, nullable: false), Column("price", .text)],
        primaryKey: ["id"],
        checks: [
            CheckConstraint("valid_rating", .between("rating", "1", "5")),
            CheckConstraint("valid_price", .or([.isNull("price"), .oneOf("price", ["$", "$$"])])),
        ]
    )

    func validate(_ pairs: KeyValuePairs<String, Value>) -> CaravanError? {
        do { try RowValidator.validate(RowValues(pairs), for: table); return nil } catch let error as CaravanError { return error } catch { return nil }
    }

    @Test func validRowPasses() {
        #expect(validate(["id": .integer(1), "rating": .integer(5), "price": .text("$")]) == nil)
        #expect(validate(["id": .integer(1), "rating": .integer(5)]) == nil)
    }

    @Test func notNullAndChecksNameTheColumnOrConstraint() {
        #expect(validate(["id": .integer(1)])?.message == "null value in column \"rating\" of relation \"reviews\" violates not-null constraint")
        #expect(validate(["id": .integer(1), "rating": .integer(6)])?.message == "new row for relation \"reviews\" violates check constraint \"valid_rating\"")
        #expect(validate(["id": .integer(1), "rating": .integer(3), "price": .text("$$$$$")])?.code == .checkViolation)
        #expect(validate(["id": .integer(1), "rating": .integer(3), "bogus": .null])?.code == .unknownBodyColumn)
    }
}

@Suite("JSON writer")
struct JSONWriterTests {
    @Test(arguments: [Int64(0), 7, -7, 10, 1234567890, Int64.max, Int64.min + 1, -100])
    func integers(value: Int64) {
        var writer = JSONWriter()
        writer.write(Value.integer(value))
        #expect(writer.string == String(value))
    }

    @Test func stringsEscapeOnlyWhatJSONRequires() {
        var writer = JSONWriter()
        writer.write(Value.text("plain ميس \"q\" \\ \n\t\u{01} end"))
        #expect(writer.string == #""plain ميس \"q\" \\ \n\t\u0001 end""#)
    }
}
