/// RFC 4180 CSV, as `Accept: text/csv` and `caravan export … --format csv` write it.
extension ReadResult {
    /// A header line of the output names, then one line per row; NULL is an empty field, JSON values are written
    /// as JSON text, casts of the select list applied.
    public var csv: [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: outputs.map { Self.csvField($0.name) }.joined(separator: ",").utf8)
        for row in rows {
            out.append(0x0A)
            let fields: [String] = row.enumerated().map { i, raw in
                let value = outputs[i].cast.map { raw.casting(to: $0) } ?? raw
                switch value {
                case .null: return ""
                case .bool(let b): return b ? "true" : "false"
                case .integer(let n): return String(n)
                case .double(let d):
                    var writer = JSONWriter()
                    writer.writeNumber(d)
                    return writer.string
                case .text(let s), .json(let s): return Self.csvField(s)
                }
            }
            out.append(contentsOf: fields.joined(separator: ",").utf8)
        }
        return out
    }

    static func csvField(_ text: String) -> String {
        let needsQuotes = text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            || text.first?.isWhitespace == true || text.last?.isWhitespace == true
        guard needsQuotes else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
