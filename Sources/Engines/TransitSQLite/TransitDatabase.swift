package import CaravanCore
import CaravanSQLite
import Foundation
package import GRDB
import GRDBSQLite
package import Transit

/// A transit bundle opened read-only: stop search, stops, routes, next departures and trips.
///
/// The bundle is opened with `SQLITE_OPEN_READONLY`; any write — through `read(_:)` or otherwise — fails with
/// `CaravanError` `.readOnlyDatabase`. A bundle is rebuilt with `caravan import gtfs`, never changed in place. It
/// needs no `-wal`/`-shm` files and no write access to its directory, so it opens from an app bundle or a read-only
/// volume. Reads are short (milliseconds) and synchronous; the type is `Sendable` and safe to share.
///
/// The four questions, as RPC-ready functions (arguments → result; every id is the feed's GTFS string id, and
/// each result item's `jsonValue` is the wire shape):
///
/// | RPC | Arguments | Result |
/// |---|---|---|
/// | `search_stops` | `query: String`, `limit: Int = 20` (1–1000) | `[TransitStop]`: `{stop_id, stop_code, stop_name, stop_lat, stop_lon, location_type, parent_station}`, best match first |
/// | `next_departures` | `stop_id: String`, `at: "YYYY-MM-DDTHH:MM"` (agency local time), `limit: Int = 10` (1–1000) | `[Departure]`: `{trip_id, route_id, route_short_name, route_long_name, route_type, headsign, departure_time, service_date, departs_at, stop_sequence, interpolated}`, in departure order |
/// | `routes_by_type` | `route_type: Int` (basic 0–7, 11, 12, or extended 100–1799) | `[TransitRoute]`: `{route_id, agency_id, route_short_name, route_long_name, route_type, route_color, route_text_color}` |
/// | `trip_stops` | `trip_id: String` | `[TripStop]`: `{stop_sequence, stop_id, stop_name, arrival_time, departure_time, interpolated, pickup_type, drop_off_type}`, in sequence |
///
/// Errors: `.notFound` for an unknown stop or trip id, `.invalidValue` for a bad limit, route type or time,
/// `.readOnlyDatabase` for a write, `.invalidFeed` when the file is not a transit bundle of this format.
package final class TransitDatabase: TransitQuestions {
    private let queue: DatabaseQueue
    /// The agency time zone (IANA name) in which departures' dates and times are given.
    package let timezone: String

    /// Opens the bundle at `path` read-only.
    ///
    /// - Throws: `CaravanError` `.notFound` when there is no file, `.invalidFeed` when it is not a transit bundle
    ///   (another SQLite file, another format version, not SQLite at all).
    package init(path: String) throws(CaravanError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CaravanError(.notFound, "no transit bundle at \(path)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "transit"
        configuration.prepareDatabase { db in db.add(tokenizer: FoldingTokenizer.self) }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            let (application, version, zone) = try queue.read { db in
                (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                 try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
                 try db.tableExists("meta") ? try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'timezone'") : nil)
            }
            guard application == TransitSchema.applicationID else {
                throw CaravanError(.invalidFeed, "\(path) is not a Caravan transit bundle", hint: "build one with `caravan import gtfs FEED --out FILE`")
            }
            guard version == TransitSchema.formatVersion else {
                throw CaravanError(.invalidFeed, "\(path) is a transit bundle of format \(version); this build reads format \(TransitSchema.formatVersion)",
                                   hint: "rebuild it with `caravan import gtfs`")
            }
            timezone = zone ?? ""
        } catch let error as CaravanError {
            throw error
        } catch {
            throw CaravanError(.invalidFeed, "\(path) cannot be opened as a transit bundle", internalDetail: "\(error)")
        }
    }

    /// Lends the read-only connection to `body` (for questions this type does not answer). A write inside fails
    /// with `.readOnlyDatabase`; any other SQLite failure becomes `.internalFailure` (detail in `internalDetail`).
    package func read<T>(_ body: (Database) throws -> T) throws(CaravanError) -> T {
        do {
            return try queue.read(body)
        } catch let error as CaravanError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_AUTH {
            throw CaravanError(.readOnlyDatabase, "the transit bundle is read-only",
                               hint: "rebuild it with `caravan import gtfs`; it is never written in place", internalDetail: "\(error)")
        } catch {
            throw CaravanError(.internalFailure, "the transit bundle could not be read", internalDetail: "\(error)")
        }
    }

    // MARK: search_stops

    /// Stops whose name matches every word of `query` (folded as `TextFolding` does; the last word as a prefix, for
    /// type-ahead), best match first (bm25, then shorter names). Any input is safe: it is tokenized and every token
    /// quoted, so `OR`, `NEAR(`, `"`, `*` are plain text. A query with no word returns no stop.
    /// Stops and stations are searched; entrances, nodes and boarding areas are not.
    package func searchStops(_ query: String, limit: Int = 20) throws(CaravanError) -> [TransitStop] {
        try Self.check(limit: limit)
        guard let pattern = FTS5Query.typeAhead(query) else { return [] }
        return try read { db in
            try Self.stops(db, sql: """
                SELECT d.stop_id, s.code, s.name, s.lat, s.lon, s.location_type, p.stop_id
                FROM stop_search
                JOIN stop s ON s.sid = stop_search.rowid
                JOIN dict_stop d ON d.sid = s.sid
                LEFT JOIN dict_stop p ON p.sid = s.parent_sid
                WHERE stop_search MATCH ?
                ORDER BY stop_search.rank, length(s.name), s.sid
                LIMIT ?
                """, arguments: [pattern, limit])
        }
    }

    /// The stop with GTFS id `stopID`, or nil.
    package func stop(id stopID: String) throws(CaravanError) -> TransitStop? {
        try read { db in
            try Self.stops(db, sql: """
                SELECT d.stop_id, s.code, s.name, s.lat, s.lon, s.location_type, p.stop_id
                FROM dict_stop d JOIN stop s ON s.sid = d.sid LEFT JOIN dict_stop p ON p.sid = s.parent_sid
                WHERE d.stop_id = ?
                """, arguments: [stopID]).first
        }
    }

    // MARK: routes_by_type

    /// The routes of `type`, by short name then long name. A basic type also returns the routes of the extended
    /// types that refine it (asking for `3` bus returns `700` bus service and `200` coach routes too); an extended
    /// type returns exactly that type.
    package func routes(ofType type: RouteType) throws(CaravanError) -> [TransitRoute] {
        guard type.isKnown else {
            throw CaravanError(.invalidValue, "route_type \(type.rawValue) is not a GTFS route type", hint: "basic 0–7, 11, 12 or extended 100–1799")
        }
        let rows = try read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.route_id, a.agency_id, r.short_name, r.long_name, r.type, r.color, r.text_color
                FROM route r JOIN dict_route d ON d.rid = r.rid LEFT JOIN agency a ON a.aid = r.aid
                WHERE r.type = ? OR (? AND r.type >= 100)
                ORDER BY r.short_name, r.long_name, r.rid
                """, arguments: [type.rawValue, type.isBasic])
        }
        return rows.compactMap { row in
            let routeType = RouteType(rawValue: row[4])
            guard routeType == type || (type.isBasic && routeType.basic == type) else { return nil }
            return TransitRoute(routeID: row[0], agencyID: row[1], shortName: row[2], longName: row[3], type: routeType,
                                color: row[5], textColor: row[6])
        }
    }

    // MARK: next_departures

    /// The next `limit` departures from the stop with GTFS id `stopID` at or after the local time `at`, in
    /// departure order.
    ///
    /// A departure is a stop time where a rider can board: not the trip's last stop (it only arrives there) and
    /// `pickup_type` ≠ 1. It counts when its trip's service runs on `at.date` (calendar.txt weekday within the
    /// start/end dates, minus calendar_dates.txt removals, plus additions) and it leaves at or after `at`, or when the
    /// service runs on the day before and the time is past midnight (`25:10:00` on the day before is 01:10 today).
    /// Trips of the next service day are not included.
    ///
    /// - Throws: `.notFound` when the stop does not exist; `.invalidValue` for a limit outside 1–1000.
    package func nextDepartures(fromStop stopID: String, at time: LocalDateTime, limit: Int = 10) throws(CaravanError) -> [Departure] {
        try Self.check(limit: limit)
        let today = time.date, yesterday = time.date.previous
        let rows = try read { db -> [Row]? in
            guard let sid = try Int.fetchOne(db.cachedStatement(sql: "SELECT sid FROM dict_stop WHERE stop_id = ?"), arguments: [stopID]) else { return nil }
            let arguments: StatementArguments = [
                "sid": sid, "t": time.secondsAfterMidnight, "limit": limit,
                "d": today.number, "dbit": 1 << today.weekday, "p": yesterday.number, "pbit": 1 << yesterday.weekday,
            ]
            return try Row.fetchAll(db.cachedStatement(sql: Self.departuresSQL), arguments: arguments)
        }
        guard let rows else { throw CaravanError(.notFound, "no stop with stop_id \"\(stopID.prefix(100))\"") }
        return rows.map { row in
            let departure: Int = row[6]
            let dayBefore: Bool = row[7]
            return Departure(
                tripID: row[0], routeID: row[1], routeShortName: row[2], routeLongName: row[3], routeType: RouteType(rawValue: row[4]),
                headsign: row[5] ?? "", departureTime: GTFSTime.text(departure), serviceDate: dayBefore ? yesterday : today,
                departsAt: LocalDateTime(date: dayBefore ? yesterday : today, secondsAfterMidnight: departure),
                stopSequence: row[8], interpolated: row[9])
        }
    }

    /// Services running on day `:d` (weekday bit `:dbit`) and on the day before (`:p`, `:pbit`); boardable stop
    /// times at the stop after the time, both days merged by actual time; then names, headsigns and ids.
    static let departuresSQL = """
        WITH
        today(svc) AS (
            SELECT svc FROM calendar WHERE start_date <= :d AND end_date >= :d AND (days & :dbit) != 0
            EXCEPT SELECT svc FROM calendar_date WHERE date = :d AND exception_type = 2
            UNION SELECT svc FROM calendar_date WHERE date = :d AND exception_type = 1
        ),
        yesterday(svc) AS (
            SELECT svc FROM calendar WHERE start_date <= :p AND end_date >= :p AND (days & :pbit) != 0
            EXCEPT SELECT svc FROM calendar_date WHERE date = :p AND exception_type = 2
            UNION SELECT svc FROM calendar_date WHERE date = :p AND exception_type = 1
        ),
        hits(tid, seq, departure, actual, day_before, interpolated, hid) AS (
            SELECT st.tid, st.seq, st.departure, st.departure, 0, st.flags & 1, st.hid
            FROM stop_time st JOIN trip t ON t.tid = st.tid
            WHERE st.sid = :sid AND st.boards = 1 AND st.departure >= :t AND t.svc IN today
            UNION ALL
            SELECT st.tid, st.seq, st.departure, st.departure - 86400, 1, st.flags & 1, st.hid
            FROM stop_time st JOIN trip t ON t.tid = st.tid
            WHERE st.sid = :sid AND st.boards = 1 AND st.departure >= :t + 86400 AND t.svc IN yesterday
            ORDER BY 4, 1
            LIMIT :limit
        )
        SELECT dt.trip_id, dr.route_id, r.short_name, r.long_name, r.type,
               COALESCE(sh.text, th.text, last.name), h.departure, h.day_before, h.seq, h.interpolated
        FROM hits h
        JOIN trip t ON t.tid = h.tid
        JOIN route r ON r.rid = t.rid
        JOIN dict_trip dt ON dt.tid = h.tid
        JOIN dict_route dr ON dr.rid = t.rid
        LEFT JOIN headsign sh ON sh.hid = h.hid
        LEFT JOIN headsign th ON th.hid = t.hid
        LEFT JOIN stop last ON last.sid = t.last_sid
        ORDER BY h.actual, h.tid
        """

    // MARK: trip_stops

    /// The stops of the trip with GTFS id `tripID`, in sequence, with their times.
    ///
    /// - Throws: `.notFound` when the trip does not exist.
    package func tripStops(tripID: String) throws(CaravanError) -> [TripStop] {
        let rows = try read { db -> [Row]? in
            guard let tid = try Int.fetchOne(db.cachedStatement(sql: "SELECT tid FROM dict_trip WHERE trip_id = ?"), arguments: [tripID]) else { return nil }
            return try Row.fetchAll(db.cachedStatement(sql: """
                SELECT st.seq, d.stop_id, s.name, COALESCE(st.arrival, st.departure), st.departure, st.flags & 1, (st.flags >> 1) & 3, (st.flags >> 3) & 3
                FROM stop_time st JOIN stop s ON s.sid = st.sid JOIN dict_stop d ON d.sid = st.sid
                WHERE st.tid = ?
                ORDER BY st.seq
                """), arguments: [tid])
        }
        guard let rows else { throw CaravanError(.notFound, "no trip with trip_id \"\(tripID.prefix(100))\"") }
        return rows.map { row in
            TripStop(stopSequence: row[0], stopID: row[1], stopName: row[2], arrivalTime: GTFSTime.text(row[3]),
                     departureTime: GTFSTime.text(row[4]), interpolated: row[5], pickupType: row[6], dropOffType: row[7])
        }
    }

    // MARK: Helpers

    private static func check(limit: Int) throws(CaravanError) {
        guard (1...1000).contains(limit) else {
            throw CaravanError(.invalidValue, "limit \(limit) is outside 1–1000")
        }
    }

    private static func stops(_ db: Database, sql: String, arguments: StatementArguments) throws -> [TransitStop] {
        // Cached statements: compiling the search join costs more than running it.
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            TransitStop(stopID: row[0], code: row[1], name: row[2], latitude: row[3], longitude: row[4], locationType: row[5], parentStopID: row[6])
        }
    }
}
