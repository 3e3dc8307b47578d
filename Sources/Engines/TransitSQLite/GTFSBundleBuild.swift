import CaravanCore
import Foundation
import GRDB
import Transit

/// One build: the id dictionaries and the summary, filled file by file inside the import transaction.
struct BundleBuild {
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

    mutating func writeMeta(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('format_version', ?), ('timezone', ?)",
                       arguments: [String(TransitSchema.formatVersion), summary.timezone])
    }

    private var tripNames: [Int: String] = [:]

    mutating func tripName(_ tid: Int) -> String {
        if tripNames.isEmpty { for (name, id) in tripIDs { tripNames[id] = name } }
        return tripNames[tid] ?? String(tid)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
