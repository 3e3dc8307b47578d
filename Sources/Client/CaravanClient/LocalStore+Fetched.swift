import CaravanClientSQLite
import CaravanCore

/// Rows read from the server on demand (not synced: LangMatcher's profiles of the people one talks to), kept in the
/// local mirror with their fetch time so a `timeToLive` rule can say whether they are fresh and remove them when not.
extension LocalStore {
    /// The table's `timeToLive` in seconds, when a rule gives it one.
    func timeToLive(of table: String) -> Int64? {
        for rule in caches { if case .timeToLive(table, let seconds) = rule { return seconds } }
        return nil
    }

    /// The local copy of the row with key `rowKey` and when it was fetched (seconds), if there is one.
    func fetchedRow(_ table: TableSchema, rowKey: String) throws -> (row: JSONValue, fetchedAt: Int64?)? {
        try read { transaction in
            guard let row = try transaction.row(table, rowKey: rowKey) else { return nil }
            return (row, try transaction.fetchedAt(table: table.name, rowKey: rowKey))
        }
    }

    /// Keeps the server's copy of a row read at `now` (nil: the server has none, or hides it), unless local writes of
    /// the row are still waiting for the server.
    func keepFetched(_ table: TableSchema, rowKey: String, serverRow: JSONValue?, now: Int64) throws {
        try write { transaction in
            guard try transaction.outboxCount(table: table.name, rowKey: rowKey, states: ["pending", "parked"]) == 0 else { return }
            if let serverRow {
                try transaction.writeRow(.object(table.columns.map { ($0.name, serverRow[$0.name] ?? .null) }), into: table, replacing: true)
                try transaction.markFetched(table: table.name, rowKey: rowKey, now: now)
            } else {
                try transaction.deleteRow(table, rowKey: rowKey)
            }
        }
    }
}
