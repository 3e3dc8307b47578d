import CaravanCore
import Foundation
import Testing

/// Timestamp parsing against Foundation's Gregorian calendar in UTC (an independent implementation).
@Suite struct TimestampTests {
    static func expected(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0, micros: Int64 = 0, offsetMinutes: Int = 0) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        guard let date = calendar.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s)) else { return nil }
        return Int64(date.timeIntervalSince1970.rounded()) * 1_000_000 + micros - Int64(offsetMinutes) * 60_000_000
    }

    @Test(arguments: [
        ("1970-01-01", expected(1970, 1, 1)),
        (" 2026-11-25 ", expected(2026, 11, 25)),
        ("1970-01-01T00:00:01Z", expected(1970, 1, 1, 0, 0, 1)),
        ("2026-01-01T12:00:00.123456Z", expected(2026, 1, 1, 12, 0, 0, micros: 123_456)),
        ("2026-01-01t12:00:00.1234567z", expected(2026, 1, 1, 12, 0, 0, micros: 123_456)),
        ("2026-01-01 12:00:00.5+03:00", expected(2026, 1, 1, 12, 0, 0, micros: 500_000, offsetMinutes: 180)),
        ("2026-01-01T12:00-0530", expected(2026, 1, 1, 12, 0, 0, offsetMinutes: -330)),
        ("2026-01-01T12:00+01", expected(2026, 1, 1, 12, 0, 0, offsetMinutes: 60)),
        ("2024-02-29T23:59:59Z", expected(2024, 2, 29, 23, 59, 59)),
        ("1969-12-31T23:59:59.999999Z", expected(1969, 12, 31, 23, 59, 59, micros: 999_999)),
    ])
    func validInputIsTheCalendarsInstant(text: String, micros: Int64?) {
        #expect(micros != nil)
        #expect(Timestamp.parseMicroseconds(text) == micros, "\(text)")
    }

    @Test(arguments: ["", "2026", "2026-1-01", "2023-02-29", "2026-13-01", "2026-04-31", "2026-01-01X", "2026-01-01T",
                      "2026-01-01T1:00", "2026-01-01T25:00", "2026-01-01T12:60", "2026-01-01T12:00:61", "2026-01-01T12:00:00.",
                      "2026-01-01T12:00:00Z+", "2026-01-01T12:00:00+3", "2026-01-01T12:00:00 Z", "٢٠٢٦-٠١-٠١"])
    func malformedInputIsNil(text: String) {
        #expect(Timestamp.parseMicroseconds(text) == nil, "\(text)")
    }

    /// Formatting, over 2,000 instants from 1600 to 9999, equals Foundation's calendar fields (its Gregorian calendar
    /// turns Julian before 1582, where PostgreSQL and Caravan stay proleptic Gregorian).
    @Test func formattingMatchesTheCalendarsFields() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var random = SplitMix64(state: 20261126)
        let start: Int64 = -11_676_096_000  // 1600-01-01
        let span: Int64 = 253_402_300_799 - start  // … 9999-12-31T23:59:59, in seconds
        for _ in 0..<2_000 {
            let seconds = Int64(random.next() % UInt64(span)) + start
            let micros = seconds * 1_000_000 + Int64(random.next() % 1_000_000)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
                                  c.second ?? 0, Int(micros - seconds * 1_000_000))
            #expect(Timestamp.format(microseconds: micros) == expected)
            #expect(Timestamp.parseMicroseconds(Timestamp.format(microseconds: micros)) == micros)
        }
        #expect(Timestamp.format(microseconds: 0) == "1970-01-01T00:00:00.000000Z")
        #expect(Timestamp.format(microseconds: -1) == "1969-12-31T23:59:59.999999Z")
    }
}
