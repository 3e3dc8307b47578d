package import Foundation
import CaravanCore

/// A DTO field that does not map to the domain: which field, the value found, and why. Mapping never substitutes a
/// default (`?? Date()`, an unknown enum → `.personal`, a bad URL dropped): it throws this instead.
package struct DTOMappingError: Error, Sendable, Equatable, CustomStringConvertible {
    package let field: String
    package let value: String
    package let reason: String

    package var description: String { "\(field): \(reason) (value \(value))" }
}

/// The strict conversions DTO → domain shares.
package enum DTOMapping {
    /// An RFC 3339 date-time with an offset (`Z` or `±hh:mm`), fractional seconds optional, read by
    /// `Timestamp.parseRFC3339Microseconds` (to the microsecond). Impossible dates (February 30, hour 24) are errors.
    package static func date(_ text: String, field: String) throws(DTOMappingError) -> Date {
        guard let microseconds = Timestamp.parseRFC3339Microseconds(text) else {
            throw DTOMappingError(field: field, value: text, reason: "not an RFC 3339 date-time with an offset")
        }
        return Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// An optional date: absent is nil, present must parse.
    package static func date(_ text: String?, field: String) throws(DTOMappingError) -> Date? {
        guard let text else { return nil }
        return try date(text, field: field) as Date
    }

    /// A raw value of `T`, or an error naming the field, the value and the allowed values.
    package static func enumValue<T: RawRepresentable & CaseIterable>(_ raw: String, _ type: T.Type, field: String) throws(DTOMappingError) -> T
        where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw DTOMappingError(field: field, value: raw, reason: "not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// An absolute http(s) URL with a host.
    package static func url(_ text: String, field: String) throws(DTOMappingError) -> URL {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host, !host.isEmpty, let url = components.url else {
            throw DTOMappingError(field: field, value: text, reason: "not an absolute http(s) URL")
        }
        return url
    }

    /// An optional URL: absent is nil, present must be valid.
    package static func url(_ text: String?, field: String) throws(DTOMappingError) -> URL? {
        guard let text else { return nil }
        return try url(text, field: field) as URL
    }
}
