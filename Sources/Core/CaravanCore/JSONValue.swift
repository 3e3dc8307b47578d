/// A parsed JSON document that keeps object keys in their original order.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.integer(a), .double(b)), let (.double(b), .integer(a)): return Double(a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .integer(let i): hasher.combine(Double(i))
        case .double(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o): for pair in o { hasher.combine(pair.key); hasher.combine(pair.value) }
        }
    }

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first(where: { $0.key == key })?.value
    }

    /// Compact JSON text.
    public var jsonText: String {
        var writer = JSONWriter()
        writer.write(self)
        return writer.string
    }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// Parses JSON text into `JSONValue` (RFC 8259; duplicate keys keep the last value's position of the first).
public struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Parses one complete JSON document.
    public static func parse(_ text: String) throws(CaravanError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    public static func parse(bytes: [UInt8]) throws(CaravanError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected trailing characters") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ what: String) -> CaravanError {
        CaravanError(.malformedBody, "Empty or invalid json", details: "\(what) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    private mutating func parseValue() throws(CaravanError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default: return try parseNumber()
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(CaravanError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw failure("invalid literal") }
            index += 1
        }
    }

    private mutating func enter() throws(CaravanError) {
        depth += 1
        guard depth <= 512 else { throw failure("nesting too deep") }
    }

    private mutating func parseObject() throws(CaravanError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var pairs: [(key: String, value: JSONValue)] = []
        // Positions by key once an object is large enough for a linear duplicate check to cost more than a table.
        var positions: [String: Int]?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            if positions == nil, pairs.count >= 8 {
                positions = Dictionary(pairs.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
            }
            if let existing = positions.map({ $0[key] }) ?? pairs.firstIndex(where: { $0.key == key }) {
                pairs[existing].value = value   // a repeated key: the last value wins, in the first one's place
            } else {
                positions?[key] = pairs.count
                pairs.append((key, value))
            }
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws(CaravanError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func parseHex4() throws(CaravanError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw failure("bad unicode escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(CaravanError) -> String {
        index += 1
        // Fast path: no escapes before the closing quote.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let slice = bytes[index..<end]
            guard let string = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8") }
            index = end + 1
            return string
        }
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") { index += 1; break }
            if b < 0x20 { throw failure("control character in string") }
            if b != UInt8(ascii: "\\") { out.append(b); index += 1; continue }
            index += 1
            guard index < bytes.count else { throw failure("unterminated escape") }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("unpaired surrogate")
                    }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("unpaired surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure("bad unicode escape") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw failure("bad escape")
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw failure("invalid UTF-8") }
        return string
    }

    private mutating func parseNumber() throws(CaravanError) -> JSONValue {
        let start = index
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        var digits = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; digits += 1 }
        guard digits > 0 else { throw failure("invalid value") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            var fraction = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; fraction += 1 }
            guard fraction > 0 else { throw failure("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            var exponent = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; exponent += 1 }
            guard exponent > 0 else { throw failure("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { throw failure("number out of range") }
        return .double(double)
    }
}

/// Appends compact JSON to a byte buffer; used for responses and canonical JSON text.
public struct JSONWriter {
    public var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let b): writeRaw(b ? "true" : "false")
        case .integer(let i): writeRaw(String(i))
        case .double(let d): writeNumber(d)
        case .string(let s): writeString(s)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let pairs):
            bytes.append(UInt8(ascii: "{"))
            for (i, pair) in pairs.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(pair.key)
                bytes.append(UInt8(ascii: ":"))
                write(pair.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a storage value: JSON text verbatim, everything else as its JSON scalar.
    public mutating func write(_ value: Value) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let b): writeRaw(b ? "true" : "false")
        case .integer(let i): writeInteger(i)
        case .double(let d): writeNumber(d)
        case .text(let s): writeString(s)
        case .json(let raw): writeRaw(raw)
        }
    }

    public mutating func writeNumber(_ d: Double) {
        if !d.isFinite { writeRaw("null"); return }
        if d == d.rounded(), abs(d) < 1e15 {
            writeInteger(Int64(d))
            return
        }
        writeRaw(String(d))
    }

    public mutating func writeRaw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    public mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var start = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
                start = i + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(0x5C); bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C); bytes.append(0x5C)
                case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Decimal digits of an integer, without allocating a String.
    public mutating func writeInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var remaining = magnitude
        var count = 0
        repeat { count += 1; remaining /= 10 } while remaining > 0
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        var index = start + count - 1
        remaining = magnitude
        repeat {
            bytes[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
            index -= 1
        } while remaining > 0
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var pairs: [(key: String, value: JSONValue)] = []
            for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                pairs.append((key.stringValue, try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(pairs)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let b = try? single.decode(Bool.self) { self = .bool(b) }
        else if let i = try? single.decode(Int64.self) { self = .integer(i) }
        else if let d = try? single.decode(Double.self) { self = .double(d) }
        else { self = .string(try single.decode(String.self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let b):
            var single = encoder.singleValueContainer()
            try single.encode(b)
        case .integer(let i):
            var single = encoder.singleValueContainer()
            try single.encode(i)
        case .double(let d):
            var single = encoder.singleValueContainer()
            try single.encode(d)
        case .string(let s):
            var single = encoder.singleValueContainer()
            try single.encode(s)
        case .array(let items):
            var array = encoder.unkeyedContainer()
            for item in items { try array.encode(item) }
        case .object(let pairs):
            var object = encoder.container(keyedBy: AnyKey.self)
            for pair in pairs { try object.encode(pair.value, forKey: AnyKey(stringValue: pair.key)) }
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
