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

extension CSVReader {
    /// Reads a decoded feed file; fields are trimmed.
    package init(text: FeedText, file: String) {
        self.init(bytes: text.bytes, file: file)
    }
}

extension CSVTable {
    /// Reads a decoded feed file's header; fields are trimmed.
    package init(text: FeedText, file: String, required: [String]) throws(CaravanError) {
        try self.init(reader: CSVReader(text: text, file: file), required: required)
    }
}
