import CaravanCore

/// The media types a read can produce (wire-protocol §2.7).
enum ReadMediaType: Equatable {
    case jsonArray
    case singleObject
    case csv

    var contentType: String {
        switch self {
        case .jsonArray: "application/json; charset=utf-8"
        case .singleObject: "application/vnd.pgrst.object+json; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        }
    }

    /// Chooses from an `Accept` header: the first listed type Caravan can produce; PGRST107 if none.
    static func negotiate(_ accept: String?) throws(CaravanError) -> ReadMediaType {
        guard let accept, !accept.trimmingSpaces.isEmpty else { return .jsonArray }
        for item in accept.split(separator: ",") {
            let type = item.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() } ?? ""
            switch type {
            case "application/json", "*/*", "application/*", "application/vnd.pgrst.array+json", "application/vnd.pgrst.array":
                return .jsonArray
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                return .singleObject
            case "text/csv", "text/*":
                return .csv
            default:
                continue
            }
        }
        throw CaravanError(.notAcceptable, "None of these media types are available: \(accept.prefix(200))")
    }
}

/// Serializes read results without Foundation's JSONEncoder: keys are encoded once per response.
enum ResultEncoder {
    static func jsonArray(_ result: ReadResult) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 64 + result.rows.count * 256)
        let keys = keyPrefixes(result.outputs)
        writer.bytes.append(UInt8(ascii: "["))
        for (r, row) in result.rows.enumerated() {
            if r > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writeObject(row, outputs: result.outputs, keys: keys, into: &writer)
        }
        writer.bytes.append(UInt8(ascii: "]"))
        return writer.bytes
    }

    static func object(_ row: [Value], outputs: [OutputColumn]) -> [UInt8] {
        var writer = JSONWriter()
        writeObject(row, outputs: outputs, keys: keyPrefixes(outputs), into: &writer)
        return writer.bytes
    }

    private static func keyPrefixes(_ outputs: [OutputColumn]) -> [[UInt8]] {
        outputs.enumerated().map { index, output in
            var writer = JSONWriter()
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.writeString(output.name)
            writer.bytes.append(UInt8(ascii: ":"))
            return writer.bytes
        }
    }

    private static func writeObject(_ row: [Value], outputs: [OutputColumn], keys: [[UInt8]], into writer: inout JSONWriter) {
        writer.bytes.append(UInt8(ascii: "{"))
        for (i, value) in row.enumerated() {
            writer.bytes.append(contentsOf: keys[i])
            if let cast = outputs[i].cast {
                writer.write(value.casting(to: cast))
            } else {
                writer.write(value)
            }
        }
        writer.bytes.append(UInt8(ascii: "}"))
    }
}
