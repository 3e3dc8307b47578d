import Foundation

/// Decodes a `Decodable` value straight from a `JSONValue`, reading what Foundation's `JSONDecoder` (with
/// `RecordCoding`'s date strategy) would read from the value's JSON text: dates from timestamp text, `Decimal` from a
/// number as written, an integer from an integral number, `URL` from a string, `Data` from base64, a nested
/// `JSONValue` with its objects' keys sorted and integral numbers as integers.
struct RecordDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try unbox(type, from: value, codingPath: [])
    }

    /// The types `JSONDecoder` reads in its own way first, then through `init(from:)`.
    static func unbox<T: Decodable>(_ type: T.Type, from value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        if T.self == String.self { return try string(value, codingPath: codingPath()) as! T }
        if T.self == Date.self {
            let text = try string(value, codingPath: codingPath())
            guard let micros = Timestamp.parseMicroseconds(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "not a timestamp: \(text.prefix(64))"))
            }
            return Date(timeIntervalSince1970: Double(micros) / 1_000_000) as! T
        }
        if T.self == Decimal.self { return try decimal(value, codingPath: codingPath()) as! T }
        if T.self == UUID.self {
            let text = try string(value, codingPath: codingPath())
            guard let uuid = UUID(uuidString: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Attempted to decode UUID from invalid UUID string."))
            }
            return uuid as! T
        }
        if T.self == JSONValue.self { return normalized(value) as! T }
        if T.self == [String].self, case .array(let items) = value {
            var strings: [String] = []
            strings.reserveCapacity(items.count)
            for item in items {
                guard case .string(let text) = item else { break }
                strings.append(text)
            }
            if strings.count == items.count { return strings as! T }
        }
        if T.self == URL.self {
            guard let url = URL(string: try string(value, codingPath: codingPath())) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try string(value, codingPath: codingPath())) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! T
        }
        return try T(from: Node(value: value, codingPath: codingPath()))
    }

    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ codingPath: @autoclosure () -> [any CodingKey]) -> DecodingError {
        let found = value == .null ? "null value" : value.typeName
        return DecodingError.typeMismatch(type, .init(codingPath: codingPath(), debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    static func string(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let text) = value else {
            if case .null = value { throw DecodingError.valueNotFound(String.self, .init(codingPath: codingPath(), debugDescription: "Cannot get value of type String -- found null value instead")) }
            throw mismatch(String.self, value, codingPath())
        }
        return text
    }

    static func bool(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, codingPath()) }
        return flag
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        let exact: T?
        switch value {
        case .integer(let integer): exact = T(exactly: integer)
        case .double(let double): exact = T(exactly: double)
        default: throw mismatch(T.self, value, codingPath())
        }
        guard let exact else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Parsed JSON number <\(value.jsonText)> does not fit in \(T.self)."))
        }
        return exact
    }

    static func double(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        default: throw mismatch(Double.self, value, codingPath())
        }
    }

    static func float(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        switch value {
        case .integer, .double: try Float(value.jsonText) ?? Float(double(value, codingPath: codingPath()))
        default: throw mismatch(Float.self, value, codingPath())
        }
    }

    /// A decimal from the number's JSON text, digit for digit.
    static func decimal(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Decimal {
        switch value {
        case .integer(let integer): return Decimal(integer)
        case .double(let double):
            if let decimal = plainDecimal(double) { return decimal }
            guard let decimal = Decimal(string: value.jsonText, locale: nil) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Parsed JSON number <\(value.jsonText)> does not fit in Decimal."))
            }
            return decimal
        default: throw mismatch(Decimal.self, value, codingPath())
        }
    }

    /// The decimal `Decimal(string:)` reads from the double's JSON text when that text is an integer or plain digits
    /// with a fraction (`46.675312`, at most 18 digits); nil otherwise (an exponent).
    static func plainDecimal(_ double: Double) -> Decimal? {
        guard double.isFinite else { return nil }
        if double == double.rounded(), abs(double) < 1e15 { return Decimal(Int64(double)) }   // written as an integer
        var significand: UInt64 = 0
        var digits = 0
        var fraction: Int?
        for byte in String(double).utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard digits < 18 else { return nil }
                significand = significand * 10 + UInt64(byte - UInt8(ascii: "0"))
                digits += 1
                if let count = fraction { fraction = count + 1 }
            case UInt8(ascii: "."): fraction = 0
            case UInt8(ascii: "-"): continue
            default: return nil   // an exponent: left to Decimal(string:)
            }
        }
        guard let fraction else { return nil }
        return Decimal(sign: double < 0 ? .minus : .plus, exponent: -fraction, significand: Decimal(significand))
    }

    /// A `JSONValue` as `JSONValue.init(from:)` reads it from JSON text: objects' keys sorted, an integral number that
    /// fits as an integer.
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let double): Int64(exactly: double).map(JSONValue.integer) ?? value
        case .array(let items): .array(items.map(normalized))
        case .object(let pairs): .object(pairs.sorted { $0.key < $1.key }.map { ($0.key, normalized($0.value)) })
        case .null, .bool, .integer, .string: value
        }
    }

    final class Node: Decoder {
        let value: JSONValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(value: JSONValue, codingPath: [any CodingKey]) {
            self.value = value
            self.codingPath = codingPath
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .object(let pairs) = value else { throw mismatch([String: Any].self, value, codingPath) }
            return KeyedDecodingContainer(Keyed<Key>(pairs: pairs, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let items) = value else { throw mismatch([Any].self, value, codingPath) }
            return Unkeyed(items: items, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, codingPath: codingPath) }
    }

    /// Where the last key was found: records read their keys in the row's column order, so the next is looked for
    /// just after it.
    final class Cursor {
        var next = 0
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let pairs: [(key: String, value: JSONValue)]
        let codingPath: [any CodingKey]
        let cursor = Cursor()

        var allKeys: [Key] { pairs.compactMap { Key(stringValue: $0.key) } }

        func contains(_ key: Key) -> Bool { index(of: key.stringValue) != nil }

        private func index(of name: String) -> Int? {
            let start = cursor.next < pairs.count ? cursor.next : 0
            for index in start..<pairs.count where pairs[index].key == name {
                cursor.next = index + 1
                return index
            }
            for index in 0..<start where pairs[index].key == name {
                cursor.next = index + 1
                return index
            }
            return nil
        }

        private func value(_ key: Key) throws -> JSONValue {
            guard let index = index(of: key.stringValue) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
            }
            return pairs[index].value
        }

        private func present(_ key: Key) -> JSONValue? {
            guard let index = index(of: key.stringValue), pairs[index].value != .null else { return nil }
            return pairs[index].value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try bool(try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try string(try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try double(try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, try value(key), codingPath: codingPath + [key]) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try unbox(type, from: try value(key), codingPath: codingPath + [key]) }

        // The optional reads look the key up once (the protocol's defaults look it up twice).
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key).map { try bool($0, codingPath: codingPath + [key]) } }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key).map { try string($0, codingPath: codingPath + [key]) } }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key).map { try double($0, codingPath: codingPath + [key]) } }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key).map { try integer(type, $0, codingPath: codingPath + [key]) } }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(key).map { try integer(type, $0, codingPath: codingPath + [key]) } }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try present(key).map { try unbox(type, from: $0, codingPath: codingPath + [key]) }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try Node(value: try value(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try Node(value: try value(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let key = RecordCodingKey("super")
            return Node(value: index(of: key.stringValue).map { pairs[$0].value } ?? .null, codingPath: codingPath + [key])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            Node(value: index(of: key.stringValue).map { pairs[$0].value } ?? .null, codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let items: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
            let path = codingPath + [RecordCodingKey(index: currentIndex)]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
            }
            defer { currentIndex += 1 }
            return (items[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { throw DecodingError.valueNotFound(Any?.self, .init(codingPath: codingPath, debugDescription: "Unkeyed container is at end.")) }
            guard items[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool { let (value, path) = try next(type); return try bool(value, codingPath: path) }
        mutating func decode(_ type: String.Type) throws -> String { let (value, path) = try next(type); return try string(value, codingPath: path) }
        mutating func decode(_ type: Double.Type) throws -> Double { let (value, path) = try next(type); return try double(value, codingPath: path) }
        mutating func decode(_ type: Float.Type) throws -> Float { let (value, path) = try next(type); return try float(value, codingPath: path) }
        mutating func decode(_ type: Int.Type) throws -> Int { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (value, path) = try next(type); return try integer(type, value, codingPath: path) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { let (value, path) = try next(type); return try unbox(type, from: value, codingPath: path) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            let (value, path) = try next([String: Any].self)
            return try Node(value: value, codingPath: path).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next([Any].self)
            return try Node(value: value, codingPath: path).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next(Any.self)
            return Node(value: value, codingPath: path)
        }
    }

    struct Single: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try bool(value, codingPath: codingPath) }
        func decode(_ type: String.Type) throws -> String { try string(value, codingPath: codingPath) }
        func decode(_ type: Double.Type) throws -> Double { try double(value, codingPath: codingPath) }
        func decode(_ type: Float.Type) throws -> Float { try float(value, codingPath: codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, value, codingPath: codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, value, codingPath: codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(type, from: value, codingPath: codingPath) }
    }
}
