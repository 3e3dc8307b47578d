import CaravanClientModels
import CaravanCore
import Foundation
import Testing

/// `RecordCoding`'s direct encoder and decoder against the path they replace (Foundation's `JSONEncoder` →
/// `JSONParser`, `jsonText` → `JSONDecoder`), kept here as the oracle: every shipped record, every column type.
@Suite("RecordCoding against Foundation's JSON coders")
struct RecordCodingTests {
    /// Sample rows of `table`: every column filled, nullable ones null, nullable ones absent, and numbers that a text
    /// round trip changes (integral doubles, long decimals, unsorted keys inside a json column).
    static func rows(_ table: TableSchema) -> [JSONValue] {
        let filled = TypedRecordTests.sampleRow(table, variant: 1, nulls: false)
        let nulls = TypedRecordTests.sampleRow(table, variant: 2, nulls: true)
        guard case .object(let pairs) = nulls, case .object(let filledPairs) = filled else { return [filled, nulls] }
        let absent = JSONValue.object(pairs.filter { $0.value != .null })
        let awkward = JSONValue.object(filledPairs.map { pair in
            switch table.columns.first(where: { $0.name == pair.key })?.type {
            case .double?: (pair.key, .double(3))
            case .decimal?: (pair.key, .double(46.675312456))
            case .json?: (pair.key, .object([("z", .double(2)), ("a", .array([.double(0.1), .null, .object([("y", .bool(false)), ("b", .integer(-7))])]))]))
            case .timestamp?: (pair.key, .string("2026-12-06 23:59:59.999999+03"))
            default: pair
            }
        })
        // Decimals as the store hands them back: integral, long, tiny, huge, negative.
        let decimals = [JSONValue.double(4), .double(-0.0001), .double(123456.789012345), .double(1e-7), .double(2.5e20), .integer(-12)].map { number in
            JSONValue.object(filledPairs.map { pair in
                guard case .decimal? = table.columns.first(where: { $0.name == pair.key })?.type else { return pair }
                return (pair.key, number)
            })
        }
        return [filled, nulls, absent, awkward] + decimals
    }

    @Test(arguments: TypedRecordTests.records.map { $0.table.name })
    func directCodingGivesWhatFoundationGives(table name: String) throws {
        let type = try #require(TypedRecordTests.records.first { $0.table.name == name })
        let table = try #require(TypedRecordTests.modules.flatMap(\.tables).first { $0.name == name })
        try Self.compare(type, rows: Self.rows(table))
    }

    static func compare<Record: TableRecord>(_ type: Record.Type, rows: [JSONValue]) throws {
        for row in rows {
            let expected = try foundationDecoder().decode(Record.self, from: Data(row.jsonText.utf8))
            let record = try RecordCoding.decode(Record.self, from: row)
            #expect(record == expected, "\(Record.self) from \(row.jsonText)")
            let oracle = try JSONParser.parse(String(decoding: try foundationEncoder().encode(record), as: UTF8.self))
            let encoded = try RecordCoding.json(record)
            #expect(same(sortingKeys(encoded), sortingKeys(oracle)), "\(Record.self): \(encoded.jsonText) vs \(oracle.jsonText)")
        }
    }

    /// Objects' keys sorted: `JSONEncoder` writes an object's keys in no set order.
    static func sortingKeys(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let items): .array(items.map(sortingKeys))
        case .object(let pairs): .object(pairs.sorted { $0.key < $1.key }.map { ($0.key, sortingKeys($0.value)) })
        default: value
        }
    }

    /// Equal and of the same JSON case (`==` takes `.integer(2)` and `.double(2)` as equal).
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case let (.integer(x), .integer(y)): x == y
        case let (.double(x), .double(y)): x == y
        case let (.array(x), .array(y)): x.count == y.count && zip(x, y).allSatisfy(same)
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && same($0.value, $1.value) }
        case (.integer, _), (.double, _), (.array, _), (.object, _): false
        default: a == b
        }
    }

    @Test func scalarsAndFailuresMatchFoundation() throws {
        struct Sample: Codable, Equatable {
            var whole: Double, half: Double, big: Double, count: Int, price: Decimal, wholePrice: Decimal
            var at: Date, id: UUID, tags: [String?], nested: [String: Int], flag: Bool?
        }
        let sample = Sample(whole: -4, half: 0.5, big: 1e300, count: 12, price: Decimal(string: "19.99")!, wholePrice: 20,
                            at: Date(timeIntervalSince1970: 1_790_000_000.000_001), id: UUID(uuidString: "0a0b0c0d-0000-4000-8000-000000000001")!,
                            tags: ["a", nil], nested: ["k": 1], flag: nil)
        let oracle = try JSONParser.parse(String(decoding: try Self.foundationEncoder().encode(sample), as: UTF8.self))
        let encoded = try RecordCoding.json(sample)
        #expect(Self.same(Self.sortingKeys(encoded), Self.sortingKeys(oracle)), "\(encoded.jsonText) vs \(oracle.jsonText)")
        #expect(try RecordCoding.decode(Sample.self, from: encoded) == Self.foundationDecoder().decode(Sample.self, from: Data(encoded.jsonText.utf8)))
        #expect(throws: CaravanError.self) { try RecordCoding.json(Sample(whole: .nan, half: 0, big: 0, count: 0, price: 0, wholePrice: 0, at: Date(), id: UUID(), tags: [], nested: [:], flag: nil)) }
        for bad: JSONValue in [.object([]), .object([("count", .double(1.5))]), .string("x")] {
            #expect(throws: CaravanError.self) { try RecordCoding.decode(Sample.self, from: bad) }
            #expect(throws: (any Error).self) { try Self.foundationDecoder().decode(Sample.self, from: Data(bad.jsonText.utf8)) }
        }
    }

    // MARK: The path replaced, as the oracle

    static func foundationEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var single = encoder.singleValueContainer()
            try single.encode(Timestamp.format(microseconds: RecordCoding.microseconds(date)))
        }
        return encoder
    }

    static func foundationDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let single = try decoder.singleValueContainer()
            let text = try single.decode(String.self)
            guard let micros = Timestamp.parseMicroseconds(text) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a timestamp: \(text.prefix(64))")
            }
            return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        }
        return decoder
    }
}
