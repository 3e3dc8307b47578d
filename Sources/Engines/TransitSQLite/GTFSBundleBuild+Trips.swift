import CaravanCore
import GRDB
import Transit

/// `trips.txt`: read before the stop times, written after them (a trip row names its last stop).
extension BundleBuild {
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
}
