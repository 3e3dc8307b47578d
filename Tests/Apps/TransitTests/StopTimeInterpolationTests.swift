import Testing
@testable import Transit
@testable import TransitSQLite

@Suite("Stop-time interpolation (pure)")
struct StopTimeInterpolationTests {
    static func row(_ seq: Int, _ time: Int?, dist: Double? = nil) -> GTFSStopTime {
        GTFSStopTime(seq: seq, sid: seq, arrival: time, departure: time, pickup: 0, dropOff: 0, hid: nil, dist: dist, line: seq + 1)
    }

    @Test func fillsAGapEvenlyByStopWithoutDistances() {
        var rows = [Self.row(1, 0), Self.row(2, nil), Self.row(3, nil), Self.row(4, 300)]
        #expect(StopTimeInterpolation.interpolate(&rows) == 2)
        #expect(rows.map(\.departure) == [0, 100, 200, 300])
        #expect(rows.map(\.arrival) == [0, 100, 200, 300])
        #expect(rows.map(\.interpolated) == [false, true, true, false])
    }

    @Test func fillsAGapByShapeDistanceWhenEveryStopHasOne() {
        var rows = [Self.row(1, 1000, dist: 0), Self.row(2, nil, dist: 900), Self.row(3, 2000, dist: 1000)]
        #expect(StopTimeInterpolation.interpolate(&rows) == 1)
        #expect(rows[1].departure == 1900)
    }

    @Test func fallsBackToEvenSharesWhenADistanceIsMissingOrDoesNotGrow() {
        var missing = [Self.row(1, 0, dist: 0), Self.row(2, nil), Self.row(3, 60, dist: 10)]
        #expect(StopTimeInterpolation.interpolate(&missing) == 1)
        #expect(missing[1].departure == 30)
        var flat = [Self.row(1, 0, dist: 5), Self.row(2, nil, dist: 5), Self.row(3, 60, dist: 5)]
        #expect(StopTimeInterpolation.interpolate(&flat) == 1)
        #expect(flat[1].departure == 30)
    }

    @Test func handlesSeveralGapsAndLeavesTimedRowsAlone() {
        var rows = [Self.row(1, 0), Self.row(2, nil), Self.row(3, 100), Self.row(4, nil), Self.row(5, nil), Self.row(6, 400)]
        #expect(StopTimeInterpolation.interpolate(&rows) == 3)
        #expect(rows.map(\.departure) == [0, 50, 100, 200, 300, 400])
    }

    @Test func aTrailingGapWithoutAnEndTimeIsLeftUntouched() {
        var rows = [Self.row(1, 0), Self.row(2, nil)]
        #expect(StopTimeInterpolation.interpolate(&rows) == 0)
        #expect(rows[1].departure == nil)
        #expect(!rows[1].interpolated)
    }

    @Test func keepsATimeWithinTheGapsEnds() {
        // A distance beyond the last stop's (bad data) is clamped to the end time.
        var rows = [Self.row(1, 0, dist: 0), Self.row(2, nil, dist: 150), Self.row(3, 100, dist: 100)]
        _ = StopTimeInterpolation.interpolate(&rows)
        #expect(rows[1].departure == 100)
    }
}
