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

    /// RFC 4180 CSV with a header line; NULL is an empty field, JSON values are written as JSON text.
    static func csv(_ result: ReadResult) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: result.outputs.map { field($0.name) }.joined(separator: ",").utf8)
        for row in result.rows {
            out.append(0x0A)
            let fields: [String] = row.enumerated().map { i, raw in
                let value = result.outputs[i].cast.map { raw.casting(to: $0) } ?? raw
                switch value {
                case .null: return ""
                case .bool(let b): return b ? "true" : "false"
                case .integer(let n): return String(n)
                case .double(let d):
                    var writer = JSONWriter()
                    writer.writeNumber(d)
                    return writer.string
                case .text(let s), .json(let s): return field(s)
                }
            }
            out.append(contentsOf: fields.joined(separator: ",").utf8)
        }
        return out
    }

    private static func field(_ text: String) -> String {
        let needsQuotes = text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            || text.first?.isWhitespace == true || text.last?.isWhitespace == true
        guard needsQuotes else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
