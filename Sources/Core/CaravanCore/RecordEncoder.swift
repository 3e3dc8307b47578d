import Foundation

/// Encodes an `Encodable` value straight into a `JSONValue`, giving what Foundation's `JSONEncoder` (with
/// `RecordCoding`'s date strategy) would write and `JSONParser` read back, without the text in between: dates as
/// canonical timestamps, `Decimal` as a number, an integral `Double` below 2^53 as an integer (as its text has no
/// fraction), `URL` as its absolute string, `Data` as base64, a nested `JSONValue` as itself (numbers as above).
struct RecordEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        try box(value, codingPath: [])
    }

    /// `value` as a JSON value: the types `JSONEncoder` writes in its own way first, then through `encode(to:)`.
    static func box<T: Encodable>(_ value: T, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        if T.self == String.self { return .string(value as! String) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Int.self { return .integer(Int64(value as! Int)) }
        if T.self == Double.self { return try number(value as! Double, codingPath: codingPath()) }
        if T.self == UUID.self { return .string((value as! UUID).uuidString) }
        if T.self == Date.self { return .string(Timestamp.format(microseconds: RecordCoding.microseconds(value as! Date))) }
        if T.self == Decimal.self { return try number(value as! Decimal, codingPath: codingPath()) }
        if T.self == JSONValue.self { return try normalized(value as! JSONValue, codingPath: codingPath()) }
        if T.self == [String].self { return .array((value as! [String]).map(JSONValue.string)) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        let encoder = Node(codingPath: codingPath())
        try value.encode(to: encoder)
        return encoder.result
    }

    static func number(_ value: Double, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath(), debugDescription: "Unable to encode \(value) directly in JSON."))
        }
        // JSONEncoder writes `description` less a trailing ".0"; JSONParser reads text without a fraction as an integer.
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return .integer(Int64(value)) }
        return .double(value)
    }

    /// `value` as `JSONEncoder` writes it (its `description`) and `JSONParser` reads that back: an integer when the
    /// text has no fraction and fits, else the double nearest the text. Worked out from the decimal's parts when they
    /// are small (a mantissa below 2^53, at most 22 decimal places: one correctly rounded division gives the double
    /// the text parses to); the text otherwise.
    static func number(_ value: Decimal, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        if let parts = DecimalParts(value) {
            if parts.exponent >= 0 {
                var magnitude = parts.mantissa
                var exact = true
                for _ in 0..<parts.exponent where exact {
                    let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                    magnitude = product
                    exact = !overflow
                }
                if exact, magnitude <= UInt64(Int64.max) {
                    return .integer(parts.negative ? -Int64(magnitude) : Int64(magnitude))
                }
            } else if parts.mantissa < 1 << 53, parts.exponent >= -22 {
                // The text has a fraction (a negative exponent always writes one): a double.
                let magnitude = Double(parts.mantissa) / DecimalParts.powersOfTen[-parts.exponent]
                return .double(parts.negative ? -magnitude : magnitude)
            }
        }
        return try numberFromText(value, codingPath: codingPath())
    }

    /// `number(_:codingPath:)` through the decimal's text, as `JSONEncoder` writes it.
    static func numberFromText(_ value: Decimal, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        let text = value.description
        if let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath(), debugDescription: "Unable to encode \(text) as a JSON number."))
        }
        return .double(double)
    }

    static func normalized(_ value: JSONValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        switch value {
        case .double(let d): try number(d, codingPath: codingPath())
        case .array(let items): .array(try items.map { try normalized($0, codingPath: codingPath()) })
        case .object(let pairs): .object(try pairs.map { ($0.key, try normalized($0.value, codingPath: codingPath())) })
        case .null, .bool, .integer, .string: value
        }
    }

    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
        if let exact = Int64(exactly: value) { return .integer(exact) }
        return .double(Double(value))
    }

    /// What one value's encoding has made so far: a finished value, an object or array being filled, or an encoder
    /// handed out (`superEncoder`) whose result is read at the end.
    enum Slot {
        case value(JSONValue)
        case object(ObjectBox)
        case array(ArrayBox)
        case encoder(Node)

        var value: JSONValue {
            switch self {
            case .value(let value): value
            case .object(let box): .object(box.pairs.map { ($0.key, $0.value.value) })
            case .array(let box): .array(box.items.map(\.value))
            case .encoder(let node): node.result
            }
        }
    }

    final class ObjectBox {
        var pairs: [(key: String, value: Slot)] = []

        /// Sets `key` (a key set again keeps its first place, as a JSON object's would in `JSONParser`).
        func set(_ key: String, _ slot: Slot) {
            if let index = pairs.firstIndex(where: { $0.key == key }) { pairs[index].value = slot } else { pairs.append((key, slot)) }
        }

        func box(_ key: String) -> ObjectBox {
            if let index = pairs.firstIndex(where: { $0.key == key }), case .object(let box) = pairs[index].value { return box }
            let box = ObjectBox()
            set(key, .object(box))
            return box
        }

        func array(_ key: String) -> ArrayBox {
            if let index = pairs.firstIndex(where: { $0.key == key }), case .array(let box) = pairs[index].value { return box }
            let box = ArrayBox()
            set(key, .array(box))
            return box
        }
    }

    final class ArrayBox {
        var items: [Slot] = []
    }

    final class Node: Encoder {
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        var slot: Slot?

        init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

        /// What was encoded; an empty object when nothing was (as `JSONEncoder` writes).
        var result: JSONValue { slot?.value ?? .object([]) }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let box: ObjectBox
            if case .object(let existing) = slot { box = existing } else { box = ObjectBox(); slot = .object(box) }
            return KeyedEncodingContainer(Keyed<Key>(box: box, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let box: ArrayBox
            if case .array(let existing) = slot { box = existing } else { box = ArrayBox(); slot = .array(box) }
            return Unkeyed(box: box, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: self) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: ObjectBox
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { box.set(key.stringValue, .value(.null)) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { box.set(key.stringValue, .value(.bool(value))) }
        mutating func encode(_ value: String, forKey key: Key) throws { box.set(key.stringValue, .value(.string(value))) }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            box.set(key.stringValue, .value(try number(value, codingPath: codingPath + [key])))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            box.set(key.stringValue, .value(try number(Double(value.description) ?? Double(value), codingPath: codingPath + [key])))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws { box.set(key.stringValue, .value(.integer(Int64(value)))) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { box.set(key.stringValue, .value(.integer(value))) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { box.set(key.stringValue, .value(integer(value))) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            box.set(key.stringValue, .value(try RecordEncoder.box(value, codingPath: codingPath + [key])))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(box: box.box(key.stringValue), codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(box: box.array(key.stringValue), codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { superEncoder(named: "super", path: codingPath + [RecordCodingKey("super")]) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue, path: codingPath + [key]) }

        private func superEncoder(named name: String, path: [any CodingKey]) -> any Encoder {
            let node = Node(codingPath: path)
            box.set(name, .encoder(node))
            return node
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let box: ArrayBox
        let codingPath: [any CodingKey]
        var count: Int { box.items.count }

        private var nextPath: [any CodingKey] { codingPath + [RecordCodingKey(index: box.items.count)] }

        mutating func encodeNil() throws { box.items.append(.value(.null)) }
        mutating func encode(_ value: Bool) throws { box.items.append(.value(.bool(value))) }
        mutating func encode(_ value: String) throws { box.items.append(.value(.string(value))) }
        mutating func encode(_ value: Double) throws { box.items.append(.value(try number(value, codingPath: nextPath))) }
        mutating func encode(_ value: Float) throws {
            box.items.append(.value(try number(Double(value.description) ?? Double(value), codingPath: nextPath)))
        }
        mutating func encode(_ value: Int) throws { box.items.append(.value(.integer(Int64(value)))) }
        mutating func encode(_ value: Int64) throws { box.items.append(.value(.integer(value))) }
        mutating func encode(_ value: Int8) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: Int16) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: Int32) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: UInt) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: UInt8) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: UInt16) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: UInt32) throws { box.items.append(.value(integer(value))) }
        mutating func encode(_ value: UInt64) throws { box.items.append(.value(integer(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            box.items.append(.value(try RecordEncoder.box(value, codingPath: nextPath)))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectBox()
            let path = nextPath
            box.items.append(.object(nested))
            return KeyedEncodingContainer(Keyed<NestedKey>(box: nested, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = ArrayBox()
            let path = nextPath
            box.items.append(.array(nested))
            return Unkeyed(box: nested, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let node = Node(codingPath: nextPath)
            box.items.append(.encoder(node))
            return node
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }

        mutating func encodeNil() throws { node.slot = .value(.null) }
        mutating func encode(_ value: Bool) throws { node.slot = .value(.bool(value)) }
        mutating func encode(_ value: String) throws { node.slot = .value(.string(value)) }
        mutating func encode(_ value: Double) throws { node.slot = .value(try number(value, codingPath: codingPath)) }
        mutating func encode(_ value: Float) throws {
            node.slot = .value(try number(Double(value.description) ?? Double(value), codingPath: codingPath))
        }
        mutating func encode(_ value: Int) throws { node.slot = .value(.integer(Int64(value))) }
        mutating func encode(_ value: Int64) throws { node.slot = .value(.integer(value)) }
        mutating func encode(_ value: Int8) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: Int16) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: Int32) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: UInt) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: UInt8) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: UInt16) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: UInt32) throws { node.slot = .value(integer(value)) }
        mutating func encode(_ value: UInt64) throws { node.slot = .value(integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            node.slot = .value(try RecordEncoder.box(value, codingPath: codingPath))
        }
    }
}

/// A coding key made at run time: an object's key, or an array's index.
struct RecordCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) { stringValue = string; intValue = nil }
    init(stringValue: String) { self.init(stringValue) }
    init(index: Int) { stringValue = "Index \(index)"; intValue = index }
    init?(intValue: Int) { self.init(index: intValue) }
}

/// A `Decimal`'s sign, exponent and mantissa when the mantissa fits in 64 bits, read from its stored form (NSDecimal's:
/// an 8-bit exponent; a byte holding the length in 16-bit words, the sign and the compact flag; eight little-endian
/// 16-bit mantissa words). The layout is checked against known values once; where it does not hold, there are no
/// parts and callers go through the decimal's text. (`Decimal.description` costs microseconds; a typed insert of a
/// place encodes four.)
struct DecimalParts: Equatable {
    let negative: Bool
    let exponent: Int
    let mantissa: UInt64

    static let powersOfTen: [Double] = (0...22).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

    private static let layoutHolds: Bool = {
        let samples: [(Decimal, DecimalParts)] = [
            (Decimal(sign: .minus, exponent: -4, significand: 247_136), DecimalParts(negative: true, exponent: -4, mantissa: 247_136)),
            (Decimal(sign: .plus, exponent: 3, significand: 4_294_967_297), DecimalParts(negative: false, exponent: 3, mantissa: 4_294_967_297)),
            (Decimal(sign: .plus, exponent: -20, significand: Decimal(UInt64.max)), DecimalParts(negative: false, exponent: -20, mantissa: .max)),
        ]
        guard MemoryLayout<Decimal>.size == 20 else { return false }
        return samples.allSatisfy { read($0.0) == $0.1 && $0.0.exponent == $0.1.exponent }
    }()

    init(negative: Bool, exponent: Int, mantissa: UInt64) {
        self.negative = negative
        self.exponent = exponent
        self.mantissa = mantissa
    }

    /// The parts of `value`; nil for a NaN, a mantissa past 64 bits, or where the layout does not hold.
    init?(_ value: Decimal) {
        guard Self.layoutHolds, let parts = Self.read(value) else { return nil }
        self = parts
    }

    private static func read(_ value: Decimal) -> DecimalParts? {
        var copy = value
        return withUnsafeBytes(of: &copy) { bytes -> DecimalParts? in
            let length = Int(bytes[1] >> 4)
            let negative = bytes[1] & 0x08 != 0
            guard length <= 4, length > 0 || !negative else { return nil }   // (length 0 and negative: NaN)
            var mantissa: UInt64 = 0
            for word in 0..<length {
                mantissa |= UInt64(bytes[4 + 2 * word]) << (16 * word) | UInt64(bytes[5 + 2 * word]) << (16 * word + 8)
            }
            return DecimalParts(negative: negative, exponent: Int(Int8(bitPattern: bytes[0])), mantissa: mantissa)
        }
    }
}
