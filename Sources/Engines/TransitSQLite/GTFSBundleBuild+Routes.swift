import CaravanCore
import GRDB
import Transit

/// `routes.txt`.
extension BundleBuild {
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
}
