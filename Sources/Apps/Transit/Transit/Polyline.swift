/// The encoded polyline algorithm (Google's), here with 6 decimals ("polyline6"): each coordinate is the
/// difference from the previous one, in 1e-6 degrees, zig-zag encoded in 5-bit groups offset into printable ASCII.
package enum Polyline {
    /// The polyline6 text of `points` (latitude, longitude in degrees).
    package static func encode(_ points: [(lat: Double, lon: Double)]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(points.count * 8)
        var previousLat = 0, previousLon = 0
        for point in points {
            let lat = Int((point.lat * 1e6).rounded()), lon = Int((point.lon * 1e6).rounded())
            append(lat - previousLat, to: &output)
            append(lon - previousLon, to: &output)
            previousLat = lat
            previousLon = lon
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The points of a polyline6 text, or nil when it is malformed.
    package static func decode(_ text: String) -> [(lat: Double, lon: Double)]? {
        var points: [(lat: Double, lon: Double)] = []
        var values: [Int] = []
        var shift = 0, accumulator = 0
        for byte in text.utf8 {
            guard byte >= 63, byte < 127 else { return nil }
            let chunk = Int(byte) - 63
            accumulator |= (chunk & 0x1F) << shift
            shift += 5
            if chunk < 0x20 {
                values.append(accumulator & 1 == 1 ? ~(accumulator >> 1) : accumulator >> 1)
                accumulator = 0
                shift = 0
            }
        }
        guard shift == 0, values.count % 2 == 0 else { return nil }
        var lat = 0, lon = 0
        for index in stride(from: 0, to: values.count, by: 2) {
            lat += values[index]
            lon += values[index + 1]
            points.append((Double(lat) / 1e6, Double(lon) / 1e6))
        }
        return points
    }

    private static func append(_ value: Int, to output: inout [UInt8]) {
        var rest = value < 0 ? ~(value << 1) : value << 1
        while rest >= 0x20 {
            output.append(UInt8((rest & 0x1F) | 0x20) + 63)
            rest >>= 5
        }
        output.append(UInt8(rest) + 63)
    }
}
