public import Foundation

/// A DTO field that does not map to the domain: which field, the value found, and why. Mapping never substitutes a
/// default (`?? Date()`, an unknown enum → `.personal`, a bad URL dropped): it throws this instead.
public struct DTOMappingError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let value: String
    public let reason: String

    public var description: String { "\(field): \(reason) (value \(value))" }
}

/// The strict conversions DTO → domain shares (issue 19, item 6).
public enum DTOMapping {
    /// An RFC 3339 date-time with an offset (`Z` or `±hh:mm`); fractional seconds optional (up to nanoseconds).
    /// Impossible dates (February 30, hour 24) are errors.
    public static func date(_ text: String, field: String) throws(DTOMappingError) -> Date {
        let fail = DTOMappingError(field: field, value: text, reason: "not an RFC 3339 date-time with an offset")
        let scalars = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[start..<start + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func byte(_ index: Int, _ expected: Character) -> Bool { index < scalars.count && scalars[index] == expected.asciiValue }
        guard let year = digits(0, 4), byte(4, "-"), let month = digits(5, 2), byte(7, "-"), let day = digits(8, 2),
              byte(10, "T") || byte(10, "t"), let hour = digits(11, 2), byte(13, ":"), let minute = digits(14, 2), byte(16, ":"),
              let second = digits(17, 2) else { throw fail }
        var index = 19
        var nanoseconds = 0
        if byte(index, ".") {
            index += 1
            var count = 0
            while index < scalars.count, (48...57).contains(scalars[index]), count < 9 {
                nanoseconds = nanoseconds * 10 + Int(scalars[index] - 48)
                index += 1
                count += 1
            }
            guard count > 0 else { throw fail }
            for _ in count..<9 { nanoseconds *= 10 }
        }
        let offsetSeconds: Int
        if byte(index, "Z") || byte(index, "z") {
            offsetSeconds = 0
            index += 1
        } else if byte(index, "+") || byte(index, "-"), let hours = digits(index + 1, 2), byte(index + 3, ":"), let minutes = digits(index + 4, 2),
                  hours < 24, minutes < 60 {
            offsetSeconds = (byte(index, "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
            index += 6
        } else {
            throw fail
        }
        guard index == scalars.count, (1...12).contains(month), hour < 24, minute < 60, second < 60 else { throw fail }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let utc = calendar.date(from: components), calendar.component(.day, from: utc) == day,
              calendar.component(.month, from: utc) == month else { throw fail }
        return utc.addingTimeInterval(Double(-offsetSeconds) + Double(nanoseconds) / 1e9)
    }

    /// An optional date: absent is nil, present must parse.
    public static func date(_ text: String?, field: String) throws(DTOMappingError) -> Date? {
        guard let text else { return nil }
        return try date(text, field: field) as Date
    }

    /// A raw value of `T`, or an error naming the field, the value and the allowed values.
    public static func enumValue<T: RawRepresentable & CaseIterable>(_ raw: String, _ type: T.Type, field: String) throws(DTOMappingError) -> T
        where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw DTOMappingError(field: field, value: raw, reason: "not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// An absolute http(s) URL with a host.
    public static func url(_ text: String, field: String) throws(DTOMappingError) -> URL {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host, !host.isEmpty, let url = components.url else {
            throw DTOMappingError(field: field, value: text, reason: "not an absolute http(s) URL")
        }
        return url
    }

    /// An optional URL: absent is nil, present must be valid.
    public static func url(_ text: String?, field: String) throws(DTOMappingError) -> URL? {
        guard let text else { return nil }
        return try url(text, field: field) as URL
    }
}
