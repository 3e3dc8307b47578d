package import CaravanCore

/// The GeoNames-derived world files as CSV (`CSVReader`, fields untrimmed). An empty field is "" (never NULL: `NA`
/// is Namibia's code, not a missing value).
package enum WorldCSV {
    /// The records of `text`, each with its 1-based line number (of its first line). Blank lines are skipped.
    package static func records(_ text: String, file: String = "world CSV") throws(CaravanError) -> [(line: Int, fields: [String])] {
        var reader = CSVReader(text: text, file: file, trimsFields: false)
        return try reader.records().map { ($0.line, $0.fields) }
    }

    /// Records as dictionaries keyed by the header's names; the header line itself is left out.
    package static func table(_ text: String, file: String = "world CSV") throws(CaravanError) -> (header: [String], rows: [(line: Int, values: [String: String])]) {
        let all = try records(text, file: file)
        guard let header = all.first?.fields else { return ([], []) }
        let rows = all.dropFirst().map { record in
            (record.line, Dictionary(zip(header, record.fields), uniquingKeysWith: { first, _ in first }))
        }
        return (header, rows)
    }
}
