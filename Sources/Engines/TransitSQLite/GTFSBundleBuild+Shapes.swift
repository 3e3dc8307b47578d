import CaravanCore
import GRDB
import Transit

/// `shapes.txt`: encoded polylines.
extension BundleBuild {
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
}
