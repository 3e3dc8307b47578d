package import CaravanCore

/// What `caravan copy` did, table by table.
package struct CopyReport: Sendable {
    /// One table: rows and checksum read from the source, and read back from the target after the commit.
    package struct Table: Sendable {
        package let name: String
        package let sourceRows: Int
        package let targetRows: Int
        package let sourceChecksum: String
        package let targetChecksum: String

        package var matches: Bool { sourceRows == targetRows && sourceChecksum == targetChecksum }
    }

    package let tables: [Table]
    /// Whether the target's existing rows were removed first (`--force`).
    package let replacedExistingRows: Bool

    /// The tables whose count or checksum differ.
    package var mismatches: [Table] { tables.filter { !$0.matches } }

    /// `{"tables": [{"table", "source_rows", "target_rows", "source_checksum", "target_checksum", "ok"}…], "ok", "replaced"}`.
    package var json: JSONValue {
        .object([
            ("tables", .array(tables.map { table in
                .object([
                    ("table", .string(table.name)),
                    ("source_rows", .integer(Int64(table.sourceRows))),
                    ("target_rows", .integer(Int64(table.targetRows))),
                    ("source_checksum", .string(table.sourceChecksum)),
                    ("target_checksum", .string(table.targetChecksum)),
                    ("ok", .bool(table.matches)),
                ])
            })),
            ("ok", .bool(mismatches.isEmpty)),
            ("replaced", .bool(replacedExistingRows)),
        ])
    }

    /// One line per table: name, rows, a short checksum, and `ok` or `MISMATCH`.
    package var text: String {
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        let width = max(5, tables.map(\.name.count).max() ?? 0)
        var lines = [pad("table", width) + "  rows (source → target)  checksum          result"]
        for table in tables {
            lines.append(pad(table.name, width) + "  " + pad("\(table.sourceRows) → \(table.targetRows)", 23) + "  "
                + String(table.targetChecksum.prefix(16)) + "  " + (table.matches ? "ok" : "MISMATCH"))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
