import CaravanCore
import Testing

@Suite("Query-string decoding (wire-protocol §2.1)")
struct QueryStringTests {
    @Test func plusIsASpaceAndEncodedPlusIsAPlus() {
        let query = QueryString("name=eq.Caf%C3%A9+Nour&phone=eq.%2B966500")
        #expect(query.pairs == [.init(key: "name", value: "eq.Café Nour"), .init(key: "phone", value: "eq.+966500")])
    }

    @Test func encodedKeysAreDecoded() {
        let query = QueryString("na%6De=eq.x&%22quoted%22=is.null")
        #expect(query.pairs.map(\.key) == ["name", "\"quoted\""])
    }

    @Test func repeatedKeysAreKeptInOrderAndValueSplitsOnFirstEquals() {
        let query = QueryString("age=gt.1&age=lt.5&expr=eq.a=b")
        #expect(query.pairs.map(\.value) == ["gt.1", "lt.5", "eq.a=b"])
    }

    @Test func malformedEscapesStayLiteral() {
        #expect(QueryString.decode("100%") == "100%")
        #expect(QueryString.decode("%zz%4") == "%zz%4")
    }

    @Test func lastLimitWins() throws {
        let query = try QueryParser.parseRead(QueryString("limit=5&limit=7&offset=1&offset=3"))
        #expect(query.limit == 7)
        #expect(query.offset == 3)
    }
}
