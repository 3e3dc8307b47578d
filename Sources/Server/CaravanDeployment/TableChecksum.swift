import CaravanCore
import Crypto

/// A table's row count and checksum, computed identically on every engine from the values the storage port returns.
///
/// Each row becomes canonical JSON — an object of column → value in table order, JSON documents re-emitted with
/// their object keys sorted (jsonb reorders keys, SQLite keeps them) — and is hashed with SHA-256; the table's
/// checksum is the sum of the row digests modulo 2^256. The sum does not depend on row order, so two engines whose
/// text collations order keys differently (SQLite compares bytes, a Postgres database its locale) still agree.
struct TableChecksum: Sendable, Equatable {
    private(set) var rows = 0
    /// The 256-bit sum, as 32 bytes, most significant first.
    private var sum = [UInt8](repeating: 0, count: 32)

    /// Adds `row` (every column of `table`, in table order).
    mutating func add(_ row: [Value], of table: TableSchema) throws {
        let pairs = try zip(table.columns, row).map { column, value in (key: column.name, value: try Self.json(value)) }
        let digest = Array(SHA256.hash(data: Array(JSONValue.object(pairs).jsonText.utf8)))
        var carry = 0
        for i in stride(from: 31, through: 0, by: -1) {
            let total = Int(sum[i]) + Int(digest[i]) + carry
            sum[i] = UInt8(total & 0xff)
            carry = total >> 8
        }
        rows += 1
    }

    /// The checksum as 64 lowercase hex digits.
    var hex: String {
        let digits = Array("0123456789abcdef")
        return String(sum.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }

    static func json(_ value: Value) throws -> JSONValue {
        if case .json(let text) = value { return sortedKeys(try JSONParser.parse(text)) }
        return JSONValue(value)
    }

    static func sortedKeys(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let pairs):
            .object(pairs.map { (key: $0.key, value: sortedKeys($0.value)) }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        case .array(let items):
            .array(items.map(sortedKeys))
        default:
            value
        }
    }
}
