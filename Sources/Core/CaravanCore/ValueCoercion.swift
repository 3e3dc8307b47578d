import Foundation

/// Typing of client values (filter text and JSON body values) into storage values, with Postgres' errors.
extension ColumnType {
    /// Types the text of a filter operand (22P02 on bad input).
    public func value(fromText text: String) throws(CaravanError) -> Value {
        switch self {
        case .text:
            return .text(text)
        case .integer:
            guard let integer = Int64(text.trimmingSpaces) else { throw invalid(text) }
            return .integer(integer)
        case .double:
            guard let double = Self.parseDouble(text) else { throw invalid(text) }
            return .double(double)
        case .decimal(let precision, let scale):
            guard let double = Self.parseDouble(text), double.isFinite else { throw invalid(text) }
            return .double(try Self.fit(double, precision: precision, scale: scale))
        case .boolean:
            switch text.trimmingSpaces.lowercased() {
            case "true", "t", "yes", "y", "on", "1": return .bool(true)
            case "false", "f", "no", "n", "off", "0": return .bool(false)
            default: throw invalid(text)
            }
        case .uuid:
            guard let uuid = Self.canonicalUUID(text) else { throw invalid(text) }
            return .text(uuid)
        case .timestamp:
            guard let canonical = Timestamp.canonical(text) else { throw invalid(text) }
            return .text(canonical)
        case .date:
            guard let canonical = Timestamp.canonicalDate(text) else { throw invalid(text) }
            return .text(canonical)
        case .json:
            do {
                return .json(try JSONParser.parse(text).jsonText)
            } catch {
                throw invalid(text)
            }
        case .textArray:
            if text.first == "[" {
                return try value(fromJSON: (try? JSONParser.parse(text)) ?? .string(text))
            }
            guard let items = QueryParser.parseArrayLiteral(Substring(text)) else {
                throw CaravanError(.invalidValue, "malformed array literal: \"\(text)\"")
            }
            return Self.textArray(items)
        }
    }

    /// Types a value from a JSON body (22P02 on a value of the wrong kind).
    public func value(fromJSON json: JSONValue) throws(CaravanError) -> Value {
        if case .null = json { return .null }
        switch (self, json) {
        case (.text, .string(let s)): return .text(s)
        case (.text, .integer(let i)): return .text(String(i))
        case (.text, .double(let d)): return .text(String(d))
        case (.text, .bool(let b)): return .text(b ? "true" : "false")
        case (.integer, .integer(let i)): return .integer(i)
        case (.integer, .double(let d)):
            guard d == d.rounded(), let i = Int64(exactly: d) else { throw invalid(String(d)) }
            return .integer(i)
        case (.double, .integer(let i)): return .double(Double(i))
        case (.double, .double(let d)): return .double(d)
        case (.decimal(let p, let s), .integer(let i)): return .double(try Self.fit(Double(i), precision: p, scale: s))
        case (.decimal(let p, let s), .double(let d)): return .double(try Self.fit(d, precision: p, scale: s))
        case (.boolean, .bool(let b)): return .bool(b)
        case (.json, _): return .json(json.jsonText)
        case (.textArray, .array(let items)):
            var strings: [String?] = []
            for item in items {
                switch item {
                case .string(let s): strings.append(s)
                case .null: strings.append(nil)
                default: throw CaravanError(.invalidValue, "malformed array literal: \(json.jsonText)", details: "Array elements must be strings.")
                }
            }
            return Self.textArray(strings)
        case (_, .string(let s)) where self != .text && self != .textArray:
            return try value(fromText: s)
        default:
            throw invalid(json.jsonText)
        }
    }

    private func invalid(_ text: String) -> CaravanError {
        CaravanError(.invalidValue, "invalid input syntax for type \(inputTypeName): \"\(text.prefix(200))\"")
    }

    static func parseDouble(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces
        switch trimmed.lowercased() {
        case "nan", "infinity", "+infinity", "-infinity", "inf", "-inf": return nil
        default: return Double(trimmed)
        }
    }

    /// Rounds to `scale` digits and checks the precision, as Postgres' numeric(p,s) does.
    static func fit(_ value: Double, precision: Int, scale: Int) throws(CaravanError) -> Double {
        var factor = 1.0
        for _ in 0..<scale { factor *= 10 }
        let rounded = (value * factor).rounded(.toNearestOrAwayFromZero) / factor
        var limit = 1.0
        for _ in 0..<(precision - scale) { limit *= 10 }
        guard abs(rounded) < limit else {
            throw CaravanError(
                .numericOutOfRange, "numeric field overflow",
                details: "A field with precision \(precision), scale \(scale) must round to an absolute value less than 10^\(precision - scale)."
            )
        }
        return rounded
    }

    /// Lowercase 8-4-4-4-12 text, or nil. Accepts uppercase, braces and missing dashes, as Postgres does.
    public static func canonicalUUID(_ text: String) -> String? {
        var hex: [UInt8] = []
        var body = Substring(text)
        if body.first == "{", body.last == "}" { body = body.dropFirst().dropLast() }
        for b in body.utf8 {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): hex.append(b)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hex.append(b + 32)
            case UInt8(ascii: "-"): continue
            default: return nil
            }
        }
        guard hex.count == 32 else { return nil }
        let dashed = body.utf8.filter { $0 == UInt8(ascii: "-") }.count
        guard dashed == 0 || dashed == 4 else { return nil }
        var out: [UInt8] = []
        for (i, b) in hex.enumerated() {
            if [8, 12, 16, 20].contains(i) { out.append(UInt8(ascii: "-")) }
            out.append(b)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Canonical JSON text of a text array.
    public static func textArray(_ items: [String?]) -> Value {
        .json(JSONValue.array(items.map { $0.map(JSONValue.string) ?? .null }).jsonText)
    }
}
