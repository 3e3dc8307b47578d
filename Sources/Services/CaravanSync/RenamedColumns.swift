package import CaravanCore

/// The old names a synced table's columns answer to, so a device built before a rename keeps syncing: a column declared
/// `Column("title", …, renamedFrom: "name")` takes a pushed `name` as `title`, and every pulled row carries both `title`
/// and `name` (each client keeps the one it declares and skips the other). Pulled rows logged before the rename, which
/// say `name`, get `title` as well. Removing `renamedFrom:` from the declaration, once no old device syncs, stops it.
package struct RenamedColumns: Sendable {
    /// (old name, current name) of each renamed column.
    package let pairs: [(old: String, new: String)]

    package init(_ table: TableSchema) {
        pairs = table.columns.compactMap { column in
            guard let old = column.renamedFrom, table.column(named: old) == nil else { return nil }
            return (old, column.name)
        }
    }

    package var isEmpty: Bool { pairs.isEmpty }

    /// A pushed record or key under the current names: an old name becomes its column's name, unless the current name
    /// is there too (then the current name's value wins and the old one is dropped).
    package func current(_ json: JSONValue) -> JSONValue {
        guard !pairs.isEmpty, case .object(let fields) = json else { return json }
        let present = Set(fields.map(\.key))
        return .object(fields.compactMap { field in
            guard let pair = pairs.first(where: { $0.old == field.key }) else { return field }
            return present.contains(pair.new) ? nil : (pair.new, field.value)
        })
    }

    /// A key under the current names with its members in name order: two keys of one row compare equal whatever
    /// names (before or after a rename) and order they were logged with.
    func canonicalKey(_ key: JSONValue) -> JSONValue {
        guard case .object(let pairs) = current(key) else { return key }
        return .object(pairs.sorted { $0.key < $1.key })
    }

    /// A pulled record carrying both names of each renamed column.
    package func bothNames(_ json: JSONValue) -> JSONValue {
        guard !pairs.isEmpty, case .object(var fields) = json else { return json }
        var present = Set(fields.map(\.key))
        for (old, new) in pairs {
            if let value = fields.first(where: { $0.key == new })?.value, !present.contains(old) {
                fields.append((old, value))
                present.insert(old)
            } else if let value = fields.first(where: { $0.key == old })?.value, !present.contains(new) {
                fields.append((new, value))
                present.insert(new)
            }
        }
        return .object(fields)
    }

    /// The changes of a pull page with both names in the upserted records of renamed tables.
    static func aliased(_ changes: [PulledChange], catalog: Catalog) throws(CaravanError) -> [PulledChange] {
        var renames: [String: RenamedColumns] = [:]
        var out: [PulledChange] = []
        out.reserveCapacity(changes.count)
        for change in changes {
            let renamed: RenamedColumns
            if let known = renames[change.table] {
                renamed = known
            } else {
                renamed = catalog.table(named: change.table).map { RenamedColumns($0) } ?? RenamedColumns(pairs: [])
                renames[change.table] = renamed
            }
            guard !renamed.isEmpty, change.operation != .evict else {
                out.append(change)
                continue
            }
            // Keys too: a renamed key column is named both ways, and a key logged before the rename gets the new name.
            out.append(PulledChange(seq: change.seq, table: change.table, operation: change.operation,
                                    key: try renamed.bothNames(change.key), record: try change.record.map { object throws(CaravanError) in try renamed.bothNames(object) }))
        }
        return out
    }

    /// `object` carrying both names of each renamed column.
    private func bothNames(_ object: PulledChange.Object) throws(CaravanError) -> PulledChange.Object {
        switch object {
        case .values(let values, let names):
            var values = values, names = names
            for (old, new) in pairs where !names.contains(old) {
                guard let position = names.firstIndex(of: new) else { continue }
                names.append(old)
                values.append(values[position])
            }
            return .values(values, names: names)
        case .text(let text):
            // The logged text kept as it is (numbers inside json columns included), the other names appended.
            guard text.last == "}", case .object(let fields) = try JSONParser.parse(text) else { return object }
            let present = Set(fields.map(\.key))
            var added = ""
            for (old, new) in pairs {
                if !present.contains(old), let value = fields.first(where: { $0.key == new })?.value {
                    added += "," + JSONValue.string(old).jsonText + ":" + value.jsonText
                } else if !present.contains(new), let value = fields.first(where: { $0.key == old })?.value {
                    added += "," + JSONValue.string(new).jsonText + ":" + value.jsonText
                }
            }
            return added.isEmpty ? object : .text(String(text.dropLast()) + added + "}")
        }
    }

    private init(pairs: [(old: String, new: String)]) {
        self.pairs = pairs
    }
}
