package import CaravanCore

/// Decodes a `/sync/v1/pull` reply straight into the column values of each record's local table, in one pass over
/// the bytes: no `JSONValue` tree per record, no name lookups per field when the fields come in the table's order,
/// values already in the form the store keeps (`Value`; a `json` or text-array column as canonical JSON text). The
/// pull's hot path; `CaravanAPI.pull` (records as `JSONValue`) is the general one.
///
/// Whatever this decoder does not take as it expects — an escaped key, a value the column cannot hold, a record of a
/// table the store does not mirror, a malformed page — is left to the general path: such a record keeps its
/// `JSONValue` (the store refuses it as before), and a page it cannot read at all is parsed by `JSONParser`, whose
/// errors are the ones a caller sees.
package struct PullPageDecoder: Sendable {
    struct Layout: Sendable {
        let table: TableSchema
        let names: [[UInt8]]
        let positions: [String: Int]
    }

    private let layouts: [String: Layout]

    package init(tables: [String: TableSchema]) {
        layouts = tables.mapValues { table in
            Layout(table: table, names: table.columns.map { Array($0.name.utf8) },
                   positions: Dictionary(table.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// The cursor of the page after `page` when `page` says there is one, read from its end where the server writes
    /// them (`…],"cursor":"…","has_more":true}`): a guess to ask for the next page before this one is decoded (the
    /// decoded page confirms it), nil when the end reads otherwise.
    package func nextCursor(of page: [UInt8]) -> String? {
        let marker = Array(#","cursor":""#.utf8)
        let more = Array(#"","has_more":true"#.utf8)
        var start = page.count - marker.count
        while start >= 0, !page[start..<(start + marker.count)].elementsEqual(marker) { start -= 1 }
        guard start >= 0 else { return nil }
        let from = start + marker.count
        guard let end = page[from...].firstIndex(of: UInt8(ascii: "\"")), !page[from..<end].contains(UInt8(ascii: "\\")),
              page.count >= end + more.count, page[end..<(end + more.count)].elementsEqual(more) else { return nil }
        return String(validating: page[from..<end], as: UTF8.self)
    }

    /// The reply's changes, cursor and `has_more`, or nil when the page is not one this decoder reads (the caller
    /// parses it the general way).
    package func decode(_ bytes: [UInt8]) -> PullReply? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PullReader(bytes: buffer, layouts: layouts)
            return try? reader.reply()
        }
    }
}

/// The reader behind `PullPageDecoder`: a scanner over the page's bytes. Scalars are taken inline; objects and
/// arrays that are values (a `json` column, a key) and strings with escapes are handed to `JSONParser`.
private struct PullReader {
    struct Malformed: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    let layouts: [String: PullPageDecoder.Layout]
    var index = 0
    /// How deep `value()` is in containers it reads itself.
    var depth = 0

    mutating func reply() throws -> PullReply {
        var changes: [PulledRow] = []
        var cursor: String?
        var hasMore: Bool?
        var refetched: [String] = []
        try expect(UInt8(ascii: "{"))
        try fields { reader, key in
            switch key {
            case "changes":
                changes = []   // a repeated field: the last one counts, as in `JSONParser`
                try reader.expect(UInt8(ascii: "["))
                guard !reader.take(UInt8(ascii: "]")) else { break }
                repeat { changes.append(try reader.change()) } while reader.take(UInt8(ascii: ","))
                try reader.expect(UInt8(ascii: "]"))
            case "cursor":
                guard case .string(let text) = try reader.value() else { throw Malformed() }
                cursor = text
            case "has_more":
                guard case .bool(let more) = try reader.value() else { throw Malformed() }
                hasMore = more
            case "refetched":
                if case .array(let names) = try reader.value() {
                    refetched = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
                }
            default:
                _ = try reader.skipValue()
            }
        }
        skipWhitespace()
        guard index == bytes.count, let cursor, let hasMore else { throw Malformed() }
        return PullReply(changes: changes, cursor: cursor, hasMore: hasMore, refetched: refetched)
    }

    /// One change: `{"seq":…,"table":…,"op":…,"key"|"where":…,"record":…}`.
    private mutating func change() throws -> PulledRow {
        var seq: Int64?
        var table: String?
        var operation: PulledRow.Operation?
        var key: JSONValue?
        var condition: JSONValue?
        var record: JSONValue?
        var values: [Value]?
        var recordRange: Range<Int>?
        try expect(UInt8(ascii: "{"))
        try fields { reader, name in
            switch name {
            case "seq":
                guard case .integer(let value) = try reader.value() else { throw Malformed() }
                seq = value
            case "table":
                guard case .string(let value) = try reader.value() else { throw Malformed() }
                table = value
            case "op":
                guard case .string(let value) = try reader.value(), let op = PulledRow.Operation(rawValue: value) else { throw Malformed() }
                operation = op
            case "key": key = try reader.value()
            case "where": condition = try reader.value()
            case "record":
                reader.skipWhitespace()
                let start = reader.index
                if let table, let layout = reader.layouts[table], reader.peek() == UInt8(ascii: "{") {
                    values = try reader.columns(of: layout)
                    record = nil
                } else {
                    record = try reader.value()
                    values = nil
                }
                recordRange = start..<reader.index
            default:
                _ = try reader.skipValue()
            }
        }
        guard let seq, let table, let operation, let key = key ?? condition else { throw Malformed() }
        // A record read before its table was known, or one whose values its columns cannot hold: the general way.
        if values == nil, record == nil, let recordRange { record = try JSONParser.parse(bytes: Array(bytes[recordRange])) }
        return PulledRow(seq: seq, table: table, operation: operation, key: key, record: record, values: values)
    }

    /// A record object as the values of `layout`'s columns in their order (absent ones null); nil when a field is
    /// one the store would refuse (the record then goes the general way, and is refused there with its error).
    private mutating func columns(of layout: PullPageDecoder.Layout) throws -> [Value]? {
        var values = [Value](repeating: .null, count: layout.names.count)
        var refused = false
        var next = 0   // the position the next field most likely has: records come in the table's column order
        try expect(UInt8(ascii: "{"))
        guard !take(UInt8(ascii: "}")) else { return values }
        repeat {
            skipWhitespace()
            let position: Int?
            let (range, escaped) = try stringToken()
            if !escaped, next < layout.names.count, equal(range, layout.names[next]) {
                position = next
            } else {
                position = layout.positions[try string(range, escaped: escaped)]
            }
            try expect(UInt8(ascii: ":"))
            guard let position else {
                _ = try skipValue()
                continue
            }
            next = position + 1
            if let value = try columnValue(layout.table.columns[position].type) {
                values[position] = value
            } else {
                refused = true
            }
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        return refused ? nil : values
    }

    /// The next value as a column of `type` keeps it (`LocalValues.databaseValue`'s rules), or nil when the column
    /// cannot hold it.
    private mutating func columnValue(_ type: ColumnType) throws -> Value? {
        skipWhitespace()
        guard let first = peek() else { throw Malformed() }
        if first == UInt8(ascii: "n") {
            guard case .null = try value() else { throw Malformed() }
            return .null
        }
        switch type {
        case .json:
            return .json(try value().jsonText)
        case .textArray:
            guard first == UInt8(ascii: "[") else { _ = try skipValue(); return nil }
            return .json(try value().jsonText)
        case .text, .timestamp, .date, .uuid:
            guard first == UInt8(ascii: "\"") else { _ = try skipValue(); return nil }
            let (range, escaped) = try stringToken()
            let text = try string(range, escaped: escaped)
            return .text(type == .uuid ? ColumnType.canonicalUUID(text) ?? text : text)
        case .integer, .boolean, .double, .decimal:
            switch (type, try value()) {
            case (.boolean, .bool(let b)): return .bool(b)
            case (.integer, .integer(let i)): return .integer(i)
            case (.double, .integer(let i)), (.decimal, .integer(let i)): return .double(Double(i))
            case (.double, .double(let d)), (.decimal, .double(let d)): return .double(d)
            default: return nil
            }
        }
    }

    // MARK: Scanning

    /// Reads the fields of an object whose `{` is consumed, through its `}`: `body` reads each field's value.
    private mutating func fields(_ body: (inout PullReader, String) throws -> Void) throws {
        guard !take(UInt8(ascii: "}")) else { return }
        repeat {
            skipWhitespace()
            let (range, escaped) = try stringToken()
            let name = try string(range, escaped: escaped)
            try expect(UInt8(ascii: ":"))
            try body(&self, name)
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// The next value, parsed as `JSONParser` parses it: small ones inline, the rest (deep or large containers,
    /// and whatever does not read as expected, so that its error is the parser's) by `JSONParser`.
    private mutating func value() throws -> JSONValue {
        skipWhitespace()
        guard let first = peek() else { throw Malformed() }
        let start = index
        switch first {
        case UInt8(ascii: "\""):
            let (range, escaped) = try stringToken()
            return .string(try string(range, escaped: escaped))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let number = number() { return number }
        case UInt8(ascii: "t") where literal("true"): return .bool(true)
        case UInt8(ascii: "f") where literal("false"): return .bool(false)
        case UInt8(ascii: "n") where literal("null"): return .null
        case UInt8(ascii: "{") where depth < 16:
            depth += 1
            defer { depth -= 1 }
            index += 1
            var pairs: [(key: String, value: JSONValue)] = []
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipWhitespace()
                    let (range, escaped) = try stringToken()
                    let key = try string(range, escaped: escaped)
                    try expect(UInt8(ascii: ":"))
                    let item = try value()
                    if let existing = pairs.firstIndex(where: { $0.key == key }) {
                        pairs[existing].value = item   // a repeated key: the last value wins, in the first one's place
                    } else {
                        pairs.append((key, item))
                    }
                } while pairs.count <= 16 && take(UInt8(ascii: ","))
                if pairs.count <= 16 {
                    try expect(UInt8(ascii: "}"))
                    return .object(pairs)
                }
            }
            if pairs.isEmpty { return .object([]) }
        case UInt8(ascii: "[") where depth < 16:
            depth += 1
            defer { depth -= 1 }
            index += 1
            var items: [JSONValue] = []
            if take(UInt8(ascii: "]")) { return .array([]) }
            repeat { items.append(try value()) } while take(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"))
            return .array(items)
        default:
            break
        }
        index = start
        return try JSONParser.parse(bytes: Array(bytes[try skipValue()]))
    }

    /// A number in JSON's grammar, as `JSONParser` reads it (an integer when it has neither fraction nor exponent
    /// and fits, else a finite double); nil when it is not one (the caller leaves it to `JSONParser`).
    private mutating func number() -> JSONValue? {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        var magnitude: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
            if digits < 18 { magnitude = magnitude * 10 + Int64(bytes[index] &- UInt8(ascii: "0")) }
            index += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let from = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            guard index > from else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let from = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            guard index > from else { return nil }
        }
        guard index == bytes.count || Self.endsScalar(bytes[index]) else { return nil }
        if isInteger, digits <= 18 { return .integer(negative ? -magnitude : magnitude) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { return nil }
        return .double(double)
    }

    /// Consumes `text` if it comes next, as a whole token.
    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let pointer = text.utf8Start
        for offset in 0..<count where bytes[index + offset] != pointer[offset] { return false }
        guard index + count == bytes.count || Self.endsScalar(bytes[index + count]) else { return false }
        index += count
        return true
    }

    /// Skips the next value (which must be well formed enough to find its end; `JSONParser` checks the rest).
    private mutating func skipValue() throws -> Range<Int> {
        skipWhitespace()
        let start = index
        var depth = 0
        repeat {
            guard index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "\""): _ = try stringToken(); continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw Malformed() }
                depth -= 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard depth > 0 else { throw Malformed() }
            default: break
            }
            index += 1
        } while depth > 0 || (index < bytes.count && !Self.endsScalar(bytes[index]) && !Self.endsScalar(bytes[index - 1]))
        return start..<index
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"), 0x20, 0x0A, 0x0D, 0x09: true
        default: false
        }
    }

    /// A string at `index` (its `"`): the range of its content, and whether it holds escapes or control characters
    /// (then `string` decodes it with `JSONParser`).
    private mutating func stringToken() throws -> (Range<Int>, escaped: Bool) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
        index += 1
        let start = index
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return (start..<index - 1, escaped)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 2
                continue
            }
            if byte < 0x20 { escaped = true }
            index += 1
        }
        throw Malformed()
    }

    private func string(_ range: Range<Int>, escaped: Bool) throws -> String {
        if !escaped, let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) { return text }
        guard case .string(let text) = try JSONParser.parse(bytes: Array(bytes[(range.lowerBound - 1)..<(range.upperBound + 1)])) else { throw Malformed() }
        return text
    }

    private func equal(_ range: Range<Int>, _ name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        var i = range.lowerBound
        for byte in name {
            guard bytes[i] == byte else { return false }
            i += 1
        }
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    /// Consumes `byte` if it comes next (after whitespace).
    private mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard take(byte) else { throw Malformed() }
    }
}
