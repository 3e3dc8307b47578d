/// Turns a JSON body into typed rows for a table (wire-protocol §2.6).
package struct RowDecoder: Sendable {
    package let table: TableSchema
    /// `columns=`: only these are written; absent keys become NULL (or DEFAULT with `missing=default`).
    package let columns: [String]?
    package let missingIsDefault: Bool

    package init(table: TableSchema, columns: [String]?, missingIsDefault: Bool) {
        self.table = table
        self.columns = columns
        self.missingIsDefault = missingIsDefault
    }

    package func rows(from body: JSONValue) throws(CaravanError) -> [RowValues] {
        let objects: [[(key: String, value: JSONValue)]]
        switch body {
        case .object(let pairs): objects = [pairs]
        case .array(let items):
            var list: [[(key: String, value: JSONValue)]] = []
            for item in items {
                guard case .object(let pairs) = item else { throw CaravanError(.malformedBody, "Empty or invalid json", details: "Every array element must be a JSON object") }
                list.append(pairs)
            }
            objects = list
        default:
            throw CaravanError(.malformedBody, "Empty or invalid json", details: "The body must be a JSON object or an array of objects")
        }
        let names: [String]
        if let columns {
            names = columns
        } else {
            names = objects.first.map { $0.map(\.key) } ?? []
            let expected = Set(names)
            if objects.contains(where: { Set($0.map(\.key)) != expected }) {
                throw CaravanError(.malformedBody, "All object keys must match")
            }
        }
        for name in names where table.column(named: name) == nil {
            throw CaravanError(.unknownBodyColumn, "Could not find the '\(name)' column of '\(table.name)' in the schema cache")
        }
        var rows: [RowValues] = []
        for pairs in objects {
            var columns: [String] = []
            var values: [Value] = []
            for name in names {
                guard let column = table.column(named: name) else { continue }
                if let json = pairs.first(where: { $0.key == name })?.value {
                    do {
                        values.append(try column.type.value(fromJSON: json))
                    } catch {
                        throw CaravanError(error.code, error.message, details: "column \(table.name).\(name)")
                    }
                    columns.append(name)
                } else if !missingIsDefault {
                    columns.append(name)
                    values.append(.null)
                }
            }
            rows.append(RowValues(columns: columns, values: values))
        }
        return rows
    }
}
