/// A small RFC 4180 CSV reader: comma-separated fields, double-quoted fields with `""` escapes and line breaks,
/// CRLF or LF line ends. An empty field is "" (never NULL: `NA` is Namibia's code, not a missing value).
public enum WorldCSV {
    /// The records of `text`, each with its 1-based line number (of its first line). Blank lines are skipped.
    public static func records(_ text: String) -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var line = 1
        var recordLine = 1
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = iterator.next()
        func endRecord() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
        }
        while let scalar = pending {
            pending = iterator.next()
            if inQuotes {
                if scalar == "\"" {
                    if pending == "\"" { field.unicodeScalars.append("\""); pending = iterator.next() } else { inQuotes = false }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": inQuotes = true
            case ",": fields.append(field); field = ""
            case "\r": if pending != "\n" { endRecord(); line += 1; recordLine = line }
            case "\n": endRecord(); line += 1; recordLine = line
            default: field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }

    /// Records as dictionaries keyed by the header's names; the header line itself is left out.
    public static func table(_ text: String) -> (header: [String], rows: [(line: Int, values: [String: String])]) {
        let all = records(text)
        guard let header = all.first?.fields.map({ $0.hasPrefix("\u{FEFF}") ? String($0.dropFirst()) : $0 }) else { return ([], []) }
        let rows = all.dropFirst().map { record in
            (record.line, Dictionary(zip(header, record.fields), uniquingKeysWith: { first, _ in first }))
        }
        return (header, rows)
    }
}
