import CaravanCore
import Foundation
import CaravanSQL
import Logging
import NIOCore
import PostgresNIO

/// Decodes result rows into Caravan values. Every output expression (see `PostgresSyntax.output`) yields text, int8,
/// float8 or boolean — or, for timestamps, uuids, numerics, json and text arrays, the binary value rendered here
/// exactly as the SQL cast would — so a value comes back exactly as SQLite gives it.
enum PostgresRows {
    /// Rows streamed as they arrive (large reads: a backup), as Caravan values.
    static func collect(_ sequence: PostgresRowSequence, types: [ColumnType]) async throws -> [[Value]] {
        var rows: [[Value]] = []
        for try await row in sequence { rows.append(try values(row, types: types)) }
        return rows
    }

    /// One row's cells as Caravan values.
    static func values(_ row: PostgresRow, types: [ColumnType]) throws -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(types.count)
        var cells = row.makeIterator()
        for type in types {
            guard let cell = cells.next() else { break }
            values.append(try value(cell, as: type))
        }
        return values
    }

    /// Collected rows (postgres-nio's future API) as Caravan values.
    static func values(_ rows: [PostgresRow], types: [ColumnType]) throws -> [[Value]] {
        try rows.map { try values($0, types: types) }
    }

    /// Runs `query` on `connection` and collects every row (no per-row suspension, unlike the async sequence).
    static func collect(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger, types: [ColumnType]) async throws -> [[Value]] {
        let result: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
        return try values(try await result.get().rows, types: types)
    }

    /// Runs `sql` and decodes every row: as a named prepared statement when `statements` has a name for its shape.
    static func collect(_ sql: PostgresSQL, on connection: PostgresConnection, logger: Logger, types: [ColumnType],
                        statements: PreparedStatements?) async throws -> [[Value]] {
        guard let statements, let name = statements.name(for: sql.text, bindings: sql.bindings) else {
            return try await collect(sql.query, on: connection, logger: logger, types: types)
        }
        var rows: [[Value]] = []
        try await NamedStatement.run(sql, named: name, of: statements, on: connection, logger: logger) { rows.append(try values($0, types: types)) }
        return rows
    }

    /// The single int8 of a `count(*)`.
    static func count(_ sequence: PostgresRowSequence) async throws -> Int {
        for try await row in sequence {
            return Int(try row.decode(Int64.self))
        }
        throw CaravanError(.internalFailure, "a count returned no row")
    }

    static func value(_ cell: PostgresCell, as type: ColumnType) throws -> Value {
        guard var bytes = cell.bytes else { return .null }
        let binary = cell.format == .binary
        switch type {
        case .timestamp where binary && (cell.dataType == .timestamptz || cell.dataType == .timestamp):
            // Microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch), rendered as `to_char` would.
            guard let micros = bytes.readInteger(as: Int64.self) else { throw CaravanError(.internalFailure, "a timestamp cell is short") }
            return .text(Timestamp.format(microseconds: micros &+ postgresEpochMicroseconds))
        case .uuid where binary && cell.dataType == .uuid:
            return .text(try cell.decode(UUID.self).uuidString.lowercased())
        case .textArray where cell.dataType == .textArray || cell.dataType == .varcharArray:
            if let json = textArrayJSON(cell) { return .json(json) }
            return .json(JSONValue.array(try cell.decode([String].self).map(JSONValue.string)).jsonText)
        case .text, .uuid, .timestamp, .date:
            // Text comes back as its UTF-8 bytes whatever the format; read them directly (the common case).
            if cell.dataType == .text || cell.dataType == .varchar, let text = bytes.readString(length: bytes.readableBytes) { return .text(text) }
            return .text(try cell.decode(String.self))
        case .integer:
            if binary && cell.dataType == .int8, let value = bytes.readInteger(as: Int64.self) { return .integer(value) }
            if binary && cell.dataType == .int4, let value = bytes.readInteger(as: Int32.self) { return .integer(Int64(value)) }
            return .integer(try cell.decode(Int64.self))
        case .double, .decimal:
            if binary && cell.dataType == .numeric { return .double(try numericDouble(&bytes)) }
            if binary && cell.dataType == .float8, let bits = bytes.readInteger(as: UInt64.self) { return .double(Double(bitPattern: bits)) }
            return .double(try cell.decode(Double.self))
        case .boolean:
            if binary && cell.dataType == .bool, let byte = bytes.readInteger(as: UInt8.self) { return .bool(byte != 0) }
            return .bool(try cell.decode(Bool.self))
        case .json, .textArray:
            // jsonb prints `{"a": 1}`; the canonical form has no spaces and Caravan's number format.
            if binary && cell.dataType == .jsonb {
                // Binary jsonb is a version byte (1) and then the text.
                guard bytes.readInteger(as: UInt8.self) == 1, let text = bytes.readString(length: bytes.readableBytes) else {
                    throw CaravanError(.internalFailure, "a jsonb cell has an unknown version")
                }
                return .json(try JSONParser.parse(text).jsonText)
            }
            if cell.dataType == .json, let text = bytes.readString(length: bytes.readableBytes) {
                return .json(try JSONParser.parse(text).jsonText)
            }
            return .json(try JSONParser.parse(try cell.decode(String.self)).jsonText)
        }
    }

    /// A binary `numeric` as the `float8` that PostgreSQL's own cast gives: its decimal digits parsed, correctly
    /// rounded (the wire form is base-10000 digits with a weight; NaN and ±Infinity are signs of their own).
    static func numericDouble(_ bytes: inout ByteBuffer) throws -> Double {
        guard let count = bytes.readInteger(as: Int16.self), let weight = bytes.readInteger(as: Int16.self),
              let sign = bytes.readInteger(as: UInt16.self), bytes.readInteger(as: Int16.self) != nil else {
            throw CaravanError(.internalFailure, "a numeric cell is short")
        }
        switch sign {
        case 0xC000: return .nan
        case 0xD000: return .infinity
        case 0xF000: return -.infinity
        default: break
        }
        guard count > 0 else { return sign == 0x4000 ? -0.0 : 0 }
        if count <= 4, let value = exactDouble(&bytes, count: Int(count), weight: Int(weight)) {
            return sign == 0x4000 ? -value : value
        }
        var digits = sign == 0x4000 ? "-" : ""
        for index in 0..<Int(count) {
            guard let group = bytes.readInteger(as: Int16.self) else { throw CaravanError(.internalFailure, "a numeric cell is short") }
            let text = String(group)
            digits += index == 0 ? text : String(repeating: "0", count: 4 - text.count) + text
        }
        // The groups read as one integer; the last group's place is 10000^(weight - count + 1).
        guard let value = Double(digits + "e" + String((Int(weight) - Int(count) + 1) * 4)) else {
            throw CaravanError(.internalFailure, "a numeric cell does not parse")
        }
        return value
    }
}

extension PostgresRows {
    /// The common numeric (at most 16 digits, a power of ten up to 10^22 away): its digits as an integer below 2^53
    /// and the power of ten are both exact doubles, so one multiplication or division rounds the decimal value
    /// correctly, as parsing its digits would. Nil (nothing read) when the value is outside that range.
    fileprivate static func exactDouble(_ bytes: inout ByteBuffer, count: Int, weight: Int) -> Double? {
        var mantissa: Int64 = 0
        var reader = bytes
        for _ in 0..<count {
            guard let group = reader.readInteger(as: Int16.self) else { return nil }
            mantissa = mantissa * 10_000 + Int64(group)
        }
        let exponent = (weight - count + 1) * 4
        guard mantissa <= 1 << 53, (-22...22).contains(exponent) else { return nil }
        bytes = reader
        let scale = exactPowersOfTen[abs(exponent)]
        return exponent >= 0 ? Double(mantissa) * scale : Double(mantissa) / scale
    }

    /// A binary one-dimensional `text[]` (no element type check: text and varchar share the layout) as its JSON
    /// text; nil for what this does not read (more dimensions), which the generic decoder then handles.
    fileprivate static func textArrayJSON(_ cell: PostgresCell) -> String? {
        guard cell.format == .binary, var bytes = cell.bytes,
              let dimensions = bytes.readInteger(as: Int32.self), bytes.readInteger(as: Int32.self) != nil,
              bytes.readInteger(as: UInt32.self) != nil else { return nil }
        if dimensions == 0 { return "[]" }
        guard dimensions == 1, let length = bytes.readInteger(as: Int32.self), bytes.readInteger(as: Int32.self) != nil, length >= 0 else { return nil }
        // Written as `JSONValue.array(…).jsonText` writes it, without building the array first.
        var writer = JSONWriter(reservingCapacity: bytes.readableBytes + 2 * Int(length) + 2)
        writer.bytes.append(UInt8(ascii: "["))
        for index in 0..<length {
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            guard let size = bytes.readInteger(as: Int32.self) else { return nil }
            if size < 0 {
                writer.write(JSONValue.null)
                continue
            }
            guard let text = bytes.readString(length: Int(size)) else { return nil }
            writer.writeString(text)
        }
        writer.bytes.append(UInt8(ascii: "]"))
        return writer.string
    }
}

/// 10^0 … 10^22, each exactly a double.
private let exactPowersOfTen: [Double] = (0...22).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

/// 2000-01-01 00:00 UTC in microseconds since 1970-01-01.
private let postgresEpochMicroseconds: Int64 = 946_684_800_000_000

/// The SELECT (and COUNT, when asked) of a read plan.
enum PostgresRead {
    static func compile(_ plan: ReadPlan) -> (select: PostgresSQL, count: PostgresSQL?) {
        (PostgresSQL.select(plan), plan.includeCount ? PostgresSQL.count(plan) : nil)
    }
}
