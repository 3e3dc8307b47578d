/// Parsing and canonical formatting of timestamps and dates, without Foundation's formatters.
///
/// Canonical timestamp text is UTC with microseconds: `2026-01-01T12:00:00.123456Z`. It sorts
/// lexicographically in time order, so engines that store text can compare it directly.
public enum Timestamp {
    /// Parses ISO-8601 / Postgres-style input: `YYYY-MM-DD`, optionally `T` or space and `HH:MM[:SS[.f…]]`,
    /// optionally `Z` or an offset `±HH[:MM]`. Zone-less input is read as UTC. Returns microseconds since 1970.
    public static func parseMicroseconds(_ text: String) -> Int64? {
        var reader = TimestampReader(bytes: Array(text.trimmingSpaces.utf8))
        guard let year = reader.digits(4), reader.expect("-"), let month = reader.digits(2), reader.expect("-"), let day = reader.digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var secondOfDay = 0, micros = 0, offsetSeconds = 0
        if !reader.atEnd {
            guard reader.expect("T") || reader.expect(" ") || reader.expect("t") else { return nil }
            guard let time = reader.timeOfDay() else { return nil }
            (secondOfDay, micros) = time
            if !reader.atEnd {
                guard let offset = reader.zoneOffset() else { return nil }
                offsetSeconds = offset
            }
            guard reader.atEnd else { return nil }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(secondOfDay) - Int64(offsetSeconds)
        return seconds * 1_000_000 + Int64(micros)
    }

    /// Parses a strict RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.f…]` then `Z` or `±HH:MM` (`T` and `Z` in either case).
    /// Seconds and the offset are required; impossible dates and times (February 30, hour 24, second 60) are not
    /// date-times. Returns microseconds since 1970 (fraction digits past the sixth are dropped).
    public static func parseRFC3339Microseconds(_ text: String) -> Int64? {
        var reader = TimestampReader(bytes: Array(text.utf8))
        guard let year = reader.digits(4), reader.expect("-"), let month = reader.digits(2), reader.expect("-"), let day = reader.digits(2),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), reader.expect("T") || reader.expect("t"),
              let hour = reader.digits(2), reader.expect(":"), let minute = reader.digits(2), reader.expect(":"), let second = reader.digits(2),
              hour < 24, minute < 60, second < 60 else { return nil }
        var micros = 0
        if reader.expect(".") {
            guard let fraction = reader.fractionMicroseconds() else { return nil }
            micros = fraction
        }
        let offsetSeconds: Int
        if reader.expect("Z") || reader.expect("z") {
            offsetSeconds = 0
        } else {
            let sign: Int
            if reader.expect("+") { sign = 1 } else if reader.expect("-") { sign = -1 } else { return nil }
            guard let hours = reader.digits(2), reader.expect(":"), let minutes = reader.digits(2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        guard reader.atEnd else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * 1_000_000 + Int64(micros)
    }

    /// Formats microseconds since 1970 as canonical UTC text.
    public static func format(microseconds: Int64) -> String {
        let seconds = microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
        let micros = Int(microseconds - seconds * 1_000_000)
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = civilFromDays(days)
        guard (0...9999).contains(y) else {
            return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2)
                + ":" + pad(secondOfDay % 60, 2) + "." + pad(micros, 6) + "Z"
        }
        // The common case, written digit by digit into its 27 bytes (reads render two timestamps a row).
        return String(unsafeUninitializedCapacity: 27) { text in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var value = value
                for i in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[i] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(y, 4, at: 0)
            text[4] = UInt8(ascii: "-")
            put(m, 2, at: 5)
            text[7] = UInt8(ascii: "-")
            put(d, 2, at: 8)
            text[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            text[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            text[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            text[19] = UInt8(ascii: ".")
            put(micros, 6, at: 20)
            text[26] = UInt8(ascii: "Z")
            return 27
        }
    }

    /// Parses a date `YYYY-MM-DD` and returns it canonical, or nil.
    public static func canonicalDate(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces
        guard trimmed.utf8.count == 10, let micros = parseMicroseconds(trimmed) else { return nil }
        return String(format(microseconds: micros).prefix(10))
    }

    /// Canonical timestamp text, or nil when `text` is not a timestamp.
    public static func canonical(_ text: String) -> String? {
        parseMicroseconds(text).map(format(microseconds:))
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

/// Reads a timestamp's ASCII bytes left to right (`Timestamp.parseMicroseconds`).
struct TimestampReader {
    let bytes: [UInt8]
    var i = 0

    var atEnd: Bool { i >= bytes.count }

    /// `count` decimal digits as a number, or nil (nothing consumed).
    mutating func digits(_ count: Int) -> Int? {
        guard i + count <= bytes.count else { return nil }
        var value = 0
        for k in 0..<count {
            let b = bytes[i + k]
            guard b >= 48, b <= 57 else { return nil }
            value = value * 10 + Int(b - 48)
        }
        i += count
        return value
    }

    /// Consumes `c` when it is next.
    mutating func expect(_ c: Unicode.Scalar) -> Bool {
        guard i < bytes.count, bytes[i] == UInt8(ascii: c) else { return false }
        i += 1
        return true
    }

    /// `HH:MM[:SS[.f…]]` as (seconds of the day, microseconds); at most 24:59:60.
    mutating func timeOfDay() -> (Int, Int)? {
        guard let hour = digits(2), expect(":"), let minute = digits(2) else { return nil }
        var second = 0, micros = 0
        if expect(":") {
            guard let sec = digits(2) else { return nil }
            second = sec
            if expect(".") {
                guard let fraction = fractionMicroseconds() else { return nil }
                micros = fraction
            }
        }
        guard hour <= 24, minute <= 59, second <= 60 else { return nil }
        return (hour * 3600 + minute * 60 + second, micros)
    }

    /// At least one digit after the decimal point, as microseconds (digits past the sixth are dropped).
    mutating func fractionMicroseconds() -> Int? {
        var micros = 0, scale = 100_000, any = false
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            micros += Int(bytes[i] - 48) * scale
            scale /= 10
            i += 1
            any = true
        }
        return any ? micros : nil
    }

    /// `Z` or `±HH[:MM]` / `±HHMM` as seconds east of UTC.
    mutating func zoneOffset() -> Int? {
        if expect("Z") || expect("z") { return 0 }
        let sign: Int
        if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else { return nil }
        guard let hours = digits(2) else { return nil }
        var minutes = 0
        if expect(":") {
            guard let m = digits(2) else { return nil }
            minutes = m
        } else if let m = digits(2) {
            minutes = m
        }
        return sign * (hours * 3600 + minutes * 60)
    }
}
