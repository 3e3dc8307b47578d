/// One CSV record: its fields and the line it starts on.
package struct CSVRecord: Sendable, Equatable {
    package var fields: [String]
    package var line: Int

    package init(fields: [String], line: Int) {
        self.fields = fields
        self.line = line
    }
}

/// The one CSV reader (RFC 4180): comma-separated fields, quoted fields with doubled quotes and embedded line
/// breaks, CRLF, LF or CR line ends, blank lines skipped, a leading UTF-8 byte-order mark dropped. Real-file
/// leniencies: characters after a closing quote are kept literally, a quote inside an unquoted field is literal,
/// and (when `trimsFields`) leading/trailing spaces and tabs of every field are trimmed. An unterminated quoted
/// field is an error naming the file and the line it starts on.
package struct CSVReader: Sendable {
    package let file: String
    private let bytes: [UInt8]
    private let trimsFields: Bool
    private var index = 0
    private var line = 1

    /// Reads `bytes` (UTF-8) of `file` (the name errors give).
    package init(bytes: [UInt8], file: String, trimsFields: Bool = true) {
        self.bytes = bytes
        self.file = file
        self.trimsFields = trimsFields
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// Reads the UTF-8 of `text`.
    package init(text: String, file: String, trimsFields: Bool = true) {
        self.init(bytes: Array(text.utf8), file: file, trimsFields: trimsFields)
    }

    /// Bytes consumed so far, for progress.
    package var position: Int { index }
    package var byteCount: Int { bytes.count }

    /// The next non-blank record, or nil at the end.
    package mutating func next() throws(CaravanError) -> CSVRecord? {
        while index < bytes.count {
            let start = line
            let fields = try readRecord()
            if fields.count == 1 && fields[0].isEmpty { continue }  // a blank line
            return CSVRecord(fields: fields, line: start)
        }
        return nil
    }

    /// The remaining records.
    package mutating func records() throws(CaravanError) -> [CSVRecord] {
        var records: [CSVRecord] = []
        while let record = try next() { records.append(record) }
        return records
    }

    private mutating func readRecord() throws(CaravanError) -> [String] {
        var fields: [String] = []
        var field: [UInt8] = []
        let count = bytes.count
        let recordLine = line
        while true {
            field.removeAll(keepingCapacity: true)
            // Skip leading spaces so that ` "quoted"` is read as a quoted field (they are kept when not trimming).
            var spaces = 0
            while index + spaces < count, bytes[index + spaces] == 0x20 || bytes[index + spaces] == 0x09 { spaces += 1 }
            if index + spaces < count, bytes[index + spaces] == 0x22 {
                index += spaces + 1
                var closed = false
                while index < count {
                    let byte = bytes[index]
                    if byte == 0x22 {
                        if index + 1 < count, bytes[index + 1] == 0x22 {
                            field.append(0x22)
                            index += 2
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    if byte == 0x0A || (byte == 0x0D && (index + 1 >= count || bytes[index + 1] != 0x0A)) { line += 1 }
                    field.append(byte)
                    index += 1
                }
                guard closed else {
                    throw CaravanError(.invalidFeed, "\(file): line \(recordLine): a quoted field is never closed")
                }
            }
            // Unquoted field, or whatever follows a closing quote.
            while index < count {
                let byte = bytes[index]
                if byte == 0x2C || byte == 0x0A || byte == 0x0D { break }
                field.append(byte)
                index += 1
            }
            fields.append(trimsFields ? Self.trimmedString(field) : String(decoding: field, as: UTF8.self))
            if index >= count { return fields }
            let separator = bytes[index]
            index += 1
            if separator == 0x2C { continue }
            if separator == 0x0D, index < count, bytes[index] == 0x0A { index += 1 }
            line += 1
            return fields
        }
    }

    private static func trimmedString(_ field: [UInt8]) -> String {
        var lower = 0
        var upper = field.count
        while lower < upper, field[lower] == 0x20 || field[lower] == 0x09 { lower += 1 }
        while upper > lower, field[upper - 1] == 0x20 || field[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: field[lower..<upper], as: UTF8.self)
    }
}

/// A CSV file read by header name: columns are found by name, extra columns are ignored, and a record shorter
/// than the header reads its missing columns as empty.
package struct CSVTable: Sendable {
    package let file: String
    package private(set) var reader: CSVReader
    package let header: [String]
    private let positions: [String: Int]

    /// Reads the header. A file with no header line, or without one of `required`, is an error naming the file.
    package init(reader: CSVReader, required: [String]) throws(CaravanError) {
        var reader = reader
        file = reader.file
        guard let first = try reader.next() else {
            throw CaravanError(.invalidFeed, "\(file): line 1: the file is empty (a header line is required)")
        }
        self.reader = reader
        header = first.fields.map { $0.trimmingSpaces }
        var positions: [String: Int] = [:]
        for (offset, name) in header.enumerated() where positions[name] == nil { positions[name] = offset }
        self.positions = positions
        let missing = required.filter { positions[$0] == nil }
        if !missing.isEmpty {
            let shown = header.prefix(12).joined(separator: ",")
            throw CaravanError(.invalidFeed,
                               "\(file): line \(first.line): required column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")) missing from the header (found: \(shown.prefix(200)))")
        }
    }

    /// The position of column `name`, or nil when the file lacks it.
    package func column(_ name: String) -> Int? { positions[name] }

    package mutating func next() throws(CaravanError) -> CSVRecord? { try reader.next() }
}

package extension CSVRecord {
    /// The value at `column`, or "" when the column is absent or the record is short.
    subscript(column: Int?) -> String {
        guard let column, column < fields.count else { return "" }
        return fields[column]
    }
}
