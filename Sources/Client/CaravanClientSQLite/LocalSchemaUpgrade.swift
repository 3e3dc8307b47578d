import CaravanCore
import Foundation
import GRDB

/// A store made from older declarations, opened with newer ones: each mirror is brought to its table's declaration
/// in place. Each table's declaration is recorded (`caravan_local_meta`, key `schema:<table>`: its fingerprint);
/// opening the store with another one renames the columns declared `renamedFrom:` (and the outbox's waiting writes
/// with them), adds the new columns (a constant default filled in), and marks the table to be pulled again
/// (`refetch:<table>`), so its rows come back from the server as they are now. The outbox is never dropped: its
/// writes are pushed, then applied over the re-pulled rows as always. Columns no longer declared stay, unread.
enum LocalSchemaUpgrade {
    /// What the declaration of `table` is recorded as: its columns (name and type, in order) and primary key.
    static func fingerprint(_ table: TableSchema) -> String {
        table.columns.map { "\($0.name) \($0.type.postgresName)" }.joined(separator: ",") + " key " + table.primaryKey.joined(separator: ",")
    }

    static func schemaKey(_ table: String) -> String { "schema:" + table }
    static func refetchKey(_ table: String) -> String { "refetch:" + table }

    /// Brings every mirror of `tables` to its declaration, in the open transaction.
    static func upgrade(_ tables: [TableSchema], in db: Database) throws {
        for table in tables {
            let recorded = try String.fetchOne(db, sql: #"SELECT "value" FROM "caravan_local_meta" WHERE "key" = ?"#, arguments: [schemaKey(table.name)])
            let current = fingerprint(table)
            guard recorded != current else { continue }
            var changed = recorded != nil
            if try !db.tableExists(table.name) {
                try db.execute(sql: LocalSchema.createMirror(table))
                changed = false  // nothing mirrored yet: the first pull of it is a snapshot
            } else {
                changed = try alter(table, in: db) || changed
            }
            try db.execute(sql: #"INSERT OR REPLACE INTO "caravan_local_meta" ("key", "value") VALUES (?, ?)"#, arguments: [schemaKey(table.name), current])
            if changed {
                try db.execute(sql: #"INSERT OR REPLACE INTO "caravan_local_meta" ("key", "value") VALUES (?, '1')"#, arguments: [refetchKey(table.name)])
            }
        }
    }

    /// Renames and adds columns of an existing mirror; whether anything changed.
    private static func alter(_ table: TableSchema, in db: Database) throws -> Bool {
        var existing = Set(try db.columns(in: table.name).map(\.name))
        var changed = false
        for column in table.columns where !existing.contains(column.name) {
            if let old = column.renamedFrom, existing.contains(old) {
                try db.execute(sql: "ALTER TABLE \(LocalSchema.quote(table.name)) RENAME COLUMN \(LocalSchema.quote(old)) TO \(LocalSchema.quote(column.name))")
                try renameInOutbox(table, from: old, to: column.name, in: db)
                existing.remove(old)
            } else {
                var sql = "ALTER TABLE \(LocalSchema.quote(table.name)) ADD COLUMN \(LocalSchema.quote(column.name)) \(LocalValues.physicalType(column.type))"
                if case .value(let value)? = column.defaultValue, let literal = literal(JSONValue(value), for: column) { sql += " DEFAULT " + literal }
                try db.execute(sql: sql)
            }
            existing.insert(column.name)
            changed = true
        }
        return changed
    }

    /// The waiting writes of `table` name the column by its new name: in their records, their keys and row keys (and,
    /// for a key column, the row keys of the freshness and eviction records).
    private static func renameInOutbox(_ table: TableSchema, from old: String, to new: String, in db: Database) throws {
        if table.primaryKey.contains(new) {
            for bookkeeping in ["caravan_local_rows", "caravan_local_evicted"] {
                let keys = try String.fetchAll(db, sql: "SELECT \"row_key\" FROM \"\(bookkeeping)\" WHERE \"table_name\" = ?", arguments: [table.name])
                for key in keys {
                    guard let parsed = try? JSONParser.parse(key), let renamedKey = table.keyText(of: renamedKeyColumns(parsed, of: table)) else { continue }
                    try db.execute(sql: "UPDATE \"\(bookkeeping)\" SET \"row_key\" = ? WHERE \"table_name\" = ? AND \"row_key\" = ?",
                                   arguments: [renamedKey, table.name, key])
                }
            }
        }
        let rows = try Row.fetchAll(db, sql: #"SELECT "position", "key", "record" FROM "caravan_local_outbox" WHERE "table_name" = ?"#,
                                    arguments: [table.name])
        for row in rows {
            let position: Int64 = row["position"]
            let key = (try? JSONParser.parse(row["key"] as String)).map { renamed($0, from: old, to: new) } ?? .null
            let record = (row["record"] as String?).flatMap { try? JSONParser.parse($0) }.map { renamed($0, from: old, to: new) }
            let rowKey = table.keyText(of: renamedKeyColumns(key, of: table))
            try db.execute(sql: """
                UPDATE "caravan_local_outbox" SET "key" = ?, "record" = ?, "row_key" = coalesce(?, "row_key") WHERE "position" = ?
                """, arguments: [key.jsonText, record?.jsonText, rowKey, position])
        }
    }

    /// A key with every declared rename of `table` applied at once: a composite key with two renamed columns is a key
    /// of the table only once both are renamed.
    static func renamedKeyColumns(_ key: JSONValue, of table: TableSchema) -> JSONValue {
        guard case .object(let pairs) = key else { return key }
        let renames = Dictionary(table.columns.compactMap { column in column.renamedFrom.map { ($0, column.name) } }, uniquingKeysWith: { first, _ in first })
        return .object(pairs.map { (renames[$0.key] ?? $0.key, $0.value) })
    }

    static func renamed(_ object: JSONValue, from old: String, to new: String) -> JSONValue {
        guard case .object(let pairs) = object else { return object }
        return .object(pairs.map { $0.key == old ? (new, $0.value) : $0 })
    }

    /// A default as an SQL literal (ALTER TABLE takes no bound values), or nil when it is not a plain number or text.
    private static func literal(_ json: JSONValue, for column: CaravanCore.Column) -> String? {
        guard let value = try? LocalValues.databaseValue(json, for: column) else { return nil }
        switch value.storage {
        case .int64(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : nil
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .null, .blob: return nil
        }
    }
}
