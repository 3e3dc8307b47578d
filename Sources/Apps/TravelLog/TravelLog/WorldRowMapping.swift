import CaravanCore
import Foundation

/// Maps one GeoNames CSV record to a `countries` or `cities` row. Empty optional fields become NULL; every other
/// field is taken as written (`NA` is Namibia's ISO code).
package enum WorldRowMapping {
    typealias FieldError = WorldImporter.FieldError

    static func country(_ record: [String: String]) -> Result<RowValues, FieldError> {
        Result<RowValues, FieldError> { () throws(FieldError) -> RowValues in
            var row = RowValues([:])
            row.set("id", .integer(try integer(record, "geonameid")))
            row.set("name", .text(try required(record, "name")))
            row.set("name_ar", optional(record, "name_ar"))
            let code = try required(record, "iso2")
            guard code.count == 2 else { throw FieldError(field: "iso2", reason: "expected a two-letter ISO code, found \"\(code)\"") }
            row.set("country_code", .text(code))
            row.set("capital", optional(record, "capital"))
            row.set("continent", optional(record, "continent"))
            row.set("population", .integer(try population(record)))
            return row
        }
    }

    static func city(_ record: [String: String], countryIDs: [String: Int64]) -> Result<RowValues, FieldError> {
        Result<RowValues, FieldError> { () throws(FieldError) -> RowValues in
            var row = RowValues([:])
            row.set("id", .integer(try integer(record, "geonameid")))
            let name = try required(record, "name")
            row.set("display_name", .text(name))
            row.set("plain_name", .text(withoutLatinDiacritics(name)))
            row.set("name_ar", optional(record, "name_ar"))
            row.set("admin", optional(record, "admin1_name"))
            row.set("country", optional(record, "country_name"))
            let code = try required(record, "country_code")
            guard let countryID = countryIDs[code] else {
                throw FieldError(field: "country_code", reason: "no country with code \(code) in the countries file")
            }
            row.set("country_id", .integer(countryID))
            row.set("population", .integer(try population(record)))
            row.set("latitude", .double(try coordinate(record, "latitude", limit: 90)))
            row.set("longitude", .double(try coordinate(record, "longitude", limit: 180)))
            return row
        }
    }

    static func required(_ record: [String: String], _ field: String) throws(FieldError) -> String {
        guard let value = record[field]?.trimmingWhitespace, !value.isEmpty else {
            throw FieldError(field: field, reason: "missing")
        }
        return value
    }

    static func optional(_ record: [String: String], _ field: String) -> Value {
        guard let value = record[field]?.trimmingWhitespace, !value.isEmpty else { return .null }
        return .text(value)
    }

    static func integer(_ record: [String: String], _ field: String) throws(FieldError) -> Int64 {
        let text = try required(record, field)
        guard let value = Int64(text) else { throw FieldError(field: field, reason: "expected an integer, found \"\(text)\"") }
        return value
    }

    static func population(_ record: [String: String]) throws(FieldError) -> Int64 {
        guard let text = record["population"], !text.isEmpty else { return 0 }
        guard let value = Int64(text), value >= 0 else {
            throw FieldError(field: "population", reason: "expected a non-negative integer, found \"\(text)\"")
        }
        return value
    }

    static func coordinate(_ record: [String: String], _ field: String, limit: Double) throws(FieldError) -> Double {
        let text = try required(record, field)
        guard let value = Double(text), value.isFinite, abs(value) <= limit else {
            throw FieldError(field: field, reason: "expected a number between -\(Int(limit)) and \(Int(limit)), found \"\(text)\"")
        }
        return value
    }

    /// Latin letters without their diacritics, case kept (`Zürich` → `Zurich`, `Łódź` → `Lodz`); other scripts as
    /// they are. The design's `plain_name`.
    package static func withoutLatinDiacritics(_ name: String) -> String {
        var output = String.UnicodeScalarView()
        var afterLatin = false
        for scalar in name.decomposedStringWithCanonicalMapping.unicodeScalars {
            if afterLatin, (0x0300...0x036F).contains(scalar.value) { continue }
            if let replacement = strokeLetters[scalar] {
                output.append(contentsOf: replacement.unicodeScalars)
                afterLatin = true
                continue
            }
            afterLatin = scalar.properties.isAlphabetic && (scalar.isASCII || (0xC0...0x24F).contains(scalar.value) || (0x1E00...0x1EFF).contains(scalar.value))
            output.append(scalar)
        }
        return String(output).precomposedStringWithCanonicalMapping
    }

    /// Latin letters whose stroke or ligature has no canonical decomposition.
    static let strokeLetters: [Unicode.Scalar: String] = [
        "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H", "ı": "i",
        "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ß": "ss", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D",
    ]
}
