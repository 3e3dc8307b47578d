package import CaravanCore
import Foundation
import GRDB
import GRDBSQLite

/// The rows of a result as SQLite returned them, column by column into one buffer (a tag and the stored bytes of
/// each value): what a live query reads after each commit and compares with its last result, so that a refresh of
/// thousands of rows allocates no value per column and decodes only the rows that changed (`json(_:)`).
package struct LocalRows: Equatable, Sendable {
    private var bytes: [UInt8] = []
    /// Where each row's bytes end in `bytes`.
    private var ends: [Int] = []
    private let columns: [CaravanCore.Column]

    package init(columns: [CaravanCore.Column]) { self.columns = columns }

    package var count: Int { ends.count }

    /// Row `index`'s bytes: equal bytes, equal rows (a key for looking rows up by value).
    package func row(_ index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }

    /// Whether row `index` equals row `other` of `rows`.
    package func same(_ index: Int, as other: Int, of rows: LocalRows) -> Bool {
        let start = index == 0 ? 0 : ends[index - 1]
        let otherStart = other == 0 ? 0 : rows.ends[other - 1]
        let length = ends[index] - start
        guard length == rows.ends[other] - otherStart else { return false }
        return bytes.withUnsafeBytes { mine in
            rows.bytes.withUnsafeBytes { theirs in memcmp(mine.baseAddress! + start, theirs.baseAddress! + otherStart, length) == 0 }
        }
    }

    /// Row `index` as a JSON object, as `LocalTransaction.rows` reads it.
    package func json(_ index: Int) -> JSONValue {
        var position = index == 0 ? 0 : ends[index - 1]
        return .object(columns.map { column in
            let tag = bytes[position]
            position += 1
            let value: DatabaseValue
            switch tag {
            case Tag.integer, Tag.double:
                var bits: UInt64 = 0
                for offset in 0..<8 { bits |= UInt64(bytes[position + offset]) << (8 * offset) }
                position += 8
                value = tag == Tag.integer ? Int64(bitPattern: bits).databaseValue : Double(bitPattern: bits).databaseValue
            case Tag.text, Tag.blob:
                var length = 0
                for offset in 0..<4 { length |= Int(bytes[position + offset]) << (8 * offset) }
                position += 4
                let content = bytes[position..<(position + length)]
                position += length
                value = tag == Tag.text ? String(decoding: content, as: UTF8.self).databaseValue : Data(content).databaseValue
            default:
                value = .null
            }
            return (column.name, LocalValues.json(value, for: column))
        })
    }

    /// Appends the current row of `statement` (stepped by a cursor), its first `columns.count` columns.
    mutating func append(from statement: SQLiteStatement) {
        for index in 0..<Int32(columns.count) {
            switch sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER: appendWord(Tag.integer, UInt64(bitPattern: sqlite3_column_int64(statement, index)))
            case SQLITE_FLOAT: appendWord(Tag.double, sqlite3_column_double(statement, index).bitPattern)
            case SQLITE_TEXT:
                let length = Int(sqlite3_column_bytes(statement, index))
                appendLength(Tag.text, length)
                if let text = sqlite3_column_text(statement, index) { bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: length)) }
            case SQLITE_BLOB:
                let pointer = sqlite3_column_blob(statement, index)
                let length = Int(sqlite3_column_bytes(statement, index))
                appendLength(Tag.blob, length)
                if let pointer { bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: length)) }
            default:
                bytes.append(Tag.null)
            }
        }
        ends.append(bytes.count)
    }

    private mutating func appendWord(_ tag: UInt8, _ word: UInt64) {
        bytes.append(tag)
        for offset in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: word >> (8 * offset))) }
    }

    private mutating func appendLength(_ tag: UInt8, _ length: Int) {
        bytes.append(tag)
        for offset in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: length >> (8 * offset))) }
    }

    package static func == (lhs: LocalRows, rhs: LocalRows) -> Bool { lhs.ends == rhs.ends && lhs.bytes == rhs.bytes }

    private enum Tag {
        static let null: UInt8 = 0
        static let integer: UInt8 = 1
        static let double: UInt8 = 2
        static let text: UInt8 = 3
        static let blob: UInt8 = 4
    }
}
