import CaravanCore
import CaravanSQLite
import Foundation
import GRDB
import GRDBSQLite

/// Builds a transit bundle (see `TransitSchema`) from a GTFS feed, a `.zip` or a directory.
///
/// Reads `agency.txt`, `stops.txt`, `routes.txt`, `trips.txt`, `stop_times.txt` (required), `calendar.txt` and/or
/// `calendar_dates.txt` (at least one), and `shapes.txt` when present; other files are ignored.
///
/// What stops the import, with an error naming the file (and line): a missing required file, a file without a
/// header or without a required column, a NUL byte (a binary file or header-less UTF-16), an unterminated quoted
/// field, no agency time zone, no stop, trip or stop time left. What does not: a bad row — an unknown reference,
/// a duplicate id, a value that does not parse — is reported (file, line, reason) in `Summary.skipped` and left
/// out. Files that are not UTF-8 are read as Windows-1252, with a note naming the file and line.
///
/// The bundle is written to a temporary file next to `output` and renamed over it at the end, so a failed
/// import never leaves a half-written bundle; it is compacted (`VACUUM`) and left in rollback-journal mode, so it
/// opens read-only anywhere (no `-wal`/`-shm` files are needed).
public struct GTFSImporter: Sendable {
    /// A row that was skipped, or a trip whose stop times were: file, line (1-based, the header is line 1) and reason.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public let file: String
        public let line: Int
        public let reason: String
        public var description: String { "\(file):\(line): \(reason)" }
    }

    /// What an import did.
    public struct Summary: Sendable {
        public var agencies = 0
        public var stops = 0
        public var routes = 0
        /// Distinct service ids (from calendar.txt and calendar_dates.txt).
        public var services = 0
        public var calendars = 0
        public var calendarDates = 0
        public var trips = 0
        public var stopTimes = 0
        /// Stop times whose time the feed left empty and the importer interpolated.
        public var interpolatedStopTimes = 0
        public var shapes = 0
        public var shapePoints = 0
        /// Rows reported and skipped.
        public var skipped: [Problem] = []
        /// Observations that skipped nothing (a file transcoded, a reference dropped).
        public var notes: [String] = []
        /// The agency time zone (`agency_timezone` of the first agency).
        public var timezone = ""
        /// Bytes of the feed's CSV files read (uncompressed).
        public var sourceBytes = 0
        /// Size of the bundle written.
        public var bundleBytes = 0
    }

    /// Progress through the feed: the file being read and the bytes of it read so far.
    public struct Progress: Sendable {
        public let file: String
        public let bytesRead: Int
        public let byteCount: Int
    }

    public init() {}

    /// Imports the feed at `feed` (a `.zip` or a directory) into a new bundle at `output` (replaced if it exists).
    ///
    /// - Throws: `CaravanError` `.invalidFeed` when the feed cannot be imported (the message names file and line),
    ///   `.internalFailure` when the bundle cannot be written.
    public func run(feed: String, output: String, progress: @escaping (Progress) -> Void = { _ in }) throws(CaravanError) -> Summary {
        let source = try GTFSSource(path: feed)
        for required in ["agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt"] where !source.fileNames.contains(required) {
            throw CaravanError(.invalidFeed, "the feed has no \(required) (a required GTFS file)")
        }
        if !source.fileNames.contains("calendar.txt") && !source.fileNames.contains("calendar_dates.txt") {
            throw CaravanError(.invalidFeed, "the feed has neither calendar.txt nor calendar_dates.txt (one is required)")
        }
        let temporary = output + ".partial-\(getpid())"
        removeFile(temporary)
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in db.add(tokenizer: FoldingTokenizer.self) }
            let queue = try DatabaseQueue(path: temporary, configuration: configuration)
            var build = BundleBuild(source: source, progress: progress)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
                try db.execute(sql: "PRAGMA application_id = \(TransitSchema.applicationID); PRAGMA user_version = \(TransitSchema.formatVersion)")
                try db.inTransaction {
                    for statement in TransitSchema.statements { try db.execute(sql: statement) }
                    try build.load(db)
                    for statement in TransitSchema.lateIndexes { try db.execute(sql: statement) }
                    try db.execute(sql: "INSERT INTO stop_search(stop_search) VALUES('optimize')")
                    try db.execute(sql: "ANALYZE")
                    return .commit
                }
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "VACUUM")
            }
            try queue.close()
            guard rename(temporary, output) == 0 else {
                throw CaravanError(.internalFailure, "the bundle cannot be written to \(output)", internalDetail: "rename errno \(errno)")
            }
            var summary = build.summary
            let attributes = try? FileManager.default.attributesOfItem(atPath: output)  // size is informative only
            summary.bundleBytes = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            return summary
        } catch let error as CaravanError {
            removeFile(temporary)
            throw error
        } catch {
            removeFile(temporary)
            throw CaravanError(.internalFailure, "the bundle cannot be written to \(output)", internalDetail: "\(error)")
        }
    }

    private func removeFile(_ path: String) {
        // A leftover temporary file from a failed run: nothing to report when there is none.
        if FileManager.default.fileExists(atPath: path) { _ = unlink(path) }
    }
}

/// One build: the id dictionaries and the summary, filled file by file inside the import transaction.
private struct BundleBuild {
    let source: GTFSSource
    let progress: (GTFSImporter.Progress) -> Void
    var summary = GTFSImporter.Summary()

    var agencyIDs: [String: Int] = [:]
    var stopIDs: [String: Int] = [:]
    var stopNames: [String] = []
    var routeIDs: [String: Int] = [:]
    var serviceIDs: [String: Int] = [:]
    var shapeIDs: [String: Int] = [:]
    var tripIDs: [String: Int] = [:]
    var headsigns: [String: Int] = [:]

    init(source: GTFSSource, progress: @escaping (GTFSImporter.Progress) -> Void) {
        self.source = source
        self.progress = progress
    }

    mutating func load(_ db: Database) throws {
        try loadAgencies(db)
        try loadStops(db)
        try loadRoutes(db)
        try loadCalendars(db)
        try loadShapes(db)
        let trips = try readTrips()
        try loadStopTimes(db, trips: trips)
        guard summary.stopTimes > 0 else { throw CaravanError(.invalidFeed, "stop_times.txt: no valid stop time (see the skipped rows)") }
        try writeMeta(db)
    }

    // MARK: Files

    mutating func open(_ file: String, required: [String]) throws(CaravanError) -> CSVTable? {
        guard let raw = try source.contents(of: file) else { return nil }
        summary.sourceBytes += raw.count
        let text = try FeedText.decode(raw, file: file)
        if let note = text.note { summary.notes.append(note) }
        return try CSVTable(text: text, file: file, required: required)
    }

    mutating func skip(_ table: CSVTable, _ record: CSVRecord, _ reason: String) {
        summary.skipped.append(GTFSImporter.Problem(file: table.file, line: record.line, reason: reason))
    }

    func report(_ table: CSVTable, _ count: Int) {
        if count % 8192 == 0 {
            progress(GTFSImporter.Progress(file: table.file, bytesRead: table.reader.position, byteCount: table.reader.byteCount))
        }
    }

    func finish(_ table: CSVTable) {
        progress(GTFSImporter.Progress(file: table.file, bytesRead: table.reader.byteCount, byteCount: table.reader.byteCount))
    }

    // MARK: agency.txt

    mutating func loadAgencies(_ db: Database) throws {
        guard var table = try open("agency.txt", required: ["agency_name", "agency_timezone"]) else { return }
        let insert = try RawInsert(db, "INSERT INTO agency(aid, agency_id, name, url, timezone, lang, phone) VALUES (?,?,?,?,?,?,?)")
        let id = table.column("agency_id"), name = table.column("agency_name"), url = table.column("agency_url")
        let zone = table.column("agency_timezone"), lang = table.column("agency_lang"), phone = table.column("agency_phone")
        while let record = try table.next() {
            let agencyID = record[id]
            guard !record[name].isEmpty else { skip(table, record, "agency_name is empty"); continue }
            guard !record[zone].isEmpty else { skip(table, record, "agency_timezone is empty"); continue }
            guard agencyIDs[agencyID] == nil else { skip(table, record, "duplicate agency_id \"\(agencyID)\""); continue }
            let aid = agencyIDs.count + 1
            agencyIDs[agencyID] = aid
            if summary.timezone.isEmpty {
                summary.timezone = record[zone]
            } else if summary.timezone != record[zone] {
                summary.notes.append("agency.txt:\(record.line): agency_timezone \(record[zone]) differs from \(summary.timezone); times are read in \(summary.timezone)")
            }
            try insert.run(.int(aid), .text(agencyID.isEmpty ? nil : agencyID), .text(record[name]), .text(record[url].nilIfEmpty),
                           .text(record[zone]), .text(record[lang].nilIfEmpty), .text(record[phone].nilIfEmpty))
        }
        summary.agencies = agencyIDs.count
        guard summary.agencies > 0 else { throw CaravanError(.invalidFeed, "agency.txt: no valid agency (an agency_timezone is required)") }
    }

    // MARK: stops.txt

    mutating func loadStops(_ db: Database) throws {
        guard var table = try open("stops.txt", required: ["stop_id"]) else { return }
        let id = table.column("stop_id"), code = table.column("stop_code"), name = table.column("stop_name")
        let lat = table.column("stop_lat"), lon = table.column("stop_lon"), type = table.column("location_type")
        let parent = table.column("parent_station"), wheelchair = table.column("wheelchair_boarding")
        let platform = table.column("platform_code")
        struct Pending { var sid: Int; var code: String?; var name: String; var lat: Double?; var lon: Double?
                         var type: Int; var parent: String; var wheelchair: Int?; var platform: String?; var line: Int }
        var pending: [Pending] = []
        var count = 0
        while let record = try table.next() {
            count += 1
            report(table, count)
            let stopID = record[id]
            guard !stopID.isEmpty else { skip(table, record, "stop_id is empty"); continue }
            guard stopIDs[stopID] == nil else { skip(table, record, "duplicate stop_id \"\(stopID)\""); continue }
            var locationType = 0
            if !record[type].isEmpty {
                guard let value = Int(record[type]), (0...4).contains(value) else {
                    skip(table, record, "location_type \"\(record[type])\" is not 0–4"); continue
                }
                locationType = value
            }
            let stopName = record[name]
            if stopName.isEmpty && locationType <= 2 { skip(table, record, "stop_name is empty (required for location_type \(locationType))"); continue }
            var latitude: Double?, longitude: Double?
            if !record[lat].isEmpty || !record[lon].isEmpty || locationType <= 2 {
                guard let la = Double(record[lat]), (-90...90).contains(la), let lo = Double(record[lon]), (-180...180).contains(lo) else {
                    skip(table, record, "stop_lat/stop_lon \"\(record[lat])\",\"\(record[lon])\" is not a valid coordinate"); continue
                }
                latitude = la; longitude = lo
            }
            let sid = stopIDs.count + 1
            stopIDs[stopID] = sid
            stopNames.append(stopName)
            pending.append(Pending(sid: sid, code: record[code].nilIfEmpty, name: stopName, lat: latitude, lon: longitude,
                                   type: locationType, parent: record[parent], wheelchair: Int(record[wheelchair]),
                                   platform: record[platform].nilIfEmpty, line: record.line))
        }
        finish(table)
        let insertID = try RawInsert(db, "INSERT INTO dict_stop(stop_id, sid) VALUES (?,?)")
        for (stopID, sid) in stopIDs { try insertID.run(.text(stopID), .int(sid)) }
        let insert = try RawInsert(db, """
            INSERT INTO stop(sid, code, name, lat, lon, location_type, parent_sid, wheelchair_boarding, platform_code)
            VALUES (?,?,?,?,?,?,?,?,?)
            """)
        let index = try RawInsert(db, "INSERT INTO stop_search(rowid, name) VALUES (?,?)")
        for stop in pending {
            var parentSID: Int?
            if !stop.parent.isEmpty {
                parentSID = stopIDs[stop.parent]
                if parentSID == nil { summary.notes.append("stops.txt:\(stop.line): parent_station \"\(stop.parent)\" is not a stop; dropped") }
            }
            try insert.run(.int(stop.sid), .text(stop.code), .text(stop.name), .real(stop.lat), .real(stop.lon), .int(stop.type),
                           .int(parentSID), .int(stop.wheelchair), .text(stop.platform))
            if stop.type <= 1 && !stop.name.isEmpty { try index.run(.int(stop.sid), .text(stop.name)) }
        }
        summary.stops = pending.count
        guard summary.stops > 0 else { throw CaravanError(.invalidFeed, "stops.txt: no valid stop") }
    }

    // MARK: routes.txt

    mutating func loadRoutes(_ db: Database) throws {
        guard var table = try open("routes.txt", required: ["route_id", "route_type"]) else { return }
        let id = table.column("route_id"), agency = table.column("agency_id"), short = table.column("route_short_name")
        let long = table.column("route_long_name"), type = table.column("route_type")
        let color = table.column("route_color"), textColor = table.column("route_text_color")
        let insertID = try RawInsert(db, "INSERT INTO dict_route(route_id, rid) VALUES (?,?)")
        let insert = try RawInsert(db, "INSERT INTO route(rid, aid, short_name, long_name, type, color, text_color) VALUES (?,?,?,?,?,?,?)")
        while let record = try table.next() {
            let routeID = record[id]
            guard !routeID.isEmpty else { skip(table, record, "route_id is empty"); continue }
            guard routeIDs[routeID] == nil else { skip(table, record, "duplicate route_id \"\(routeID)\""); continue }
            guard let routeType = Int(record[type]), RouteType(rawValue: routeType).isKnown else {
                skip(table, record, "route_type \"\(record[type])\" is not a GTFS route type"); continue
            }
            var aid: Int?
            if let known = agencyIDs[record[agency]] {
                aid = known
            } else if agencyIDs.count == 1 {
                aid = agencyIDs.values.first
            } else {
                skip(table, record, "agency_id \"\(record[agency])\" is not in agency.txt"); continue
            }
            let rid = routeIDs.count + 1
            routeIDs[routeID] = rid
            try insertID.run(.text(routeID), .int(rid))
            try insert.run(.int(rid), .int(aid), .text(record[short].nilIfEmpty), .text(record[long].nilIfEmpty), .int(routeType),
                           .text(record[color].nilIfEmpty), .text(record[textColor].nilIfEmpty))
        }
        summary.routes = routeIDs.count
    }

    // MARK: calendar.txt, calendar_dates.txt

    mutating func loadCalendars(_ db: Database) throws {
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        var starts: [Int] = [], ends: [Int] = []
        if var table = try open("calendar.txt", required: ["service_id"] + days + ["start_date", "end_date"]) {
            let id = table.column("service_id"), start = table.column("start_date"), end = table.column("end_date")
            let dayColumns = days.map { table.column($0) }
            let insert = try RawInsert(db, "INSERT INTO calendar(svc, days, start_date, end_date) VALUES (?,?,?,?)")
            rows: while let record = try table.next() {
                let serviceID = record[id]
                guard !serviceID.isEmpty else { skip(table, record, "service_id is empty"); continue }
                guard serviceIDs[serviceID] == nil else { skip(table, record, "duplicate service_id \"\(serviceID)\""); continue }
                var mask = 0
                for (bit, column) in dayColumns.enumerated() {
                    switch record[column] {
                    case "1": mask |= 1 << bit
                    case "0": break
                    default: skip(table, record, "\(days[bit]) is \"\(record[column])\", not 0 or 1"); continue rows
                    }
                }
                guard let first = GTFSTime.date(record[start]), let last = GTFSTime.date(record[end]) else {
                    skip(table, record, "start_date/end_date \"\(record[start])\",\"\(record[end])\" is not a YYYYMMDD date"); continue
                }
                guard first <= last else { skip(table, record, "start_date \(first) is after end_date \(last)"); continue }
                let svc = serviceIDs.count + 1
                serviceIDs[serviceID] = svc
                starts.append(first); ends.append(last)
                try insert.run(.int(svc), .int(mask), .int(first), .int(last))
                summary.calendars += 1
            }
        }
        if var table = try open("calendar_dates.txt", required: ["service_id", "date", "exception_type"]) {
            let id = table.column("service_id"), date = table.column("date"), type = table.column("exception_type")
            let insert = try RawInsert(db, "INSERT INTO calendar_date(date, svc, exception_type) VALUES (?,?,?)")
            var seen: [Int: Int] = [:]  // (date * 2^20 + svc) → line
            while let record = try table.next() {
                let serviceID = record[id]
                guard !serviceID.isEmpty else { skip(table, record, "service_id is empty"); continue }
                guard let day = GTFSTime.date(record[date]) else { skip(table, record, "date \"\(record[date])\" is not a YYYYMMDD date"); continue }
                guard let exception = Int(record[type]), exception == 1 || exception == 2 else {
                    skip(table, record, "exception_type \"\(record[type])\" is not 1 or 2"); continue
                }
                let svc: Int
                if let known = serviceIDs[serviceID] {
                    svc = known
                } else {
                    svc = serviceIDs.count + 1  // a calendar_dates-only service
                    serviceIDs[serviceID] = svc
                }
                let key = day << 20 | svc
                if let first = seen[key] { skip(table, record, "duplicate date \(day) for service_id \"\(serviceID)\" (first on line \(first))"); continue }
                seen[key] = record.line
                starts.append(day); ends.append(day)
                try insert.run(.int(day), .int(svc), .int(exception))
                summary.calendarDates += 1
            }
        }
        summary.services = serviceIDs.count
        let insertID = try RawInsert(db, "INSERT INTO dict_service(service_id, svc) VALUES (?,?)")
        for (serviceID, svc) in serviceIDs { try insertID.run(.text(serviceID), .int(svc)) }
        if let first = starts.min(), let last = ends.max() {
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('service_start_date', ?), ('service_end_date', ?)",
                           arguments: [String(first), String(last)])
        }
    }

    // MARK: shapes.txt

    mutating func loadShapes(_ db: Database) throws {
        guard var table = try open("shapes.txt", required: ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence"]) else { return }
        let id = table.column("shape_id"), lat = table.column("shape_pt_lat"), lon = table.column("shape_pt_lon")
        let sequence = table.column("shape_pt_sequence"), dist = table.column("shape_dist_traveled")
        var points: [[(seq: Int, line: Int, lat: Double, lon: Double)]] = [[]]
        var count = 0
        while let record = try table.next() {
            count += 1
            report(table, count)
            let shapeID = record[id]
            guard !shapeID.isEmpty else { skip(table, record, "shape_id is empty"); continue }
            guard let la = Double(record[lat]), (-90...90).contains(la), let lo = Double(record[lon]), (-180...180).contains(lo) else {
                skip(table, record, "shape_pt_lat/shape_pt_lon \"\(record[lat])\",\"\(record[lon])\" is not a valid coordinate"); continue
            }
            guard let seq = Int(record[sequence]), seq >= 0 else {
                skip(table, record, "shape_pt_sequence \"\(record[sequence])\" is not a non-negative integer"); continue
            }
            let shape: Int
            if let known = shapeIDs[shapeID] {
                shape = known
            } else {
                shape = shapeIDs.count + 1
                shapeIDs[shapeID] = shape
                points.append([])
            }
            points[shape].append((seq, record.line, la, lo))
        }
        finish(table)
        let insert = try RawInsert(db, "INSERT INTO shape(shape, points, polyline) VALUES (?,?,?)")
        let names = Dictionary(uniqueKeysWithValues: shapeIDs.map { ($1, $0) })
        for shape in 1..<points.count {
            let sorted = points[shape].sorted { $0.seq != $1.seq ? $0.seq < $1.seq : $0.line < $1.line }
            var kept: [(lat: Double, lon: Double)] = []
            var previous: (seq: Int, line: Int)?
            for point in sorted {
                if let previous, previous.seq == point.seq {
                    summary.skipped.append(.init(file: "shapes.txt", line: point.line,
                                                 reason: "duplicate shape_pt_sequence \(point.seq) for shape_id \"\(names[shape] ?? "")\" (first on line \(previous.line))"))
                    continue
                }
                previous = (point.seq, point.line)
                kept.append((point.lat, point.lon))
            }
            try insert.run(.int(shape), .int(kept.count), .text(Polyline.encode(kept)))
            summary.shapePoints += kept.count
        }
        summary.shapes = shapeIDs.count
        let insertID = try RawInsert(db, "INSERT INTO dict_shape(shape_id, shape) VALUES (?,?)")
        for (shapeID, shape) in shapeIDs { try insertID.run(.text(shapeID), .int(shape)) }
    }

    // MARK: trips.txt

    struct Trip { var rid: Int; var svc: Int; var hid: Int?; var shortName: String?; var direction: Int?; var shape: Int?; var wheelchair: Int? }

    mutating func headsign(_ text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        if let known = headsigns[text] { return known }
        let hid = headsigns.count + 1
        headsigns[text] = hid
        return hid
    }

    mutating func readTrips() throws -> [Trip] {
        guard var table = try open("trips.txt", required: ["route_id", "service_id", "trip_id"]) else { return [] }
        let route = table.column("route_id"), service = table.column("service_id"), id = table.column("trip_id")
        let sign = table.column("trip_headsign"), short = table.column("trip_short_name"), direction = table.column("direction_id")
        let shape = table.column("shape_id"), wheelchair = table.column("wheelchair_accessible")
        var trips: [Trip] = []
        var count = 0
        while let record = try table.next() {
            count += 1
            report(table, count)
            let tripID = record[id]
            guard !tripID.isEmpty else { skip(table, record, "trip_id is empty"); continue }
            guard tripIDs[tripID] == nil else { skip(table, record, "duplicate trip_id \"\(tripID)\""); continue }
            guard let rid = routeIDs[record[route]] else { skip(table, record, "unknown route_id \"\(record[route])\" (not in routes.txt)"); continue }
            guard let svc = serviceIDs[record[service]] else {
                skip(table, record, "unknown service_id \"\(record[service])\" (not in calendar.txt or calendar_dates.txt)"); continue
            }
            var directionID: Int?
            if !record[direction].isEmpty {
                guard let value = Int(record[direction]), value == 0 || value == 1 else {
                    skip(table, record, "direction_id \"\(record[direction])\" is not 0 or 1"); continue
                }
                directionID = value
            }
            var shapeNumber: Int?
            if !record[shape].isEmpty {
                shapeNumber = shapeIDs[record[shape]]
                if shapeNumber == nil { summary.notes.append("trips.txt:\(record.line): shape_id \"\(record[shape])\" is not in shapes.txt; dropped") }
            }
            tripIDs[tripID] = trips.count + 1
            trips.append(Trip(rid: rid, svc: svc, hid: headsign(record[sign]), shortName: record[short].nilIfEmpty, direction: directionID,
                              shape: shapeNumber, wheelchair: Int(record[wheelchair])))
        }
        finish(table)
        guard !trips.isEmpty else { throw CaravanError(.invalidFeed, "trips.txt: no valid trip") }
        return trips
    }

    // MARK: stop_times.txt

    struct StopTime { var seq: Int; var sid: Int; var arrival: Int?; var departure: Int?; var pickup: Int; var dropOff: Int
                      var hid: Int?; var dist: Double?; var line: Int; var interpolated = false }

    mutating func loadStopTimes(_ db: Database, trips: [Trip]) throws {
        guard var table = try open("stop_times.txt", required: ["trip_id", "stop_id", "stop_sequence"]) else { return }
        let trip = table.column("trip_id"), stop = table.column("stop_id"), sequence = table.column("stop_sequence")
        let arrival = table.column("arrival_time"), departure = table.column("departure_time")
        let pickup = table.column("pickup_type"), dropOff = table.column("drop_off_type")
        let sign = table.column("stop_headsign"), dist = table.column("shape_dist_traveled")
        var byTrip = [[StopTime]](repeating: [], count: trips.count + 1)
        var count = 0
        func pickupValue(_ text: String) -> Int? { text.isEmpty ? 0 : Int(text).flatMap { (0...3).contains($0) ? $0 : nil } }
        while let record = try table.next() {
            count += 1
            report(table, count)
            guard let tid = tripIDs[record[trip]] else { skip(table, record, "unknown trip_id \"\(record[trip])\" (not in trips.txt)"); continue }
            guard let sid = stopIDs[record[stop]] else { skip(table, record, "unknown stop_id \"\(record[stop])\" (not in stops.txt)"); continue }
            guard let seq = Int(record[sequence]), seq >= 0 else {
                skip(table, record, "stop_sequence \"\(record[sequence])\" is not a non-negative integer"); continue
            }
            var arrive: Int?, depart: Int?
            if !record[arrival].isEmpty {
                guard let value = GTFSTime.seconds(record[arrival]) else { skip(table, record, "arrival_time \"\(record[arrival])\" is not a GTFS time (H:MM:SS)"); continue }
                arrive = value
            }
            if !record[departure].isEmpty {
                guard let value = GTFSTime.seconds(record[departure]) else { skip(table, record, "departure_time \"\(record[departure])\" is not a GTFS time (H:MM:SS)"); continue }
                depart = value
            }
            guard let pick = pickupValue(record[pickup]) else { skip(table, record, "pickup_type \"\(record[pickup])\" is not 0–3"); continue }
            guard let drop = pickupValue(record[dropOff]) else { skip(table, record, "drop_off_type \"\(record[dropOff])\" is not 0–3"); continue }
            byTrip[tid].append(StopTime(seq: seq, sid: sid, arrival: arrive ?? depart, departure: depart ?? arrive, pickup: pick, dropOff: drop,
                                        hid: headsign(record[sign]), dist: Double(record[dist]), line: record.line))
        }
        finish(table)

        let insert = try RawInsert(db, """
            INSERT INTO stop_time(tid, seq, sid, arrival, departure, boards, flags, hid) VALUES (?,?,?,?,?,?,?,?)
            """)
        var lastStops = [Int?](repeating: nil, count: trips.count + 1)
        for tid in 1...max(1, trips.count) where tid < byTrip.count {
            var rows = byTrip[tid]
            guard !rows.isEmpty else { continue }
            rows.sort { $0.seq != $1.seq ? $0.seq < $1.seq : $0.line < $1.line }
            var unique: [StopTime] = []
            unique.reserveCapacity(rows.count)
            for row in rows {
                if let previous = unique.last, previous.seq == row.seq {
                    summary.skipped.append(.init(file: "stop_times.txt", line: row.line,
                                                 reason: "duplicate stop_sequence \(row.seq) for trip_id \"\(tripName(tid))\" (first on line \(previous.line))"))
                    continue
                }
                unique.append(row)
            }
            guard unique.first?.departure != nil, unique.last?.arrival != nil else {
                summary.skipped.append(.init(file: "stop_times.txt", line: unique[0].line,
                                             reason: "trip_id \"\(tripName(tid))\": the first or last stop has no time; the trip's \(unique.count) stop times are skipped"))
                continue
            }
            let interpolated = Self.interpolate(&unique)
            summary.interpolatedStopTimes += interpolated
            for (offset, row) in unique.enumerated() {
                let isLast = offset == unique.count - 1
                let boards = !isLast && row.pickup != 1
                try insert.run(.int(tid), .int(row.seq), .int(row.sid), .int(row.arrival == row.departure ? nil : row.arrival), .int(row.departure),
                               .int(boards ? 1 : 0), .int((row.interpolated ? 1 : 0) | row.pickup << 1 | row.dropOff << 3), .int(row.hid))
            }
            summary.stopTimes += unique.count
            lastStops[tid] = unique.last?.sid
        }
        let insertTrip = try RawInsert(db, """
            INSERT INTO trip(tid, rid, svc, hid, short_name, direction_id, shape, last_sid, wheelchair_accessible) VALUES (?,?,?,?,?,?,?,?,?)
            """)
        for (offset, trip) in trips.enumerated() {
            let tid = offset + 1
            try insertTrip.run(.int(tid), .int(trip.rid), .int(trip.svc), .int(trip.hid), .text(trip.shortName), .int(trip.direction),
                               .int(trip.shape), .int(lastStops[tid]), .int(trip.wheelchair))
        }
        summary.trips = trips.count
        let insertID = try RawInsert(db, "INSERT INTO dict_trip(trip_id, tid) VALUES (?,?)")
        for (tripID, tid) in tripIDs { try insertID.run(.text(tripID), .int(tid)) }
        let insertHeadsign = try RawInsert(db, "INSERT INTO headsign(hid, text) VALUES (?,?)")
        for (text, hid) in headsigns { try insertHeadsign.run(.int(hid), .text(text)) }
    }

    private var tripNames: [Int: String] = [:]

    mutating func tripName(_ tid: Int) -> String {
        if tripNames.isEmpty { for (name, id) in tripIDs { tripNames[id] = name } }
        return tripNames[tid] ?? String(tid)
    }

    /// Fills the times of untimed stops between two timed ones, linearly by `shape_dist_traveled` when every stop
    /// of the gap and both ends have it, otherwise evenly by stop. Returns how many rows were filled (marked
    /// `interpolated`, arrival = departure).
    static func interpolate(_ rows: inout [StopTime]) -> Int {
        var filled = 0
        var index = 1
        while index < rows.count {
            guard rows[index].departure == nil else { index += 1; continue }
            let before = index - 1
            var after = index
            while rows[after].departure == nil { after += 1 }  // the last row has a time (checked by the caller)
            let startTime = rows[before].departure!, endTime = rows[after].arrival!
            let distances = rows[before...after].map(\.dist)
            let useDistance = distances.allSatisfy { $0 != nil } && distances.last!! > distances.first!!
            for gap in index..<after {
                let fraction: Double
                if useDistance {
                    fraction = (rows[gap].dist! - distances.first!!) / (distances.last!! - distances.first!!)
                } else {
                    fraction = Double(gap - before) / Double(after - before)
                }
                let time = startTime + Int((Double(endTime - startTime) * min(1, max(0, fraction))).rounded())
                rows[gap].departure = time
                rows[gap].arrival = time
                rows[gap].interpolated = true
                filled += 1
            }
            index = after + 1
        }
        return filled
    }

    mutating func writeMeta(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('format_version', ?), ('timezone', ?)",
                       arguments: [String(TransitSchema.formatVersion), summary.timezone])
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// A prepared INSERT bound through the SQLite C API (the importer's hot path: no boxing per value).
struct RawInsert {
    enum Cell {
        case int(Int?)
        case text(String?)
        case real(Double?)
    }

    private let statement: Statement

    init(_ db: Database, _ sql: String) throws {
        statement = try db.makeStatement(sql: sql)
    }

    func run(_ cells: Cell...) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (offset, cell) in cells.enumerated() {
            let position = CInt(offset + 1)
            switch cell {
            case .int(let value?): sqlite3_bind_int64(handle, position, Int64(value))
            case .real(let value?): sqlite3_bind_double(handle, position, value)
            case .text(let value?):
                _ = value.withCString { sqlite3_bind_text(handle, position, $0, -1, RawInsert.transient) }
            case .int(nil), .real(nil), .text(nil): sqlite3_bind_null(handle, position)
            }
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            throw CaravanError(.internalFailure, "the bundle cannot be written", internalDetail: "sqlite \(code): \(message)")
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
