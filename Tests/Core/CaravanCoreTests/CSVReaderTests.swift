import CaravanCore
import Testing

@Suite("The one CSV reader and the RFC 3339 parser")
struct CSVReaderTests {
    @Test func quotedFieldsLineBreaksAndBlankLines() throws {
        var reader = CSVReader(text: "\u{FEFF}a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n\n\"two\nlines\", z \n", file: "t.csv", trimsFields: false)
        let records = try reader.records()
        #expect(records == [CSVRecord(fields: ["a", "b"], line: 1), CSVRecord(fields: ["x, y", "say \"hi\""], line: 2),
                            CSVRecord(fields: ["two\nlines", " z "], line: 4)])
    }

    @Test func trimmedFieldsAndAnUnclosedQuote() throws {
        var trimmed = CSVReader(text: " a , b \n", file: "t.csv")
        #expect(try trimmed.next()?.fields == ["a", "b"])
        var broken = CSVReader(text: "a\n\"open,b\n", file: "t.csv")
        #expect(try broken.next()?.fields == ["a"])
        #expect(throws: CaravanError.self) { try broken.next() }
    }

    @Test("RFC 3339: seconds and an offset required", arguments: [
        ("2026-11-25T12:00:00Z", Int64(1_795_608_000_000_000)),
        ("2026-11-25t15:00:00.25+03:00", Int64(1_795_608_000_250_000)),
        ("2026-11-25T07:30:00-04:30", Int64(1_795_608_000_000_000)),
    ])
    func rfc3339(text: String, microseconds: Int64) {
        #expect(Timestamp.parseRFC3339Microseconds(text) == microseconds)
    }

    @Test("not RFC 3339", arguments: ["2026-11-25T12:00:00", "2026-11-25 12:00:00Z", "2026-11-25T12:00Z", "2026-02-30T12:00:00Z",
                                      "2026-11-25T24:00:00Z", "2026-11-25T12:00:60Z", "2026-11-25T12:00:00+0300", "2026-11-25T12:00:00.Z"])
    func notRFC3339(text: String) {
        #expect(Timestamp.parseRFC3339Microseconds(text) == nil)
    }
}
