import CaravanCore
import GRDB
import Transit

/// `stop_times.txt`: read per trip, ordered, deduplicated, interpolated (`StopTimeInterpolation`) and written.
extension BundleBuild {
    typealias StopTime = GTFSStopTime

    mutating func loadStopTimes(_ db: Database, trips: [Trip]) throws {
        guard let byTrip = try readStopTimes(tripCount: trips.count) else { return }
        let lastStops = try writeStopTimes(db, byTrip, tripCount: trips.count)
        try writeTrips(db, trips, lastStops: lastStops)
    }

    /// The valid rows of `stop_times.txt` by trip (`tid`); nil when the file is missing.
    mutating func readStopTimes(tripCount: Int) throws -> [[StopTime]]? {
        guard var table = try open("stop_times.txt", required: ["trip_id", "stop_id", "stop_sequence"]) else { return nil }
        let trip = table.column("trip_id"), stop = table.column("stop_id"), sequence = table.column("stop_sequence")
        let arrival = table.column("arrival_time"), departure = table.column("departure_time")
        let pickup = table.column("pickup_type"), dropOff = table.column("drop_off_type")
        let sign = table.column("stop_headsign"), dist = table.column("shape_dist_traveled")
        var byTrip = [[StopTime]](repeating: [], count: tripCount + 1)
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
        return byTrip
    }

    /// Orders, deduplicates, interpolates and writes each trip's stop times; returns each trip's last stop.
    mutating func writeStopTimes(_ db: Database, _ byTrip: [[StopTime]], tripCount: Int) throws -> [Int?] {
        let insert = try RawInsert(db, """
            INSERT INTO stop_time(tid, seq, sid, arrival, departure, boards, flags, hid) VALUES (?,?,?,?,?,?,?,?)
            """)
        var lastStops = [Int?](repeating: nil, count: tripCount + 1)
        for tid in 1...max(1, tripCount) where tid < byTrip.count {
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
            let interpolated = StopTimeInterpolation.interpolate(&unique)
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
        return lastStops
    }

    /// The trips (each naming its last stop), and the trip and headsign dictionaries.
    mutating func writeTrips(_ db: Database, _ trips: [Trip], lastStops: [Int?]) throws {
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
}
