package import CaravanCore

/// Loads the `languages` reference table from `iso639_3_languages.csv` (header `iso639_3,iso639_1,iso639_2b,
/// iso_name,cldr_name_en,name_ar,native_name,scope,type`): one row per ISO 639-3 code, keyed by the canonical code
/// (639-1 where one exists, else 639-3), upserted so a re-import updates in place. English name: CLDR's, else ISO's.
package enum LanguageImporter {
    /// A record that could not be mapped.
    package struct Rejection: Sendable, Hashable {
        package let line: Int
        package let field: String
        package let reason: String
    }

    package struct Summary: Sendable {
        package var imported = 0
        package var rejections: [Rejection] = []
    }

    static let header = ["iso639_3", "iso639_1", "iso639_2b", "iso_name", "cldr_name_en", "name_ar", "native_name", "scope", "type"]

    /// The rows of `csv`, and the records it rejected. 22023 when the header is not the expected one.
    package static func rows(fromCSV csv: String) throws -> (rows: [RowValues], rejections: [Rejection]) {
        var reader = CSVReader(text: csv, file: "languages CSV", trimsFields: false)
        let records = try reader.records()
        guard let first = records.first, first.fields == header else {
            throw CaravanError(.invalidParameterValue, "languages CSV: unexpected header", details: "expected \(header.joined(separator: ","))")
        }
        var rows: [RowValues] = []
        var rejections: [Rejection] = []
        var seen = Set<String>()
        for csvRecord in records.dropFirst() {
            let record = csvRecord.fields, line = csvRecord.line
            guard record.count == header.count else {
                rejections.append(Rejection(line: line, field: "record", reason: "has \(record.count) fields, expected \(header.count)"))
                continue
            }
            let field = Dictionary(uniqueKeysWithValues: zip(header, record))
            let iso3 = field["iso639_3"] ?? "", iso1 = field["iso639_1"] ?? ""
            guard iso3.count == 3, iso3.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
                rejections.append(Rejection(line: line, field: "iso639_3", reason: "not a three-letter code")); continue
            }
            let name = (field["cldr_name_en"].flatMap { $0.isEmpty ? nil : $0 }) ?? field["iso_name"] ?? ""
            guard !name.isEmpty else { rejections.append(Rejection(line: line, field: "iso_name", reason: "no English name")); continue }
            let code = iso1.isEmpty ? iso3 : iso1
            guard seen.insert(code).inserted else { rejections.append(Rejection(line: line, field: "iso639_1", reason: "code \(code) repeated")); continue }
            func optional(_ key: String) -> Value { (field[key]).flatMap { $0.isEmpty ? nil : Value.text($0) } ?? .null }
            rows.append(RowValues([
                "code": .text(code), "iso639_3": .text(iso3), "iso639_1": optional("iso639_1"), "iso639_2b": optional("iso639_2b"),
                "name_en": .text(name), "name_ar": optional("name_ar"), "native_name": optional("native_name"),
                "scope": optional("scope"), "type": optional("type"),
            ]))
        }
        return (rows, rejections)
    }

    /// Upserts the languages of `csv` in `tx` (the service role's), by `code`.
    package static func load(csv: String, in tx: any StoreTransaction) async throws -> Summary {
        let (rows, rejections) = try rows(fromCSV: csv)
        var summary = Summary(rejections: rejections)
        let conflict = ConflictTarget(columns: ["code"], resolution: .merge)
        var start = 0
        while start < rows.count {
            let batch = Array(rows[start..<min(rows.count, start + 500)])
            _ = try await tx.insert(batch, into: LanguageExchangeSchema.languages, conflict: conflict)
            summary.imported += batch.count
            start += batch.count
        }
        return summary
    }
}
