import CaravanCore
import Foundation
import GRDB
import Testing
@testable import Transit
@testable import TransitSQLite

/// Expected counts, computed independently of Caravan with Python's `csv` module over the unzipped feeds
/// (rows per file; distinct `shape_id`s; stop_times with an empty departure_time for the interpolated count).
struct FeedCounts: Sendable, CustomStringConvertible {
    let name: String
    let stops, routes, calendars, calendarDates, services, trips, stopTimes, interpolated, shapes, shapePoints: Int
    var description: String { name }
}

let realFeedCounts: [FeedCounts] = [
    FeedCounts(name: "cairns_translink_2014", stops: 416, routes: 22, calendars: 4, calendarDates: 9, services: 4, trips: 1339,
               stopTimes: 37790, interpolated: 65, shapes: 54, shapePoints: 22784),
    FeedCounts(name: "porto_alegre_eptc", stops: 3986, routes: 115, calendars: 115, calendarDates: 324, services: 115, trips: 2374,
               stopTimes: 130_019, interpolated: 125_271, shapes: 201, shapePoints: 57723),
    FeedCounts(name: "porto_alegre_trensurb", stops: 24, routes: 2, calendars: 3, calendarDates: 0, services: 3, trips: 1248,
               stopTimes: 14855, interpolated: 0, shapes: 3, shapePoints: 963),
    FeedCounts(name: "saint_john_transit", stops: 729, routes: 23, calendars: 4, calendarDates: 144, services: 4, trips: 842,
               stopTimes: 37841, interpolated: 31922, shapes: 39, shapePoints: 9897),
]

@Suite("The four real GTFS feeds", .enabled(if: RealFeeds.available, "needs ../shared/data/gtfs/*.zip"))
struct RealFeedTests {
    @Test(arguments: realFeedCounts)
    func importsEveryRow(expected: FeedCounts) throws {
        let (database, summary) = try RealFeeds.bundle(expected.name)
        #expect(summary.skipped.isEmpty, "\(summary.skipped.prefix(5))")
        #expect(summary.agencies == 1)
        #expect(summary.stops == expected.stops)
        #expect(summary.routes == expected.routes)
        #expect(summary.calendars == expected.calendars)
        #expect(summary.calendarDates == expected.calendarDates)
        #expect(summary.services == expected.services)
        #expect(summary.trips == expected.trips)
        #expect(summary.stopTimes == expected.stopTimes)
        #expect(summary.interpolatedStopTimes == expected.interpolated)
        #expect(summary.shapes == expected.shapes)
        #expect(summary.shapePoints == expected.shapePoints)
        #expect(summary.bundleBytes > 0)
        // The bundle holds what the summary says.
        let stored = try database.read { db in
            [try Int.fetchOne(db, sql: "SELECT count(*) FROM stop")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM dict_stop")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM trip")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM stop_time")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM stop_time WHERE flags & 1")!,
             try Int.fetchOne(db, sql: "SELECT coalesce(sum(points), 0) FROM shape")!]
        }
        #expect(stored == [expected.stops, expected.stops, expected.trips, expected.stopTimes, expected.interpolated, expected.shapePoints])
    }

    /// Hand-verified against cairns_translink_2014.zip:
    /// - calendar.txt line 3: service `CNS2014-CNS_MUL-Weekday-00-0000100` runs on Fridays only, 20140530–20141226;
    /// - trips.txt lines 61–65: its trips 4166103…4166107 on route 110N, headsign "Palm Cove";
    /// - stop_times.txt lines 1981, 2032, 2083, 2134, 2185: they leave stop 750128 (Abbott St C247, seq 2) at
    ///   24:40, 25:40, 26:40, 27:40, 28:40 — past midnight, so on Saturday morning;
    /// - calendar.txt line 4: the Saturday service; its first departures from 750128 are 07:00 (line 24801, trip
    ///   4172753, route 131) and 07:40 (line 19998, trip 4166197, route 111) — no Saturday trip leaves it before 07:00;
    /// - calendar_dates.txt line 6: the Friday service is removed on 20141226, so on Saturday 2014-12-27 no night bus.
    @Test func nextDeparturesPastMidnightMatchTheFeed() throws {
        let (database, _) = try RealFeeds.bundle("cairns_translink_2014")
        let saturday = try LocalDateTime(parsing: "2014-06-07T00:30")
        let departures = try database.nextDepartures(fromStop: "750128", at: saturday, limit: 7)
        #expect(departures.map(\.tripID) == (4_166_103...4_166_107).map { "CNS2014-CNS_MUL-Weekday-00-\($0)" }
                + ["CNS2014-CNS_MUL-Saturday-00-4172753", "CNS2014-CNS_MUL-Saturday-00-4166197"])
        #expect(departures.map(\.departureTime) == ["24:40:00", "25:40:00", "26:40:00", "27:40:00", "28:40:00", "07:00:00", "07:40:00"])
        #expect(departures.map(\.routeShortName) == ["110N", "110N", "110N", "110N", "110N", "131", "111"])
        #expect(departures.map(\.headsign) == ["Palm Cove", "Palm Cove", "Palm Cove", "Palm Cove", "Palm Cove", "Raintrees Shopping Centre", "Kewarra Beach"])
        #expect(departures[0].serviceDate.description == "2014-06-06")
        #expect(departures[0].departsAt.description == "2014-06-07T00:40:00")
        #expect(departures[5].serviceDate.description == "2014-06-07")
        #expect(departures.allSatisfy { !$0.interpolated })

        let afterChristmas = try database.nextDepartures(fromStop: "750128", at: LocalDateTime(parsing: "2014-12-27T00:30"), limit: 2)
        #expect(afterChristmas.map(\.tripID) == ["CNS2014-CNS_MUL-Saturday-00-4172753", "CNS2014-CNS_MUL-Saturday-00-4166197"])
    }

    /// porto_alegre_eptc.zip: service `T1@1` runs Monday–Friday 20190415–20190715 (calendar.txt line 7) and is removed
    /// on 20190419, Good Friday (calendar_dates.txt line 27). Trip T1-2@1#1202 (trips.txt line 2, route T1) leaves
    /// stop 1511 at 12:02:00 (stop_times.txt line 2). Its next stops have no time (line 3 onwards): interpolated.
    @Test func calendarDatesRemoveServices() throws {
        let (database, _) = try RealFeeds.bundle("porto_alegre_eptc")
        let thursday = try database.nextDepartures(fromStop: "1511", at: LocalDateTime(parsing: "2019-04-18T12:00"), limit: 5)
        #expect(thursday.first?.tripID == "T1-2@1#1202")
        #expect(thursday.first?.departureTime == "12:02:00")
        #expect(thursday.first?.routeShortName == "T1")
        #expect(thursday.first?.interpolated == false)
        let goodFriday = try database.nextDepartures(fromStop: "1511", at: LocalDateTime(parsing: "2019-04-19T12:00"), limit: 50)
        #expect(!goodFriday.isEmpty)
        #expect(!goodFriday.contains { $0.routeID == "T1" })
        let saturday = try database.nextDepartures(fromStop: "1511", at: LocalDateTime(parsing: "2019-04-20T12:00"), limit: 5)
        #expect(saturday.isEmpty)  // every EPTC service runs Monday–Friday
        // Departures come in time order.
        let times = thursday.map(\.departsAt.secondsAfterMidnight)
        #expect(times == times.sorted())

        let trip = try database.tripStops(tripID: "T1-2@1#1202")
        #expect(trip.first?.stopID == "1511")
        #expect(trip.first?.departureTime == "12:02:00")
        #expect(trip.dropFirst().first?.interpolated == true)
        #expect(trip.map(\.departureTime) == trip.map(\.departureTime).sorted())
    }

    @Test func saintJohnUsesStopHeadsignsAndAccents() throws {
        let (database, _) = try RealFeeds.bundle("saint_john_transit")
        let stops = try database.searchStops("king's squ")
        #expect(stops.contains { $0.stopID == "BSTP34320" })
        #expect(try database.stop(id: "BSTP34320")?.name == "King's Square (Service New Brunswick)")
        let night = try database.nextDepartures(fromStop: "BSTP34320", at: LocalDateTime(parsing: "2019-06-03T08:00"), limit: 3)
        #expect(night.count == 3)
        #expect(night.allSatisfy { !$0.headsign.isEmpty })
    }

    @Test func routesByTypeOnRealFeeds() throws {
        let (trensurb, _) = try RealFeeds.bundle("porto_alegre_trensurb")
        #expect(Set(try trensurb.routes(ofType: .rail).map(\.routeID)) == ["LINHA1", "LINHAAERO"])
        #expect(try trensurb.routes(ofType: .bus).isEmpty)
        let (cairns, _) = try RealFeeds.bundle("cairns_translink_2014")
        #expect(try cairns.routes(ofType: .bus).count == 22)
        #expect(try cairns.routes(ofType: RouteType(rawValue: 700)).isEmpty)
    }

    @Test func unknownStopAndTripAreNotFound() throws {
        let (database, _) = try RealFeeds.bundle("porto_alegre_trensurb")
        let at = try LocalDateTime(parsing: "2019-06-03T08:00")
        #expect(throws: CaravanError.self) { try database.nextDepartures(fromStop: "nope", at: at) }
        do {
            _ = try database.tripStops(tripID: "nope")
            Issue.record("expected notFound")
        } catch {
            #expect(error.code == .notFound)
        }
    }
}
