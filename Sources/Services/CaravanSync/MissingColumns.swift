package import CaravanCore

/// Logged rows that lack columns of their table, filled from the rows as stored now.
///
/// A change is logged with the columns its writer declared: one written by an instance of the app's previous version
/// during a rolling upgrade, or before a migration added a column, lacks the new column. A device replaces its whole
/// row with a pulled upsert, so the pull sends the missing columns' current values (the writer could not have changed
/// them; a later change of theirs follows in the log). A row gone since, or out of the caller's view, is sent as
/// logged: its delete follows.
struct MissingColumns {
    /// Positions in the page's changes of upserts whose logged record lacks a column.
    private(set) var positions: [Int] = []

    /// Notes `change` (at `position` in the page) when its logged row `values` lacks a column of `table`.
    mutating func note(_ change: PulledChange, at position: Int, values: [String: Value]?, table: TableSchema) {
        guard change.operation == .upsert, case .text? = change.record, let values, values.count < table.columns.count else { return }
        positions.append(position)
    }

    /// `changes` with the noted records completed from the stored rows (one read per table).
    /// Read under the caller's rule: a row out of view now is sent as logged (its delete follows).
    func filled(_ changes: [PulledChange], tables: SyncTables, store: any Store) async throws -> [PulledChange] {
        guard !positions.isEmpty else { return changes }
        var out = changes
        let byTable = Dictionary(grouping: positions, by: { changes[$0].table })
        for (name, positions) in byTable {
            guard let entry = tables.entry(named: name) else { continue }
            let table = entry.table
            var matches: [BoundPredicate] = []
            var seen = Set<String>()
            for position in positions where seen.insert(changes[position].keyJSON).inserted {
                matches.append(try MutationWrite.keyMatch(try JSONParser.parse(changes[position].keyJSON), table: table))
            }
            let plan = try ReadPlan(table: table, query: Query(limit: matches.count), access: .both(entry.visibility.rule, .or(matches)), maxRows: nil, includeCount: false)
            let names = table.columns.map(\.name)
            var stored: [String: [Value]] = [:]
            for row in try await store.fetch(plan).rows {
                let key = SyncPuller.object(table.primaryKey.compactMap { table.position(of: $0) }.map { row[$0] }, names: table.primaryKey)
                stored[key] = row
            }
            for position in positions {
                let change = changes[position]
                guard let row = stored[change.keyJSON], case .text(let text)? = change.record, text.last == "}",
                      case .object(let fields) = try JSONParser.parse(text) else { continue }
                var present = Set(fields.map(\.key))
                for column in table.columns where column.renamedFrom.map(present.contains) == true { present.insert(column.name) }
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
