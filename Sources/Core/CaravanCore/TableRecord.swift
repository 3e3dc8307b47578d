public import Foundation

/// A row of a table as a Swift value: what `caravan gen swift` writes for every table an app module serves over REST
/// (`Codable`, `Hashable`, `Sendable`; `snake_case` columns as `camelCase` properties through `CodingKeys`). The same
/// struct decodes a REST response (with any JSON decoder that reads ISO-8601 timestamps, supabase-swift's included)
/// and a row of the client's local store.
///
/// Column types become Swift types as follows: text → `String`, integer → `Int`, double → `Double`, decimal →
/// `Decimal`, boolean → `Bool`, uuid → `UUID`, timestamp → `Date` (microseconds kept), date → `String`
/// (`YYYY-MM-DD`), json → `JSONValue`, text array → `[String]`; a nullable column is an optional.
public protocol TableRecord: Codable, Hashable, Sendable {
    /// The table the record is a row of: its name and primary key.
    static var table: TableHandle { get }

    /// Sets the property of `column` from `value`, the column's JSON value as a row holds it; false when the record
    /// has no property for the column. Generated records set any of their columns; the default sets none, so a caller
    /// reads the whole row instead (a typed insert takes the values a column's default filled in this way).
    mutating func setColumn(_ column: String, to value: JSONValue) throws -> Bool

    /// The record as a JSON row: each property its column's pair, in declaration order, a nil optional left out —
    /// what `encode(to:)` writes (`RecordCoding`). Generated records write it directly; the default encodes.
    func encodedRow() throws -> JSONValue
}

extension TableRecord {
    public mutating func setColumn(_ column: String, to value: JSONValue) throws -> Bool { false }

    public func encodedRow() throws -> JSONValue { try RecordCoding.json(self) }

    /// A column's JSON value as the Swift type of its property, read as the record's `init(from:)` reads it from a
    /// row: what a generated `setColumn` assigns.
    public static func columnValue<Value: Decodable>(_ value: JSONValue, column: String) throws -> Value {
        do {
            return try RecordDecoder.unbox(Value.self, from: value, codingPath: [RecordCodingKey(stringValue: column)])
        } catch {
            throw CaravanError(.invalidValue, "\(Self.self).\(column) cannot be read from \(value.jsonText): \(error)")
        }
    }

    /// `columnValue` for the optional property of a nullable column: nil for a JSON null.
    public static func optionalColumnValue<Value: Decodable>(_ value: JSONValue, column: String) throws -> Value? {
        value == .null ? nil : try columnValue(value, column: column) as Value
    }

    /// A property's value as its column's JSON value, written as `encode(to:)` writes it: what a generated
    /// `encodedRow` holds.
    public static func columnJSON<Value: Encodable>(_ value: Value, column: String) throws -> JSONValue {
        do {
            return try RecordEncoder.box(value, codingPath: [RecordCodingKey(stringValue: column)])
        } catch {
            throw CaravanError(.invalidValue, "\(Self.self).\(column) does not encode as a column value: \(error)")
        }
    }
}

/// A table as a generated record names it: the table's name and its primary key columns.
public struct TableHandle: Sendable, Hashable {
    public let name: String
    public let primaryKey: [String]

    public init(_ name: String, primaryKey: [String]) {
        self.name = name
        self.primaryKey = primaryKey
    }
}

/// A Swift value written into a filter (`Predicate`) as REST writes it after the operator: text as is, numbers in
/// decimal, booleans as `true`/`false`, UUIDs in lower case, dates as canonical UTC timestamps.
public protocol FilterValue: Sendable {
    var filterText: String { get }
}

extension String: FilterValue { public var filterText: String { self } }
extension Int: FilterValue { public var filterText: String { String(self) } }
extension Int64: FilterValue { public var filterText: String { String(self) } }
extension Double: FilterValue { public var filterText: String { JSONValue.double(self).jsonText } }
extension Bool: FilterValue { public var filterText: String { self ? "true" : "false" } }
extension UUID: FilterValue { public var filterText: String { uuidString.lowercased() } }
extension Date: FilterValue { public var filterText: String { Timestamp.format(microseconds: RecordCoding.microseconds(self)) } }

extension Predicate {
    /// `column op value` with the column named by a record's coding key: `.column(Place.CodingKeys.areaID, .eq, "olaya")`.
    public static func column(_ key: some CodingKey, _ op: FilterOperator, _ value: some FilterValue) -> Predicate {
        if op == .is, let operand = IsValue(rawValue: value.filterText) {
            return .condition(Condition(column: key.stringValue, op: .is, operand: .isValue(operand)))
        }
        return .column(key.stringValue, op, value.filterText)
    }

    /// `column IS NULL`, the column named by a record's coding key.
    public static func isNull(_ key: some CodingKey) -> Predicate { .isNull(key.stringValue) }

    /// `column IN (values)`, the column named by a record's coding key.
    public static func column(_ key: some CodingKey, in values: [some FilterValue]) -> Predicate {
        .oneOf(key.stringValue, values.map(\.filterText))
    }
}

extension OrderTerm {
    /// An order term on the column named by a record's coding key.
    public init(_ key: some CodingKey, _ direction: SortDirection = .ascending, nulls: NullsPlacement? = nil) {
        self.init(column: key.stringValue, direction: direction, nulls: nulls)
    }
}

/// How records become the JSON rows REST, sync and the local store carry, and back: timestamps as canonical UTC text
/// with microseconds (`Timestamp.format`), read from any ISO-8601 / Postgres spelling.
package enum RecordCoding {
    /// The record as a JSON object: each property its coding key's pair, in the order the record encodes them (a nil
    /// optional left out by `encodeIfPresent`, null by `encodeNil`). Straight to `JSONValue` (`RecordEncoder`), giving
    /// what Foundation's `JSONEncoder` would write, read back by `JSONParser`.
    package static func json(_ record: some Encodable) throws(CaravanError) -> JSONValue {
        do {
            return try RecordEncoder.encode(record)
        } catch let error as CaravanError {
            throw error
        } catch {
            throw CaravanError(.invalidValue, "the record does not encode as a row: \(error)")
        }
    }

    /// The record that `row` (a JSON object) holds, read straight from the `JSONValue` (`RecordDecoder`) as Foundation's
    /// `JSONDecoder` would read the row's JSON text.
    package static func decode<Record: Decodable>(_ type: Record.Type, from row: JSONValue) throws(CaravanError) -> Record {
        do {
            return try RecordDecoder.decode(Record.self, from: row)
        } catch {
            throw CaravanError(.invalidValue, "a \(Record.self) cannot be read from the row: \(error)")
        }
    }

    /// Microseconds since 1970, rounded to the nearest.
    package static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }
}
