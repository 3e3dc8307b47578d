import CaravanCore
import CaravanSQL
import PostgresNIO

/// Decodes result rows into Caravan values. Every output expression (see `PostgresSyntax.output`) yields text, int8,
/// float8 or boolean — or, for timestamps and text arrays, the binary value rendered here — so a value comes back
/// exactly as SQLite gives it.
enum PostgresRows {
    static func collect(_ sequence: PostgresRowSequence, types: [ColumnType]) async throws -> [[Value]] {
        var rows: [[Value]] = []
        for try await row in sequence {
            var values: [Value] = []
            values.reserveCapacity(types.count)
            for (cell, type) in zip(row, types) {
                values.append(try value(cell, as: type))
            }
            rows.append(values)
        }
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
        switch type {
        case .timestamp where cell.format == .binary && (cell.dataType == .timestamptz || cell.dataType == .timestamp):
            // Microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch), rendered as `to_char` would.
            guard let micros = bytes.readInteger(as: Int64.self) else { throw CaravanError(.internalFailure, "a timestamp cell is short") }
            return .text(Timestamp.format(microseconds: micros &+ postgresEpochMicroseconds))
        case .textArray where cell.dataType == .textArray || cell.dataType == .varcharArray:
            return .json(JSONValue.array(try cell.decode([String].self).map(JSONValue.string)).jsonText)
        case .text, .uuid, .timestamp, .date:
            return .text(try cell.decode(String.self))
        case .integer:
            return .integer(try cell.decode(Int64.self))
        case .double, .decimal:
            return .double(try cell.decode(Double.self))
        case .boolean:
            return .bool(try cell.decode(Bool.self))
        case .json, .textArray:
            // jsonb prints `{"a": 1}`; the canonical form has no spaces and Caravan's number format.
            return .json(try JSONParser.parse(try cell.decode(String.self)).jsonText)
        }
    }
}

/// 2000-01-01 00:00 UTC in microseconds since 1970-01-01.
private let postgresEpochMicroseconds: Int64 = 946_684_800_000_000

/// The SELECT (and COUNT, when asked) of a read plan.
enum PostgresRead {
    static func compile(_ plan: ReadPlan) -> (select: PostgresSQL, count: PostgresSQL?) {
        (PostgresSQL.select(plan), plan.includeCount ? PostgresSQL.count(plan) : nil)
    }
}
