import CaravanCore
import Foundation
import Synchronization
import Testing
@testable import Transit
@testable import TransitSQLite

/// The repository's `../shared/data/<relative>`, or nil when it is absent.
func sharedDataFile(_ relative: String) -> String? {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let path = root.deletingLastPathComponent().appendingPathComponent("shared/data/" + relative).path
    return FileManager.default.fileExists(atPath: path) ? path : nil
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "caravan-transit-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Writes a feed directory from `files` (name → contents) and returns its path.
func writeFeed(_ files: [String: String]) throws -> String {
    let directory = try temporaryDirectory()
    for (name, text) in files {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
    }
    return directory
}

/// Imports `feed` into a fresh bundle; returns the bundle path and the summary.
func importFeed(_ feed: String) throws -> (String, GTFSImporter.Summary) {
    let output = try temporaryDirectory() + "/transit.sqlite"
    let summary = try GTFSImporter().run(feed: feed, output: output)
    return (output, summary)
}

/// The four real feeds, each imported once per test process.
enum RealFeeds {
    static let cache = Mutex<[String: (String, GTFSImporter.Summary)]>([:])

    /// Whether `../shared/data/gtfs` holds the four feeds; tests that need them are disabled (with that message)
    /// otherwise.
    static let available = ["cairns_translink_2014", "porto_alegre_eptc", "porto_alegre_trensurb", "saint_john_transit"]
        .allSatisfy { sharedDataFile("gtfs/\($0).zip") != nil }

    /// The bundle of `../shared/data/gtfs/<name>.zip`.
    static func bundle(_ name: String) throws -> (TransitDatabase, GTFSImporter.Summary) {
        guard let zip = sharedDataFile("gtfs/\(name).zip") else {
            throw CaravanError(.notFound, "../shared/data/gtfs/\(name).zip is absent")
        }
        let (path, summary) = try cache.withLock { cache in
            if let built = cache[name] { return built }
            let built = try importFeed(zip)
            cache[name] = built
            return built
        }
        return (try TransitDatabase(path: path), summary)
    }
}

/// A small feed exercising the awkward cases: a BOM, CRLF, quoted fields with commas and doubled quotes, extra
/// columns, a calendar_dates-only service, non-timepoint stops, a trip past midnight.
let fixtureFeed: [String: String] = [
    "agency.txt": "\u{FEFF}agency_id,agency_name,agency_url,agency_timezone,extra\r\nA,\"Test, \"\"Transit\"\"\",http://x,Europe/Lisbon,ignored\r\n",
    "stops.txt": """
        stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station
        S1,Praça da Sé,38.7,-9.1,,
        S2,"Rua Augusta, 12",38.71,-9.11,0,
        S3,Orchard Road,38.72,-9.12,0,
        S4,Terminal Norte,38.73,-9.13,0,
        ST,Estação Central,38.7,-9.1,1,

        """,
    "routes.txt": """
        route_id,agency_id,route_short_name,route_long_name,route_type
        R1,A,1,Linha Um,3
        R2,A,E,Elétrico,900
        R3,A,M,Metro,1

        """,
    "calendar.txt": """
        service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date
        WK,1,1,1,1,1,0,0,20240101,20241231

        """,
    "calendar_dates.txt": """
        service_id,date,exception_type
        WK,20240614,2
        HOLIDAY,20240614,1

        """,
    "trips.txt": """
        route_id,service_id,trip_id,trip_headsign
        R1,WK,T1,Norte
        R1,WK,NIGHT,
        R2,HOLIDAY,H1,Festa

        """,
    "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence,pickup_type,drop_off_type
        T1,08:00:00,08:00:00,S1,1,0,0
        T1,,,S2,2,0,0
        T1,,,S3,3,0,0
        T1,08:30:00,08:31:00,S4,4,0,0
        NIGHT,23:50:00,23:50:00,S1,1,,
        NIGHT,24:10:00,24:10:00,S2,2,,
        NIGHT,24:30:00,24:30:00,S4,3,,
        H1,10:00:00,10:00:00,S1,1,0,0
        H1,10:10:00,10:10:00,S3,2,0,0

        """,
]
