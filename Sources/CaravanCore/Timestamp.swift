/// Parsing and canonical formatting of timestamps and dates, without Foundation's formatters.
///
/// Canonical timestamp text is UTC with microseconds: `2026-01-01T12:00:00.123456Z`. It sorts
/// lexicographically in time order, so engines that store text can compare it directly.
public enum Timestamp {
    /// Parses ISO-8601 / Postgres-style input: `YYYY-MM-DD`, optionally `T` or space and `HH:MM[:SS[.f…]]`,
    /// optionally `Z` or an offset `±HH[:MM]`. Zone-less input is read as UTC. Returns microseconds since 1970.
    public static func parseMicroseconds(_ text: String) -> Int64? {
        let s = Array(text.trimmingSpaces.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= s.count else { return nil }
            var value = 0
            for k in 0..<count {
                let b = s[i + k]
                guard b >= 48, b <= 57 else { return nil }
                value = value * 10 + Int(b - 48)
            }
            i += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < s.count, s[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var hour = 0, minute = 0, second = 0, micros = 0
        var offsetSeconds = 0
        if i < s.count {
            guard s[i] == UInt8(ascii: "T") || s[i] == UInt8(ascii: " ") || s[i] == UInt8(ascii: "t") else { return nil }
            i += 1
            guard let h = digits(2), expect(":"), let m = digits(2) else { return nil }
            hour = h; minute = m
            if expect(":") {
                guard let sec = digits(2) else { return nil }
                second = sec
                if expect(".") {
                    var scale = 100_000
                    var any = false
                    while i < s.count, s[i] >= 48, s[i] <= 57 {
                        micros += Int(s[i] - 48) * scale
                        scale /= 10
                        i += 1
                        any = true
                    }
                    guard any else { return nil }
                }
            }
            guard hour <= 24, minute <= 59, second <= 60 else { return nil }
            if i < s.count {
                if s[i] == UInt8(ascii: "Z") || s[i] == UInt8(ascii: "z") {
                    i += 1
                } else if s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") {
                    let sign = s[i] == UInt8(ascii: "-") ? -1 : 1
                    i += 1
                    guard let oh = digits(2) else { return nil }
                    var om = 0
                    if expect(":") { guard let m = digits(2) else { return nil }; om = m }
                    else if let m = digits(2) { om = m }
                    offsetSeconds = sign * (oh * 3600 + om * 60)
                } else {
                    return nil
                }
            }
            guard i == s.count else { return nil }
        }
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
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2)
            + ":" + pad(secondOfDay % 60, 2) + "." + pad(micros, 6) + "Z"
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
