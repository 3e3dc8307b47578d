import ArgumentParser
package import CaravanCLI
import CaravanCore
import Foundation
import Transit
import TransitSQLite

/// The transit app's commands in a `caravan` binary: `caravan import gtfs`, `caravan transit …`, and its bundle for
/// `caravan serve --bundle transit=BUNDLE` (the search_stops, next_departures, routes_by_type and trip_stops RPCs).
package enum TransitCommands {
    package static let commands = AppCommands(
        top: [TransitCommand.self], imports: [ImportGTFS.self],
        bundles: [AppBundle(name: "transit") { path in TransitFunctions.module(database: try TransitDatabase(path: path)) }]
    )
}

/// `caravan import gtfs FEED --out BUNDLE`: builds a read-only transit bundle from a GTFS feed.
struct ImportGTFS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gtfs",
        abstract: "Build a transit bundle (read-only SQLite) from a GTFS feed (.zip or directory).",
        discussion: "Bad rows are reported (file:line: reason) and skipped; a feed that cannot be read stops the import with an error naming the file and line."
    )
    @Argument(help: "The GTFS feed: a .zip archive or a directory of .txt files.") var feed: String
    @Option(name: .customLong("out"), help: "The bundle to write (replaced if it exists).") var output: String
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws {
        let bar = ProgressBar()
        let started = ContinuousClock.now
        let summary = try GTFSImporter().run(feed: feed, output: output) { progress in
            bar.draw(progress.file.padding(toLength: 16, withPad: " ", startingAt: 0), done: progress.bytesRead, total: progress.byteCount,
                     status: "\(progress.bytesRead * 100 / max(1, progress.byteCount))%")
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let counts: [(String, Int)] = [
            ("agencies", summary.agencies), ("stops", summary.stops), ("routes", summary.routes), ("services", summary.services),
            ("calendar", summary.calendars), ("calendar_dates", summary.calendarDates), ("trips", summary.trips),
            ("stop_times", summary.stopTimes), ("interpolated_stop_times", summary.interpolatedStopTimes),
            ("shapes", summary.shapes), ("shape_points", summary.shapePoints),
        ]
        if json {
            let skipped = summary.skipped.map { problem in
                JSONValue.object([("file", .string(problem.file)), ("line", .integer(Int64(problem.line))), ("reason", .string(problem.reason))])
            }
            writeStandardOutput(JSONValue.object(counts.map { ($0.0, JSONValue.integer(Int64($0.1))) } + [
                ("skipped", .integer(Int64(summary.skipped.count))),
                ("skipped_rows", .array(skipped)),
                ("notes", .array(summary.notes.map(JSONValue.string))),
                ("timezone", .string(summary.timezone)),
                ("source_bytes", .integer(Int64(summary.sourceBytes))),
                ("bundle_bytes", .integer(Int64(summary.bundleBytes))),
                ("seconds", .double((seconds * 1000).rounded() / 1000)),
            ]).jsonText + "\n")
            return
        }
        let shown = 50
        for problem in summary.skipped.prefix(shown) { writeStandardOutput("skipped \(problem)\n") }
        if summary.skipped.count > shown { writeStandardOutput("… and \(summary.skipped.count - shown) more skipped rows (--json lists all)\n") }
        for note in summary.notes.prefix(shown) { writeStandardOutput("note: \(note)\n") }
        writeStandardOutput(counts.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "\n")
        writeStandardOutput("skipped \(summary.skipped.count) rows; time zone \(summary.timezone)\n")
        writeStandardOutput("bundle \(output): \(megabytes(summary.bundleBytes)) (CSV read: \(megabytes(summary.sourceBytes))) in \(String(format: "%.2f", seconds)) s\n")
    }

    private func megabytes(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1_000_000) }
}

/// `caravan transit …`: questions answered from a transit bundle.
struct TransitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transit",
        abstract: "Ask a transit bundle: stop search, next departures, routes by type, a trip's stops.",
        subcommands: [TransitSearch.self, TransitDepartures.self, TransitRoutes.self, TransitTrip.self, TransitBench.self]
    )
}

struct TransitSearch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Search stops by name (prefix on the last word).")
    @Argument(help: "The transit bundle.") var bundle: String
    @Argument(help: "The words to search for.") var query: String
    @Option(help: "Most stops to return (default 20).") var limit = 20
    @Flag(help: "Print a JSON array.") var json = false

    func run() async throws {
        let stops = try TransitDatabase(path: bundle).searchStops(query, limit: limit)
        if json { return writeStandardOutput(JSONValue.array(stops.map(\.jsonValue)).jsonText + "\n") }
        for stop in stops { writeStandardOutput("\(stop.stopID)\t\(stop.name)\n") }
    }
}

struct TransitDepartures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "departures", abstract: "Next departures from a stop at a local date and time.")
    @Argument(help: "The transit bundle.") var bundle: String
    @Option(help: "The GTFS stop_id.") var stop: String
    @Option(help: "Local date and time of the agency: YYYY-MM-DDTHH:MM.") var at: String
    @Option(help: "Most departures to return (default 10).") var limit = 10
    @Flag(help: "Print a JSON array.") var json = false

    func run() async throws {
        let time = try LocalDateTime(parsing: at)
        let departures = try TransitDatabase(path: bundle).nextDepartures(fromStop: stop, at: time, limit: limit)
        if json { return writeStandardOutput(JSONValue.array(departures.map(\.jsonValue)).jsonText + "\n") }
        for departure in departures {
            let route = departure.routeShortName ?? departure.routeLongName ?? departure.routeID
            writeStandardOutput("\(departure.departureTime)\t\(route)\t\(departure.headsign)\t\(departure.tripID)\(departure.interpolated ? "\t(interpolated)" : "")\n")
        }
    }
}

struct TransitRoutes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "routes", abstract: "Routes of a GTFS route_type (basic types include their extended types).")
    @Argument(help: "The transit bundle.") var bundle: String
    @Option(name: .customLong("type"), help: "The route_type (0–7, 11, 12, or 100–1799).") var routeType: Int
    @Flag(help: "Print a JSON array.") var json = false

    func run() async throws {
        let routes = try TransitDatabase(path: bundle).routes(ofType: RouteType(rawValue: routeType))
        if json { return writeStandardOutput(JSONValue.array(routes.map(\.jsonValue)).jsonText + "\n") }
        for route in routes { writeStandardOutput("\(route.routeID)\t\(route.shortName ?? "")\t\(route.longName ?? "")\n") }
    }
}

struct TransitTrip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "trip", abstract: "The stops of a trip, in sequence.")
    @Argument(help: "The transit bundle.") var bundle: String
    @Argument(help: "The GTFS trip_id.") var trip: String
    @Flag(help: "Print a JSON array.") var json = false

    func run() async throws {
        let stops = try TransitDatabase(path: bundle).tripStops(tripID: trip)
        if json { return writeStandardOutput(JSONValue.array(stops.map(\.jsonValue)).jsonText + "\n") }
        for stop in stops { writeStandardOutput("\(stop.stopSequence)\t\(stop.departureTime)\t\(stop.stopID)\t\(stop.stopName)\n") }
    }
}

/// `caravan transit bench`: the timing harness of BENCHMARKS.md (hidden; see bench/transit/run.sh).
struct TransitBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Time stop search and departures: bundle vs raw GTFS schema.",
                                                    shouldDisplay: false)
    @Argument(help: "The transit bundle.") var bundle: String
    @Option(help: "The raw-schema database (bench/transit/raw_schema.py).") var raw: String
    @Option(help: "The service date for departures (YYYYMMDD).") var date: Int
    @Option(help: "Questions of each kind.") var samples = 500
    @Option(help: "Seed of the question generator.") var seed: UInt64 = 1
    @Flag(name: .customLong("timed-stops-only"), help: "Ask departures only at stops the feed gives a time for.") var timedStopsOnly = false

    func run() async throws {
        guard let day = ServiceDate(date) else { throw ValidationError("--date must be YYYYMMDD") }
        let report = try TransitBenchmark.run(bundle: bundle, raw: raw, date: day, samples: max(1, samples), seed: seed, timedStopsOnly: timedStopsOnly)
        writeStandardOutput(report.jsonValue.jsonText + "\n")
    }
}
