package import CaravanCore

/// GTFS times and dates.
///
/// A GTFS time is `H:MM:SS` or `HH:MM:SS` after the start of the service day (noon minus 12 h, which is midnight
/// except on daylight-saving change days), in the agency's time zone; a trip that runs past midnight keeps
/// counting (`25:10:00`). A GTFS date is `YYYYMMDD`.
package enum GTFSTime {
    /// Seconds after midnight for a GTFS time (`25:10:00` → 90600), or nil when `text` is not a time.
    package static func seconds(_ text: String) -> Int? {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, (1...3).contains(parts[0].count), parts[1].count == 2, parts[2].count == 2,
              let hours = digits(parts[0]), let minutes = digits(parts[1]), let seconds = digits(parts[2]),
              minutes < 60, seconds < 60 else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// The GTFS text of `seconds` after midnight: `HH:MM:SS`, hours past 23 kept (`90600` → `25:10:00`).
    package static func text(_ seconds: Int) -> String {
        let hours = seconds / 3600, minutes = seconds / 60 % 60, rest = seconds % 60
        return pad(hours) + ":" + pad(minutes) + ":" + pad(rest)
    }

    /// A `YYYYMMDD` date as the integer `yyyymmdd`, or nil when it is not a valid calendar date.
    package static func date(_ text: String) -> Int? {
        guard text.utf8.count == 8, let value = digits(Substring(text).utf8) else { return nil }
        guard ServiceDate(value) != nil else { return nil }
        return value
    }

    package static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    private static func digits(_ bytes: Substring.UTF8View) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return bytes.isEmpty ? nil : value
    }
}

/// A calendar date of the service (no time zone: GTFS dates are the agency's local dates).
package struct ServiceDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let year: Int
    package let month: Int
    package let day: Int

    /// From `yyyymmdd`, or nil when it is not a valid date.
    package init?(_ yyyymmdd: Int) {
        self.init(year: yyyymmdd / 10000, month: yyyymmdd / 100 % 100, day: yyyymmdd % 100)
    }

    package init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= ServiceDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// `yyyymmdd`, as GTFS and the bundle store it.
    package var number: Int { year * 10000 + month * 100 + day }

    /// `YYYY-MM-DD`.
    package var description: String {
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-" + GTFSTime.pad(month) + "-" + GTFSTime.pad(day)
    }

    /// Days since 1970-01-01 (proleptic Gregorian).
    package var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday).
    package var weekday: Int { ((dayNumber % 7) + 7 + 3) % 7 }

    /// The day before.
    package var previous: ServiceDate {
        if day > 1 { return ServiceDate(uncheckedYear: year, month: month, day: day - 1) }
        if month > 1 { return ServiceDate(uncheckedYear: year, month: month - 1, day: ServiceDate.daysIn(month: month - 1, year: year)) }
        return ServiceDate(uncheckedYear: year - 1, month: 12, day: 31)
    }

    /// The day after.
    package var next: ServiceDate {
        if day < ServiceDate.daysIn(month: month, year: year) { return ServiceDate(uncheckedYear: year, month: month, day: day + 1) }
        if month < 12 { return ServiceDate(uncheckedYear: year, month: month + 1, day: 1) }
        return ServiceDate(uncheckedYear: year + 1, month: 1, day: 1)
    }

    private init(uncheckedYear: Int, month: Int, day: Int) {
        self.year = uncheckedYear
        self.month = month
        self.day = day
    }

    package static func < (lhs: ServiceDate, rhs: ServiceDate) -> Bool { lhs.number < rhs.number }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A local date and time of the agency (`--at 2019-06-03T08:15`): the service date and seconds after midnight.
package struct LocalDateTime: Sendable, Hashable, CustomStringConvertible {
    package let date: ServiceDate
    package let secondsAfterMidnight: Int

    /// `secondsAfterMidnight` of `date`; 86400 or more rolls over to the following days (`24:05` → 00:05 next day).
    package init(date: ServiceDate, secondsAfterMidnight: Int) {
        var date = date, seconds = secondsAfterMidnight
        while seconds >= 86400 {
            date = date.next
            seconds -= 86400
        }
        self.date = date
        self.secondsAfterMidnight = seconds
    }

    /// Parses `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` (a space instead of `T` is accepted).
    package init(parsing text: String) throws(CaravanError) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let invalid = CaravanError(.invalidValue, "invalid local date and time \"\(text.prefix(40))\"", hint: "expected YYYY-MM-DDTHH:MM, e.g. 2019-06-03T08:15")
        guard bytes.count == 16 || bytes.count == 19, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x20,
              bytes[13] == 0x3A, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), hour < 24, minute < 60,
              let date = ServiceDate(year: year, month: month, day: day) else { throw invalid }
        var second = 0
        if bytes.count == 19 {
            guard bytes[16] == 0x3A, let value = number(17..<19), value < 60 else { throw invalid }
            second = value
        }
        self.init(date: date, secondsAfterMidnight: hour * 3600 + minute * 60 + second)
    }

    /// `YYYY-MM-DDTHH:MM:SS`.
    package var description: String { date.description + "T" + GTFSTime.text(secondsAfterMidnight) }
}
