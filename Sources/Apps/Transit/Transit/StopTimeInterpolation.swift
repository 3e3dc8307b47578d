/// One row of `stop_times.txt` as the importer keeps it: times in seconds after the service day's noon minus
/// 12 h (GTFS time), `nil` when the feed left the time empty.
package struct GTFSStopTime: Sendable, Equatable {
    package var seq: Int
    package var sid: Int
    package var arrival: Int?
    package var departure: Int?
    package var pickup: Int
    package var dropOff: Int
    package var hid: Int?
    package var dist: Double?
    package var line: Int
    package var interpolated = false

    package init(seq: Int, sid: Int, arrival: Int?, departure: Int?, pickup: Int, dropOff: Int, hid: Int?, dist: Double?, line: Int) {
        self.seq = seq
        self.sid = sid
        self.arrival = arrival
        self.departure = departure
        self.pickup = pickup
        self.dropOff = dropOff
        self.hid = hid
        self.dist = dist
        self.line = line
    }
}

/// Stop-time interpolation: a pure function of one trip's ordered rows, no I/O.
package enum StopTimeInterpolation {
    /// Fills the times of untimed stops between two timed ones, linearly by `shape_dist_traveled` when every stop
    /// of the gap and both ends have it (and the distance grows), otherwise evenly by stop. Filled rows are marked
    /// `interpolated`, with arrival = departure. A gap with no timed stop after it (or before it) is left as it is.
    ///
    /// - Returns: how many rows were filled.
    package static func interpolate(_ rows: inout [GTFSStopTime]) -> Int {
        var filled = 0
        var index = 1
        while index < rows.count {
            guard rows[index].departure == nil else { index += 1; continue }
            let before = index - 1
            guard let startTime = rows[before].departure,
                  let after = rows[index...].firstIndex(where: { $0.departure != nil }),
                  let endTime = rows[after].arrival else { return filled }
            let fractions = Self.fractions(rows[before...after].map(\.dist))
            for gap in index..<after {
                let fraction = fractions?[gap - before] ?? Double(gap - before) / Double(after - before)
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

    /// Each stop's share of the way from the first to the last, by distance; nil when a distance is missing or the
    /// distance does not grow (then the gap is shared evenly by stop).
    package static func fractions(_ distances: [Double?]) -> [Double]? {
        let known = distances.compactMap { $0 }
        guard known.count == distances.count, let first = known.first, let last = known.last, last > first else { return nil }
        return known.map { ($0 - first) / (last - first) }
    }
}
