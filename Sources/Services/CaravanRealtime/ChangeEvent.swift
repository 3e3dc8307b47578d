package import CaravanCore

/// A row of a change-log record, typed by its table's columns so policies and filters can evaluate it.
package struct ChangeRow: Sendable {
    /// The record's members in column order, as JSON (what `record` sends).
    package let members: [(key: String, value: JSONValue)]
    /// The typed values by column name.
    package let values: [String: Value]

    /// Parses a change-log record (JSON object text written by the pipeline). A record that does not parse is a
    /// log corruption: it throws, and the hub reports it rather than guessing.
    package init(json text: String, table: TableSchema) throws(CaravanError) {
        guard case .object(let members) = try JSONParser.parse(text) else {
            throw CaravanError(.internalFailure, "change-log record is not an object", internalDetail: table.name)
        }
        var values: [String: Value] = [:]
        values.reserveCapacity(members.count)
        for (key, value) in members {
            guard let column = table.column(named: key) else { continue }
            values[key] = Self.typed(value, type: column.type)
        }
        self.members = members
        self.values = values
    }

    /// The stored value of a record member: the pipeline writes values as REST emits them.
    static func typed(_ json: JSONValue, type: ColumnType) -> Value {
        switch (type, json) {
        case (_, .null): return .null
        case (.json, _), (.textArray, _): return .json(json.jsonText)
        case (_, .string(let s)): return .text(s)
        case (.double, .integer(let i)), (.decimal, .integer(let i)): return .double(Double(i))
        case (_, .integer(let i)): return .integer(i)
        case (_, .double(let d)): return .double(d)
        case (_, .bool(let b)): return .bool(b)
        default: return .json(json.jsonText)
        }
    }

    /// The value of `column` (NULL when absent), for `BoundPredicate.evaluate`.
    package func value(_ column: String) -> Value { values[column] ?? .null }
}

/// A change decoded once for every subscriber: its table, new and old rows.
package struct DecodedChange: Sendable {
    package let change: Change
    package let table: TableSchema
    package let new: ChangeRow?
    package let old: ChangeRow?

    package init(_ change: Change, table: TableSchema) throws(CaravanError) {
        self.change = change
        self.table = table
        self.new = try change.record.map { (text) throws(CaravanError) in try ChangeRow(json: text, table: table) }
        self.old = try change.oldRecord.map { (text) throws(CaravanError) in try ChangeRow(json: text, table: table) }
    }

    /// The primary key members of `row`, in key order.
    func keyMembers(of row: ChangeRow) -> [(key: String, value: JSONValue)] {
        table.primaryKey.map { name in (key: name, value: row.members.first(where: { $0.key == name })?.value ?? .null) }
    }

    /// Whether a record's JSON is over the size cap (then only its key is sent).
    func isOversized(_ limit: Int) -> Bool { (change.record?.utf8.count ?? 0) > limit }
}

/// Builds the `data` object of a `postgres_changes` push (wire-protocol §4.4).
package struct ChangePayloadBuilder: Sendable {
    /// Records larger than this (bytes of JSON) are sent key-only (DECISION: 1 MiB).
    package var recordSizeLimit = 1 << 20

    package init(recordSizeLimit: Int = 1 << 20) { self.recordSizeLimit = recordSizeLimit }

    /// The `data` JSON text for `change` delivered as `type`, limited to `select` columns (nil: all).
    package func data(for change: DecodedChange, as type: DeliveredEvent, select: [String]?) -> String {
        let table = change.table
        let keyOnly = type == .delete
        let columnNames: [String] = keyOnly ? table.primaryKey : (select ?? table.columns.map(\.name))
        var members: [(key: String, value: JSONValue)] = [
            ("schema", .string("public")),
            ("table", .string(table.name)),
            ("commit_timestamp", .string(Self.commitTimestamp(change.change.committedAt))),
            ("type", .string(type.rawValue)),
            ("columns", .array(columnNames.compactMap { name in
                table.column(named: name).map { JSONValue.object([("name", .string(name)), ("type", .string($0.type.postgresName))]) }
            })),
        ]
        if type != .delete, let new = change.new {
            let record: [(key: String, value: JSONValue)]
            if change.isOversized(recordSizeLimit) {
                record = change.keyMembers(of: new)
            } else {
                let wanted = Set(columnNames)
                record = new.members.filter { wanted.contains($0.key) }
            }
            members.append(("record", .object(record)))
        }
        if type != .insert, let keyRow = change.old ?? change.new {
            members.append(("old_record", .object(change.keyMembers(of: keyRow))))
        }
        members.append(("errors", .null))
        members.append(("seq", .integer(change.change.seq)))
        return JSONValue.object(members).jsonText
    }

    /// UTC with milliseconds and `Z` (`2026-01-01T12:00:00.123Z`) from the log's canonical timestamp.
    static func commitTimestamp(_ text: String) -> String {
        // Canonical log timestamps are `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00` (or `Z`).
        guard text.count >= 19 else { return text }
        let seconds = text.prefix(19)
        var fraction = "000"
        let rest = text.dropFirst(19)
        if rest.first == "." {
            let digits = rest.dropFirst().prefix { $0.isNumber }
            fraction = String((digits + "000").prefix(3))
        }
        return "\(seconds).\(fraction)Z"
    }
}
