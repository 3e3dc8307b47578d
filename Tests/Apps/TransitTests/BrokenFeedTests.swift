import CaravanCore
import Foundation
import Testing
@testable import Transit
@testable import TransitSQLite

@Suite("Broken feeds are rejected or reported precisely")
struct BrokenFeedTests {
    func feed(replacing name: String, with text: String?) throws -> String {
        var files = fixtureFeed
        files[name] = text
        return try writeFeed(files)
    }

    func importError(_ feed: String) throws -> CaravanError? {
        do {
            _ = try importFeed(feed)
            return nil
        } catch {
            return error as? CaravanError
        }
    }

    @Test func badRowsAreReportedWithFileLineAndReasonAndSkipped() throws {
        var stopTimes = fixtureFeed["stop_times.txt"]!
        stopTimes += "GHOST,09:00:00,09:00:00,S1,1,0,0\n"       // line 11
        stopTimes += "H1,10:20:00,10:20:00,NOWHERE,3,0,0\n"    // line 12
        stopTimes += "H1,8h30,8h30,S2,4,0,0\n"                  // line 13
        stopTimes += "H1,10:30:00,10:30:00,S4,2,0,0\n"          // line 14: duplicate sequence 2
        var trips = fixtureFeed["trips.txt"]!
        trips += "NOPE,WK,T9,x\n"                               // line 5
        trips += "R1,NEVER,T10,x\n"                             // line 6
        let directory = try writeFeed(fixtureFeed.merging(["stop_times.txt": stopTimes, "trips.txt": trips]) { $1 })
        let (path, summary) = try importFeed(directory)
        #expect(summary.skipped.map(\.description) == [
            "trips.txt:5: unknown route_id \"NOPE\" (not in routes.txt)",
            "trips.txt:6: unknown service_id \"NEVER\" (not in calendar.txt or calendar_dates.txt)",
            "stop_times.txt:11: unknown trip_id \"GHOST\" (not in trips.txt)",
            "stop_times.txt:12: unknown stop_id \"NOWHERE\" (not in stops.txt)",
            "stop_times.txt:13: arrival_time \"8h30\" is not a GTFS time (H:MM:SS)",
            "stop_times.txt:14: duplicate stop_sequence 2 for trip_id \"H1\" (first on line 10)",
        ])
        #expect(summary.stopTimes == 9)
        #expect(try TransitDatabase(path: path).tripStops(tripID: "H1").map(\.stopID) == ["S1", "S3"])
    }

    @Test func aTripWithAnUntimedFirstStopIsSkippedAsAWhole() throws {
        let stopTimes = fixtureFeed["stop_times.txt"]!.replacingOccurrences(of: "H1,10:00:00,10:00:00,S1,1,0,0", with: "H1,,,S1,1,0,0")
        let (_, summary) = try importFeed(try feed(replacing: "stop_times.txt", with: stopTimes))
        #expect(summary.skipped.map(\.description) == [
            "stop_times.txt:9: trip_id \"H1\": the first or last stop has no time; the trip's 2 stop times are skipped",
        ])
    }

    @Test func aMissingRequiredFileStopsTheImport() throws {
        let error = try importError(try feed(replacing: "trips.txt", with: nil))
        #expect(error?.code == .invalidFeed)
        #expect(error?.message == "the feed has no trips.txt (a required GTFS file)")
        let noCalendar = try writeFeed(fixtureFeed.filter { !$0.key.hasPrefix("calendar") })
        #expect(try importError(noCalendar)?.message == "the feed has neither calendar.txt nor calendar_dates.txt (one is required)")
    }

    @Test func aFileThatIsNotCSVStopsTheImportNamingFileAndLine() throws {
        let html = try importError(try feed(replacing: "stops.txt", with: "<html>\n<body>Not found</body>\n</html>\n"))
        #expect(html?.code == .invalidFeed)
        #expect(html?.message.hasPrefix("stops.txt: line 1: required column stop_id missing from the header") == true)

        var files = fixtureFeed
        files["stop_times.txt"] = nil
        let directory = try writeFeed(files)
        try Data([0x50, 0x4B, 0x03, 0x04, 0x0A, 0x0A, 0x00, 0x00, 0xFF]).write(to: URL(fileURLWithPath: directory + "/stop_times.txt"))
        let binary = try importError(directory)
        #expect(binary?.message == "stop_times.txt: line 3: contains a NUL byte; not a CSV text file (binary, or UTF-16 without a byte-order mark)")

        let unterminated = try importError(try feed(replacing: "routes.txt", with: "route_id,route_type\nR1,3\n\"R2,3\n"))
        #expect(unterminated?.message == "routes.txt: line 3: a quoted field is never closed")

        let empty = try importError(try feed(replacing: "agency.txt", with: ""))
        #expect(empty?.message == "agency.txt: line 1: the file is empty (a header line is required)")

        let notAFeed = try temporaryDirectory() + "/feed.zip"
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: notAFeed))
        #expect(try importError(notAFeed)?.message.hasSuffix("is neither a directory nor a readable ZIP archive") == true)
    }

    @Test func aFeedWithNoValidStopTimeIsRejected() throws {
        let error = try importError(try feed(replacing: "stop_times.txt", with: "trip_id,arrival_time,departure_time,stop_id,stop_sequence\nX,08:00:00,08:00:00,S1,1\n"))
        #expect(error?.message == "stop_times.txt: no valid stop time (see the skipped rows)")
    }

    @Test func windows1252FilesAreTranscodedWithANote() throws {
        let directory = try writeFeed(fixtureFeed)
        // "Praça da Sé" and "Norte – Sul" in Windows-1252: ç = E7, é = E9, en dash = 96.
        let bytes = Array("stop_id,stop_name,stop_lat,stop_lon\nS1,Pra".utf8) + [0xE7] + Array("a da S".utf8) + [0xE9]
            + Array(",38.7,-9.1\nS2,Rua Augusta,38.71,-9.11\nS3,Orchard,1,1\nS4,Norte ".utf8) + [0x96] + Array(" Sul,1,1\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/stops.txt"))
        let (path, summary) = try importFeed(directory)
        #expect(summary.notes == ["stops.txt: line 2: not UTF-8; the file was read as Windows-1252"])
        let database = try TransitDatabase(path: path)
        #expect(try database.stop(id: "S1")?.name == "Praça da Sé")
        #expect(try database.stop(id: "S4")?.name == "Norte – Sul")
        #expect(try database.searchStops("praca").map(\.stopID) == ["S1"])
    }

    @Test func theZipOfAFeedImportsLikeItsDirectory() throws {
        guard let zip = sharedDataFile("gtfs/porto_alegre_trensurb.zip") else { return }
        let (_, fromZip) = try importFeed(zip)
        #expect(fromZip.stopTimes == 14855)
    }
}

@Suite("CSV reading")
struct CSVTests {
    func records(_ text: String) throws -> [CSVRecord] {
        var reader = CSVReader(text: try FeedText.decode(Array(text.utf8), file: "t.txt"), file: "t.txt")
        var result: [CSVRecord] = []
        while let record = try reader.next() { result.append(record) }
        return result
    }

    @Test func rfc4180() throws {
        let rows = try records("a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\r\n\"multi\nline\",2,3\n\n  padded  , \"q\" ,z\rlast,row")
        #expect(rows.map(\.fields) == [["a", "b", "c"], ["x, y", "say \"hi\"", ""], ["multi\nline", "2", "3"], ["padded", "q", "z"], ["last", "row"]])
        #expect(rows.map(\.line) == [1, 2, 3, 6, 7])
    }

    @Test func byteOrderMarksAndUTF16() throws {
        let bom = try FeedText.decode([0xEF, 0xBB, 0xBF] + Array("id\n1\n".utf8), file: "t.txt")
        #expect(bom.bytes == Array("id\n1\n".utf8))
        #expect(bom.note == nil)
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "id,nome\nç,1\n".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let decoded = try FeedText.decode(utf16, file: "t.txt")
        #expect(String(decoding: decoded.bytes, as: UTF8.self) == "id,nome\nç,1\n")
        #expect(decoded.note == "t.txt is UTF-16 (byte-order mark); transcoded to UTF-8")
    }

    @Test func headerColumnsByNameWithShortAndLongRows() throws {
        var table = try CSVTable(text: try FeedText.decode(Array(" b , a ,extra\n1,2\n3,4,5,6\n".utf8), file: "t.txt"), file: "t.txt", required: ["a", "b"])
        let first = try table.next()!, second = try table.next()!
        #expect(first[table.column("a")] == "2")
        #expect(first[table.column("extra")] == "")
        #expect(second[table.column("b")] == "3")
        #expect(first[table.column("missing")] == "")
        #expect(throws: CaravanError.self) { try CSVTable(text: try FeedText.decode(Array("x\n".utf8), file: "t.txt"), file: "t.txt", required: ["a"]) }
    }

    @Test func invalidUTF8IsFound() {
        #expect(FeedText.firstInvalidUTF8(Array("héllo".utf8)) == nil)
        #expect(FeedText.firstInvalidUTF8([0x61, 0xC3]) == 1)
        #expect(FeedText.firstInvalidUTF8([0x61, 0xC0, 0x80]) == 1)        // overlong
        #expect(FeedText.firstInvalidUTF8([0xED, 0xA0, 0x80]) == 0)        // surrogate
        #expect(FeedText.firstInvalidUTF8([0xF0, 0x9F, 0x9A, 0x8C]) == nil) // 🚌
    }
}

@Suite("GTFS times and dates")
struct GTFSTimeTests {
    @Test func times() {
        #expect(GTFSTime.seconds("08:05:09") == 29109)
        #expect(GTFSTime.seconds("8:05:09") == 29109)
        #expect(GTFSTime.seconds("25:10:00") == 90600)
        #expect(GTFSTime.seconds("100:00:00") == 360_000)
        #expect(GTFSTime.seconds("08:60:00") == nil)
        #expect(GTFSTime.seconds("08:00") == nil)
        #expect(GTFSTime.seconds("8h30") == nil)
        #expect(GTFSTime.seconds("") == nil)
        #expect(GTFSTime.text(90600) == "25:10:00")
        #expect(GTFSTime.text(29109) == "08:05:09")
    }

    @Test func dates() throws {
        #expect(GTFSTime.date("20240229") == 20240229)
        #expect(GTFSTime.date("20230229") == nil)
        #expect(GTFSTime.date("2024-02-29") == nil)
        #expect(ServiceDate(20240610)?.weekday == 0)   // a Monday
        #expect(ServiceDate(20140607)?.weekday == 5)   // a Saturday
        #expect(ServiceDate(20240301)?.previous.number == 20240229)
        #expect(ServiceDate(20240101)?.previous.number == 20231231)
        #expect(ServiceDate(20231231)?.next.number == 20240101)
        #expect(ServiceDate(20240228)?.next.number == 20240229)
        #expect(LocalDateTime(date: ServiceDate(20240610)!, secondsAfterMidnight: 90600).description == "2024-06-11T01:10:00")
        #expect(try LocalDateTime(parsing: "2024-06-10T07:05").description == "2024-06-10T07:05:00")
        for bad in ["2024-06-10", "2024-06-10T24:00", "2024-13-01T00:00", "10/06/2024 07:05", "2024-06-10T07:05Z"] {
            #expect(throws: CaravanError.self) { try LocalDateTime(parsing: bad) }
        }
    }

    @Test func polylineRoundTrips() {
        let points = [(lat: -30.027275, lon: -51.22919), (lat: -30.026654, lon: -51.22949), (lat: 45.27415, lon: -66.05875)]
        let decoded = Polyline.decode(Polyline.encode(points))!
        #expect(decoded.count == 3)
        for (a, b) in zip(points, decoded) { #expect(abs(a.lat - b.lat) < 1e-6 && abs(a.lon - b.lon) < 1e-6) }
        #expect(Polyline.encode([(lat: 38.5, lon: -120.2), (lat: 40.7, lon: -120.95)]).isEmpty == false)
    }
}
