package import CaravanCore

/// Logged rows that lack columns of their table, filled from the rows as stored now.
///
/// A change is logged with the columns its writer declared: one written by an instance of the app's previous version
/// during a rolling upgrade, or before a migration added a column, lacks the new column. A device replaces its whole
/// row with a pulled upsert, so the pull sends the missing columns' current values (the writer could not have changed
/// them; a later change of theirs follows in the log). A row gone since, or out of the caller's view now, is sent as a
/// delete: its logged record, lacking columns, cannot say whether the caller may see it.
struct MissingColumns {
    /// Positions in the page's changes of upserts whose logged record lacks a column.
    private(set) var positions: [Int] = []

    /// Notes `change` (at `position` in the page) when its logged row `values` lacks a column of `table`.
    mutating func note(_ change: PulledChange, at position: Int, values: [String: Value]?, table: TableSchema) {
        guard change.operation == .upsert, case .text? = change.record, let values, values.count < table.columns.count else { return }
        positions.append(position)
    }

    /// Keys looked up per read: SQLite refuses an expression deeper than 1,000 terms, and a composite key is an `or`
    /// of `and`s.
    static let keysPerRead = 200

    /// `changes` with the noted records completed from the stored rows (one read per table and 200 keys).
    /// Read under the caller's rule. A noted row out of the caller's view now (or gone) is sent as a delete: its logged
    /// record lacks columns the rule may read (a row soft-deleted by a newer writer and then updated by an older one
    /// logs no `deleted_at`), so the logged record never reaches the caller.
    func filled(_ changes: [PulledChange], tables: SyncTables, store: any Store) async throws -> [PulledChange] {
        guard !positions.isEmpty else { return changes }
        var out = changes
        let byTable = Dictionary(grouping: positions, by: { changes[$0].table })
        for (name, positions) in byTable {
            guard let entry = tables.entry(named: name) else { continue }
            let table = entry.table
            let renamed = RenamedColumns(table)
            // Keys under the current names (a change logged before a rename of a key column says the old name).
            var keys: [String: JSONValue] = [:]
            for position in positions where keys[changes[position].keyJSON] == nil {
                keys[changes[position].keyJSON] = renamed.canonicalKey(try JSONParser.parse(changes[position].keyJSON))
            }
            let names = table.columns.map(\.name)
            let keyPositions = table.primaryKey.compactMap { table.position(of: $0) }
            var stored: [JSONValue: [Value]] = [:]
            let distinct = Array(Set(keys.values))
            for start in stride(from: 0, to: distinct.count, by: Self.keysPerRead) {
                let chunk = distinct[start..<min(start + Self.keysPerRead, distinct.count)]
                let matches = try chunk.map { key throws(CaravanError) in try MutationWrite.keyMatch(key, table: table) }
                let plan = try ReadPlan(table: table, query: Query(limit: matches.count), access: .both(entry.visibility.rule, .or(matches)),
                                        maxRows: nil, includeCount: false)
                for row in try await store.fetch(plan).rows {
                    let key = renamed.canonicalKey(try JSONParser.parse(SyncPuller.object(keyPositions.map { row[$0] }, names: table.primaryKey)))
                    stored[key] = row
                }
            }
            var present = Set<String>()
            for position in positions {
                let change = changes[position]
                guard let key = keys[change.keyJSON], let row = stored[key] else {
                    out[position] = PulledChange(seq: change.seq, table: change.table, operation: .delete, key: .text(keys[change.keyJSON]?.jsonText ?? change.keyJSON), record: nil)
                    continue
                }
                guard case .text(let text)? = change.record, text.last == "}", case .object(let fields) = try JSONParser.parse(text) else { continue }
                present = Set(fields.map(\.key))
                for (old, new) in renamed.pairs where present.contains(old) { present.insert(new) }
                // The logged text as it is, with the missing columns written as a pull writes stored values.
                var writer = JSONWriter()
                writer.writeRaw(String(text.dropLast()))
                var comma = !fields.isEmpty
                for (index, name) in names.enumerated() where !present.contains(name) {
                    if comma { writer.writeRaw(",") }
                    comma = true
                    writer.writeString(name)
                    writer.writeRaw(":")
                    writer.write(row[index])
                }
                writer.writeRaw("}")
                out[position] = PulledChange(seq: change.seq, table: change.table, operation: change.operation, key: change.key,
                                             record: .text(writer.string))
            }
        }
        return out
    }
}
