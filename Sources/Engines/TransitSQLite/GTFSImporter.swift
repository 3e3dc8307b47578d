package import CaravanCore
import CaravanSQLite
import Foundation
import GRDB
import GRDBSQLite
import Transit

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
package struct GTFSImporter: Sendable {
    /// A row that was skipped, or a trip whose stop times were: file, line (1-based, the header is line 1) and reason.
    package struct Problem: Sendable, Hashable, CustomStringConvertible {
        package let file: String
        package let line: Int
        package let reason: String
        package var description: String { "\(file):\(line): \(reason)" }
    }

    /// What an import did.
    package struct Summary: Sendable {
        package var agencies = 0
        package var stops = 0
        package var routes = 0
        /// Distinct service ids (from calendar.txt and calendar_dates.txt).
        package var services = 0
        package var calendars = 0
        package var calendarDates = 0
        package var trips = 0
        package var stopTimes = 0
        /// Stop times whose time the feed left empty and the importer interpolated.
        package var interpolatedStopTimes = 0
        package var shapes = 0
        package var shapePoints = 0
        /// Rows reported and skipped.
        package var skipped: [Problem] = []
        /// Observations that skipped nothing (a file transcoded, a reference dropped).
        package var notes: [String] = []
        /// The agency time zone (`agency_timezone` of the first agency).
        package var timezone = ""
        /// Bytes of the feed's CSV files read (uncompressed).
        package var sourceBytes = 0
        /// Size of the bundle written.
        package var bundleBytes = 0
    }

    /// Progress through the feed: the file being read and the bytes of it read so far.
    package struct Progress: Sendable {
        package let file: String
        package let bytesRead: Int
        package let byteCount: Int
    }

    package init() {}

    /// Imports the feed at `feed` (a `.zip` or a directory) into a new bundle at `output` (replaced if it exists).
    ///
    /// - Throws: `CaravanError` `.invalidFeed` when the feed cannot be imported (the message names file and line),
    ///   `.internalFailure` when the bundle cannot be written.
    package func run(feed: String, output: String, progress: @escaping (Progress) -> Void = { _ in }) throws(CaravanError) -> Summary {
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
