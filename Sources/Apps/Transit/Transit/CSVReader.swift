package import CaravanCore

/// The text of one feed file, as UTF-8 bytes, and how it was decoded.
package struct FeedText: Sendable {
    /// UTF-8 bytes without a byte-order mark.
    package let bytes: [UInt8]
    /// nil when the file was UTF-8; otherwise a note naming the file, the line of the first byte that is not
    /// UTF-8 (or the byte-order mark) and the encoding it was read as.
    package let note: String?

    /// Decoding rules, in order:
    /// - a UTF-8 byte-order mark is dropped;
    /// - a UTF-16 byte-order mark (`FF FE` / `FE FF`): the file is transcoded from UTF-16 (noted);
    /// - a NUL byte anywhere else: the file is not text (UTF-16 without a byte-order mark, a binary file) and the
    ///   import stops with an error naming the file and the line;
    /// - bytes that are not valid UTF-8: the file is transcoded from Windows-1252 (a superset of the printable
    ///   Latin-1 range, which is what such feeds are in practice), noted with the line of the first invalid byte.
    package static func decode(_ raw: [UInt8], file: String) throws(CaravanError) -> FeedText {
        if raw.starts(with: [0xFF, 0xFE]) || raw.starts(with: [0xFE, 0xFF]) {
            let littleEndian = raw[0] == 0xFF
            var units: [UInt16] = []
            units.reserveCapacity(raw.count / 2)
            var index = 2
            while index + 1 < raw.count {
                let a = UInt16(raw[index]), b = UInt16(raw[index + 1])
                units.append(littleEndian ? a | b << 8 : a << 8 | b)
                index += 2
            }
            return FeedText(bytes: Array(String(decoding: units, as: UTF16.self).utf8),
                            note: "\(file) is UTF-16 (byte-order mark); transcoded to UTF-8")
        }
        let start = raw.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let body = start == 0 ? raw : Array(raw[start...])
        if let nul = body.firstIndex(of: 0) {
            throw CaravanError(.invalidFeed, "\(file): line \(lineNumber(of: nul, in: body)): contains a NUL byte; not a CSV text file (binary, or UTF-16 without a byte-order mark)")
        }
        guard let invalid = firstInvalidUTF8(body) else { return FeedText(bytes: body, note: nil) }
        var transcoded: [UInt8] = []
        transcoded.reserveCapacity(body.count + body.count / 8)
        for byte in body {
            if byte < 0x80 {
                transcoded.append(byte)
            } else {
                let scalar = byte < 0xA0 ? windows1252[Int(byte - 0x80)] : UInt32(byte)
                transcoded.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            }
        }
        return FeedText(bytes: transcoded,
                        note: "\(file): line \(lineNumber(of: invalid, in: body)): not UTF-8; the file was read as Windows-1252")
    }

    /// The 1-based line of byte `index`.
    package static func lineNumber(of index: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        var position = 0
        while position < index {
            if bytes[position] == 0x0A || (bytes[position] == 0x0D && (position + 1 >= bytes.count || bytes[position + 1] != 0x0A)) {
                line += 1
            }
            position += 1
        }
        return line
    }

    /// The index of the first byte that does not belong to a well-formed UTF-8 sequence, or nil.
    package static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int
            var minimum: UInt32
            var value: UInt32
            switch lead {
            case 0xC2...0xDF: length = 2; minimum = 0x80; value = UInt32(lead & 0x1F)
            case 0xE0...0xEF: length = 3; minimum = 0x800; value = UInt32(lead & 0x0F)
            case 0xF0...0xF4: length = 4; minimum = 0x10000; value = UInt32(lead & 0x07)
            default: return index
            }
            guard index + length <= count else { return index }
            for offset in 1..<length {
                let next = bytes[index + offset]
                guard next & 0xC0 == 0x80 else { return index }
                value = value << 6 | UInt32(next & 0x3F)
            }
            if value < minimum || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { return index }
            minimum = 0
            index += length
        }
        return nil
    }

    /// Windows-1252 0x80–0x9F (the five unassigned bytes map to the C1 controls, as in Latin-1).
    package static let windows1252: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]
}

/// One CSV record: its fields and the line it starts on.
package struct CSVRecord {
    package var fields: [String]
    package var line: Int
}

/// A small RFC 4180 reader: comma-separated fields, quoted fields with doubled quotes and embedded line breaks,
/// CRLF, LF or CR line ends, blank lines skipped. Real-feed leniencies: characters after a closing quote are kept
/// literally, a quote inside an unquoted field is literal, and leading/trailing spaces and tabs of every field
/// are trimmed. An unterminated quoted field is an error naming the file and the line it starts on.
package struct CSVReader {
    package let file: String
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    package init(text: FeedText, file: String) {
        self.bytes = text.bytes
        self.file = file
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

    private mutating func readRecord() throws(CaravanError) -> [String] {
        var fields: [String] = []
        var field: [UInt8] = []
        let count = bytes.count
        let recordLine = line
        while true {
            field.removeAll(keepingCapacity: true)
            // Skip leading spaces so that ` "quoted"` is read as a quoted field.
            while index < count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            if index < count, bytes[index] == 0x22 {
                index += 1
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
            fields.append(Self.trimmedString(field))
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
package struct CSVTable {
    package let file: String
    package private(set) var reader: CSVReader
    package let header: [String]
    private let positions: [String: Int]

    /// Reads the header. A file with no header line, or without one of `required`, is an error naming the file.
    package init(text: FeedText, file: String, required: [String]) throws(CaravanError) {
        self.file = file
        var reader = CSVReader(text: text, file: file)
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
