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
    /// Each row's rowid, when the read asked for them (a live query's, which follows changes by rowid).
    package private(set) var rowids: [Int64] = []
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

    /// Appends the current row of `statement` (stepped by a cursor), its first `columns.count` columns, and with
    /// `rowid` the rowid in the column after them.
    mutating func append(from statement: SQLiteStatement, rowid: Bool = false) {
        if rowid { rowids.append(sqlite3_column_int64(statement, Int32(columns.count))) }
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

    /// Removes row `index`.
    package mutating func remove(at index: Int) {
        let start = index == 0 ? 0 : ends[index - 1]
        let length = ends[index] - start
        bytes.removeSubrange(start..<ends[index])
        ends.remove(at: index)
        for later in index..<ends.count { ends[later] -= length }
        if !rowids.isEmpty { rowids.remove(at: index) }
    }

    /// Inserts row `row` of `rows` (read with rowids) at `index`.
    package mutating func insert(_ row: Int, of rows: LocalRows, at index: Int) {
        let content = rows.row(row)
        let start = index == 0 ? 0 : ends[index - 1]
        bytes.insert(contentsOf: content, at: start)
        ends.insert(start + content.count, at: index)
        for later in (index + 1)..<ends.count { ends[later] += content.count }
        rowids.insert(rows.rowids[row], at: index)
    }

    /// How row `index` compares with row `other` of `rows` in `order`, as SQLite's ORDER BY ranks them: NULLs where
    /// the term puts them, then numbers (integers and reals by value), text, blobs (bytes, as the BINARY collation).
    package func compare(_ index: Int, with other: Int, of rows: LocalRows, in order: RowOrder) -> Int {
        for term in order.terms {
            let mine = value(index, column: term.column)
            let theirs = rows.value(other, column: term.column)
            switch (mine, theirs) {
            case (.null, .null): continue
            case (.null, _): return term.nullsFirst ? -1 : 1
            case (_, .null): return term.nullsFirst ? 1 : -1
            default:
                let ranked = Self.rank(mine, theirs)
                if ranked != 0 { return term.descending ? -ranked : ranked }
            }
        }
        return 0
    }

    /// The stored value of one column of row `index`.
    private func value(_ index: Int, column: Int) -> StoredValue {
        var position = index == 0 ? 0 : ends[index - 1]
        var current = 0
        while true {
            let tag = bytes[position]
            position += 1
            var length = 0
            switch tag {
            case Tag.integer, Tag.double: length = 8
            case Tag.text, Tag.blob:
                for offset in 0..<4 { length |= Int(bytes[position + offset]) << (8 * offset) }
                position += 4
            default: length = 0
            }
            if current == column {
                switch tag {
                case Tag.integer, Tag.double:
                    var bits: UInt64 = 0
                    for offset in 0..<8 { bits |= UInt64(bytes[position + offset]) << (8 * offset) }
                    return tag == Tag.integer ? .integer(Int64(bitPattern: bits)) : .real(Double(bitPattern: bits))
                case Tag.text: return .text(bytes[position..<(position + length)])
                case Tag.blob: return .blob(bytes[position..<(position + length)])
                default: return .null
                }
            }
            position += length
            current += 1
        }
    }

    private enum StoredValue {
        case null
        case integer(Int64)
        case real(Double)
        case text(ArraySlice<UInt8>)
        case blob(ArraySlice<UInt8>)

        /// SQLite's storage-class order for non-NULL values: numbers, then text, then blobs.
        var storageClass: Int {
            switch self {
            case .null: 0
            case .integer, .real: 1
            case .text: 2
            case .blob: 3
            }
        }
    }

    /// -1, 0 or 1 as `lhs` sorts before, with or after `rhs` (both non-NULL), ascending.
    private static func rank(_ lhs: StoredValue, _ rhs: StoredValue) -> Int {
        func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return sign(a, b)
        case (.real(let a), .real(let b)): return sign(a, b)
        case (.integer(let a), .real(let b)): return sign(Double(a), b)
        case (.real(let a), .integer(let b)): return sign(a, Double(b))
        case (.text(let a), .text(let b)), (.blob(let a), .blob(let b)):
            return a.lexicographicallyPrecedes(b) ? -1 : (b.lexicographicallyPrecedes(a) ? 1 : 0)
        default: return sign(lhs.storageClass, rhs.storageClass)
        }
    }

    private mutating func appendWord(_ tag: UInt8, _ word: UInt64) {
        bytes.append(tag)
        for offset in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: word >> (8 * offset))) }
    }

    private mutating func appendLength(_ tag: UInt8, _ length: Int) {
        bytes.append(tag)
        for offset in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: length >> (8 * offset))) }
    }

    package static func == (lhs: LocalRows, rhs: LocalRows) -> Bool {
        lhs.ends == rhs.ends && lhs.bytes == rhs.bytes && lhs.rowids == rhs.rowids
    }

    private enum Tag {
        static let null: UInt8 = 0
        static let integer: UInt8 = 1
        static let double: UInt8 = 2
        static let text: UInt8 = 3
        static let blob: UInt8 = 4
    }
}

/// The order of a live query's rows as its SQL sorts them: its terms, then the primary key (ascending), by column
/// position.
package struct RowOrder: Sendable {
    package struct Term: Sendable {
        let column: Int
        let descending: Bool
        let nullsFirst: Bool
    }
    let terms: [Term]

    package init(_ order: [OrderTerm], of table: TableSchema) throws {
        var terms: [Term] = []
        for term in order {
            guard let column = table.position(of: term.column) else { throw LocalStorageError.unknownColumn(table: table.name, column: term.column) }
            terms.append(Term(column: column, descending: term.direction == .descending, nullsFirst: term.effectiveNulls == .first))
        }
        for key in table.primaryKey {
            guard let column = table.position(of: key) else { throw LocalStorageError.unknownColumn(table: table.name, column: key) }
            terms.append(Term(column: column, descending: false, nullsFirst: true))   // SQLite's default for ASC
        }
        self.terms = terms
    }
}
