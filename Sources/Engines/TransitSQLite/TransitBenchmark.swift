package import CaravanCore
import GRDB
package import Transit

/// The in-process timing harness of BENCHMARKS.md ("Transit"): the same questions asked of a transit bundle and
/// of the straightforward raw-GTFS SQLite schema (`bench/transit/raw_schema.py`: string ids, text times, no
/// dictionary tables, no FTS), one query at a time, in one process, through GRDB on the same SQLite library.
///
/// Stop search on the raw schema is `stop_name LIKE '%word%'` for every word (what an app does without FTS);
/// departures are the same calendar/calendar_dates logic over the string columns.
package enum TransitBenchmark {
    /// Timings in microseconds and the mean number of results, per question and schema.
    package struct Report: Sendable {
        package var figures: [(name: String, p50: Double, p90: Double, meanResults: Double)] = []

        package var jsonValue: JSONValue {
            .array(figures.map { figure in
                .object([("name", .string(figure.name)), ("p50_us", .double(figure.p50)), ("p90_us", .double(figure.p90)),
                         ("mean_results", .double(figure.meanResults))])
            })
        }
    }

    /// Runs `samples` stop searches and `samples` departure questions (on `date`, 06:00–21:59) against both files.
    /// Queries are drawn from the raw schema's stops with a fixed seed, so reruns ask the same questions.
    /// With `timedStopsOnly`, departure questions are asked only at stops where the feed gives at least one time
    /// (the raw schema cannot answer at the others: it has no interpolation).
    package static func run(bundle: String, raw: String, date: ServiceDate, samples: Int, seed: UInt64, timedStopsOnly: Bool = false) throws -> Report {
        let transit = try TransitDatabase(path: bundle)
        var configuration = Configuration()
        configuration.readonly = true
        let rawQueue = try DatabaseQueue(path: raw, configuration: configuration)
        let questions = try Questions(raw: rawQueue, samples: samples, seed: seed, timedStopsOnly: timedStopsOnly)
        var report = Report()
        try measure("search_stops bundle (FTS5, folded, prefix)", samples, into: &report) { try transit.searchStops(questions.searches[$0], limit: 20).count }
        try measure("search_stops raw (LIKE %word% per word)", samples, into: &report) { index in
            let words = questions.searches[index].split(separator: " ").map { "%\($0)%" }
            let sql = "SELECT stop_id, stop_name FROM stops WHERE " + words.map { _ in "stop_name LIKE ?" }.joined(separator: " AND ") + " LIMIT 20"
            return try rawQueue.read { db in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(words)).count }
        }
        try measure("next_departures bundle", samples, into: &report) { index in
            try transit.nextDepartures(fromStop: questions.departures[index].stop,
                                       at: LocalDateTime(date: date, secondsAfterMidnight: questions.departures[index].time), limit: 10).count
        }
        let rawSQL = rawDeparturesSQL(on: date)
        try measure("next_departures raw", samples, into: &report) { index in
            let time = questions.departures[index].time
            let arguments: StatementArguments = ["d": String(date.number), "p": String(date.previous.number), "stop": questions.departures[index].stop,
                                                 "t": GTFSTime.text(time), "t24": GTFSTime.text(time + 86400)]
            return try rawQueue.read { db in try Row.fetchAll(db.cachedStatement(sql: rawSQL), arguments: arguments).count }
        }
        return report
    }

    /// The questions asked, drawn with a fixed-seed generator from the raw schema's stops.
    struct Questions {
        var searches: [String] = []
        var departures: [(stop: String, time: Int)] = []

        init(raw: DatabaseQueue, samples: Int, seed: UInt64, timedStopsOnly: Bool) throws {
            let stops = try raw.read { db in
                try Row.fetchAll(db, sql: "SELECT stop_id, stop_name FROM stops WHERE stop_name IS NOT NULL ORDER BY stop_id")
                    .map { (id: $0[0] as String, name: $0[1] as String) }
            }
            let departureStops = timedStopsOnly
                ? try raw.read { db in
                    try String.fetchAll(db, sql: "SELECT DISTINCT stop_id FROM stop_times WHERE departure_time IS NOT NULL ORDER BY stop_id")
                }
                : stops.map(\.id)
            var random = seed
            func next(_ bound: Int) -> Int {
                random = random &* 6364136223846793005 &+ 1442695040888963407
                return Int((random >> 33) % UInt64(bound))
            }
            for _ in 0..<samples {
                let words = stops[next(stops.count)].name.split(separator: " ").filter { $0.count >= 3 }
                if words.count >= 2 { searches.append("\(words[0]) \(words[1].prefix(3))") } else { searches.append(String((words.first.map { String($0) } ?? "rua").prefix(4))) }
                departures.append((departureStops[next(departureStops.count)], 6 * 3600 + next(16 * 3600)))
            }
        }
    }

    /// Times `samples` runs of `body` (after a warm-up) and appends p50, p90 and the mean result count to `report`.
    static func measure(_ name: String, _ samples: Int, into report: inout Report, _ body: (Int) throws -> Int) rethrows {
        for index in 0..<min(20, samples) { _ = try body(index) }  // warm-up
        var timings: [Double] = []
        var results = 0
        for index in 0..<samples {
            let start = ContinuousClock.now
            results += try body(index)
            let elapsed = ContinuousClock.now - start
            timings.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
        }
        timings.sort()
        report.figures.append((name, timings[timings.count / 2], timings[timings.count * 9 / 10], Double(results) / Double(samples)))
    }

    /// Next departures over the raw schema: today's and yesterday's services (calendar plus exceptions), string
    /// times turned into seconds, the trip's last stop left out.
    static func rawDeparturesSQL(on date: ServiceDate) -> String {
        let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let today = date, yesterday = date.previous
        return """
            WITH
            today AS (SELECT service_id FROM calendar WHERE start_date <= :d AND end_date >= :d AND \(weekdays[today.weekday]) = 1
                      EXCEPT SELECT service_id FROM calendar_dates WHERE date = :d AND exception_type = 2
                      UNION SELECT service_id FROM calendar_dates WHERE date = :d AND exception_type = 1),
            yesterday AS (SELECT service_id FROM calendar WHERE start_date <= :p AND end_date >= :p AND \(weekdays[yesterday.weekday]) = 1
                      EXCEPT SELECT service_id FROM calendar_dates WHERE date = :p AND exception_type = 2
                      UNION SELECT service_id FROM calendar_dates WHERE date = :p AND exception_type = 1)
            SELECT trip_id, route_short_name, trip_headsign, departure_time, seconds FROM (
                SELECT st.trip_id, r.route_short_name, t.trip_headsign, st.departure_time,
                       substr(st.departure_time, 1, 2) * 3600 + substr(st.departure_time, 4, 2) * 60 + substr(st.departure_time, 7, 2) AS seconds
                FROM stop_times st JOIN trips t ON t.trip_id = st.trip_id JOIN routes r ON r.route_id = t.route_id
                WHERE st.stop_id = :stop AND st.departure_time >= :t AND t.service_id IN today
                  AND st.stop_sequence < (SELECT max(stop_sequence) FROM stop_times WHERE trip_id = st.trip_id)
                UNION ALL
                SELECT st.trip_id, r.route_short_name, t.trip_headsign, st.departure_time,
                       substr(st.departure_time, 1, 2) * 3600 + substr(st.departure_time, 4, 2) * 60 + substr(st.departure_time, 7, 2) - 86400
                FROM stop_times st JOIN trips t ON t.trip_id = st.trip_id JOIN routes r ON r.route_id = t.route_id
                WHERE st.stop_id = :stop AND st.departure_time >= :t24 AND t.service_id IN yesterday
                  AND st.stop_sequence < (SELECT max(stop_sequence) FROM stop_times WHERE trip_id = st.trip_id)
            ) ORDER BY seconds LIMIT 10
            """
    }
}
