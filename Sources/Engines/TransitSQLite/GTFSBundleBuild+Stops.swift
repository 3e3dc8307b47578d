import CaravanCore
import GRDB
import Transit

/// `stops.txt`: stops, stations and their folded names.
extension BundleBuild {
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
}
