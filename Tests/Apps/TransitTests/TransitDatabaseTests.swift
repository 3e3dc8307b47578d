import CaravanCore
import Foundation
import GRDB
import Testing
@testable import Transit
@testable import TransitSQLite

@Suite("A bundle built from the fixture feed")
struct FixtureFeedTests {
    let database: TransitDatabase
    let summary: GTFSImporter.Summary
    let path: String

    init() throws {
        let (path, summary) = try importFeed(try writeFeed(fixtureFeed))
        self.path = path
        self.summary = summary
        database = try TransitDatabase(path: path)
    }

    @Test func readsBOMCRLFQuotesAndExtraColumns() throws {
        #expect(summary.skipped.isEmpty, "\(summary.skipped)")
        #expect(summary.timezone == "Europe/Lisbon")
        #expect(database.timezone == "Europe/Lisbon")
        let agency = try database.read { db in try String.fetchOne(db, sql: "SELECT name FROM agency") }
        #expect(agency == "Test, \"Transit\"")
        #expect(try database.stop(id: "S2")?.name == "Rua Augusta, 12")
        #expect(summary.services == 2)  // WK from calendar.txt, HOLIDAY only in calendar_dates.txt
    }

    @Test func interpolatesNonTimepointStopsAndListsATrip() throws {
        let stops = try database.tripStops(tripID: "T1")
        #expect(stops.map(\.stopID) == ["S1", "S2", "S3", "S4"])
        #expect(stops.map(\.departureTime) == ["08:00:00", "08:10:00", "08:20:00", "08:31:00"])
        #expect(stops.map(\.arrivalTime) == ["08:00:00", "08:10:00", "08:20:00", "08:30:00"])
        #expect(stops.map(\.interpolated) == [false, true, true, false])
    }

    @Test func departuresFollowCalendarAndCalendarDates() throws {
        // Monday 2024-06-10: the weekday service runs; HOLIDAY does not.
        let monday = try database.nextDepartures(fromStop: "S1", at: LocalDateTime(parsing: "2024-06-10T07:00"))
        #expect(monday.map(\.tripID) == ["T1", "NIGHT"])
        #expect(monday.map(\.headsign) == ["Norte", "Terminal Norte"])  // no trip_headsign: the last stop's name
        // Friday 2024-06-14: WK removed, the calendar_dates-only HOLIDAY service added.
        let holiday = try database.nextDepartures(fromStop: "S1", at: LocalDateTime(parsing: "2024-06-14T07:00"))
        #expect(holiday.map(\.tripID) == ["H1"])
        #expect(holiday.first?.routeType == RouteType(rawValue: 900))
        // Interpolated departure from S2.
        let s2 = try database.nextDepartures(fromStop: "S2", at: LocalDateTime(parsing: "2024-06-10T08:05"))
        #expect(s2.first?.tripID == "T1")
        #expect(s2.first?.departureTime == "08:10:00")
        #expect(s2.first?.interpolated == true)
        // The last stop of a trip has no departure.
        #expect(try database.nextDepartures(fromStop: "S4", at: LocalDateTime(parsing: "2024-06-10T00:00")).isEmpty)
    }

    @Test func tripsPastMidnightCountOnTheNextDay() throws {
        // Tuesday 00:05: Monday's NIGHT trip leaves S2 at 24:10:00, i.e. 00:10 on Tuesday.
        let tuesday = try database.nextDepartures(fromStop: "S2", at: LocalDateTime(parsing: "2024-06-11T00:05"))
        #expect(tuesday.first?.tripID == "NIGHT")
        #expect(tuesday.first?.departureTime == "24:10:00")
        #expect(tuesday.first?.serviceDate.description == "2024-06-10")
        #expect(tuesday.first?.departsAt.description == "2024-06-11T00:10:00")
        // Saturday 00:05: Friday's WK service was removed (calendar_dates), so no night trip.
        let saturday = try database.nextDepartures(fromStop: "S2", at: LocalDateTime(parsing: "2024-06-15T00:05"))
        #expect(saturday.isEmpty)
        // Monday 00:05: Sunday has no service.
        #expect(try database.nextDepartures(fromStop: "S2", at: LocalDateTime(parsing: "2024-06-10T00:05")).first?.tripID == "T1")
    }

    @Test func routesByBasicAndExtendedType() throws {
        #expect(try database.routes(ofType: .bus).map(\.routeID) == ["R1"])
        #expect(try database.routes(ofType: .tram).map(\.routeID) == ["R2"])  // 900 refines tram
        #expect(try database.routes(ofType: RouteType(rawValue: 900)).map(\.routeID) == ["R2"])
        #expect(try database.routes(ofType: .subway).map(\.routeID) == ["R3"])
        #expect(try database.routes(ofType: .ferry).isEmpty)
        #expect(throws: CaravanError.self) { try database.routes(ofType: RouteType(rawValue: 99)) }
    }

    @Test func searchFoldsAccentsAndMatchesPrefixes() throws {
        #expect(try database.searchStops("praca se").map(\.stopID) == ["S1"])
        #expect(try database.searchStops("PRAÇA DA SÉ").map(\.stopID) == ["S1"])
        #expect(try database.searchStops("estacao").map(\.stopID) == ["ST"])  // a station (location_type 1)
        #expect(try database.searchStops("rua augusta 12").map(\.stopID) == ["S2"])
        #expect(try database.searchStops("ORCHARD").map(\.stopID) == ["S3"])
        #expect(try database.searchStops("OR").map(\.stopID) == ["S3"])  // a prefix of "orchard", not an operator
        #expect(try database.searchStops("AND").isEmpty)
        #expect(try database.searchStops("term", limit: 1).map(\.stopID) == ["S4"])
        #expect(throws: CaravanError.self) { try database.searchStops("x", limit: 0) }
    }

    /// Inputs that break naive FTS5 queries. None may throw, and none may change meaning: each returns what its
    /// words (folded) return.
    static let hostileQueries: [String] = [
        "\"", "\"\"", "*", "-", "+", "^", ":", "(", ")", "NEAR(", "NEAR(a b)", "NEAR/3", "ORCHARD", "OR", "AND", "NOT",
        "orchard OR augusta", "orchard AND augusta", "NOT orchard", "-orchard", "orchard*", "\"orchard", "name:orchard",
        "stop_search:x", "{name}:orchard", "'; DROP TABLE stop; --", "%", "_", "\\", "🚌🚏", "🚌 orchard", "Praça\u{0000}Sé",
        "\u{200F}", "مُحَمَّد", String(repeating: "orchard road ", count: 800), String(repeating: "x", count: 10_000),
    ]

    @Test(arguments: hostileQueries)
    func hostileQueriesNeitherFailNorChangeMeaning(query: String) throws {
        let results = try database.searchStops(query)
        let words = TextFolding.tokens(in: query).joined(separator: " ")
        let expected = words.isEmpty ? [] : try database.searchStops(words)
        #expect(results == expected)
    }

    @Test func quotedOperatorsAreLiteral() throws {
        #expect(try database.searchStops("orchard OR augusta").isEmpty)  // every word must match: no stop has "or" and both
        #expect(try database.searchStops("NEAR(").isEmpty)
        #expect(try database.searchStops("'; DROP TABLE stop; --").isEmpty)
        #expect(try database.stop(id: "S3") != nil)
    }
}

@Suite("Read-only bundles")
struct ReadOnlyTests {
    @Test func writesFailWithAClearError() throws {
        let (path, _) = try importFeed(try writeFeed(fixtureFeed))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let database = try TransitDatabase(path: path)
        for sql in ["DELETE FROM stop", "INSERT INTO meta(key, value) VALUES ('x', 'y')", "CREATE TABLE t(x)", "DROP TABLE stop_time",
                    "INSERT INTO stop_search(rowid, name) VALUES (99, 'x')"] {
            do {
                try database.read { db in try db.execute(sql: sql) }
                Issue.record("write succeeded: \(sql)")
            } catch {
                #expect(error.code == .readOnlyDatabase, "\(sql): \(error)")
                #expect(error.message == "the transit bundle is read-only")
            }
        }
        // A raw GRDB write on a connection opened the way TransitDatabase opens it fails too.
        var configuration = Configuration()
        configuration.readonly = true
        let raw = try DatabaseQueue(path: path, configuration: configuration)
        #expect(throws: DatabaseError.self) { try raw.writeWithoutTransaction { db in try db.execute(sql: "DELETE FROM stop") } }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try database.stop(id: "S1")?.name == "Praça da Sé")
    }

    @Test func opensAReadOnlyFileAndRefusesOtherFiles() throws {
        let (path, _) = try importFeed(try writeFeed(fixtureFeed))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        #expect(try TransitDatabase(path: path).searchStops("orchard").count == 1)

        let other = try temporaryDirectory() + "/other.sqlite"
        let queue = try DatabaseQueue(path: other)
        try queue.write { db in try db.execute(sql: "CREATE TABLE stop(x)") }
        try queue.close()
        do {
            _ = try TransitDatabase(path: other)
            Issue.record("opened a database that is not a bundle")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message.contains("is not a Caravan transit bundle"))
        }
        let text = try temporaryDirectory() + "/text.sqlite"
        try Data("not sqlite".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: CaravanError.self) { try TransitDatabase(path: text) }
        do {
            _ = try TransitDatabase(path: "/nonexistent/transit.sqlite")
        } catch {
            #expect(error.code == .notFound)
        }
    }
}
