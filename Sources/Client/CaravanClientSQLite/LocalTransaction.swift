package import CaravanCore
import Foundation
import GRDB
import GRDBSQLite

/// One transaction of the on-device store, with typed operations on the mirrored rows; the bookkeeping
/// (outbox, cursors, session, caches) is in the extensions beside this file.
package struct LocalTransaction {
    let db: Database
    let insertStatements: [String: (inserting: String, replacing: String)]

    // MARK: Mirrored rows

    /// Rows of `table` whose columns equal the given values (null: IS NULL), as JSON objects, by primary key.
    package func rows(_ table: TableSchema, where conditions: [(String, JSONValue)] = []) throws -> [JSONValue] {
        var terms: [String] = []
        var arguments: [DatabaseValue] = []
        for (name, value) in conditions {
            guard let column = table.column(named: name) else { throw LocalStorageError.unknownColumn(table: table.name, column: name) }
            if value == .null {
                terms.append("\(LocalSchema.quote(name)) IS NULL")
            } else {
                terms.append("\(LocalSchema.quote(name)) = ?")
                arguments.append(try LocalValues.databaseValue(value, for: column))
            }
        }
        return try Row.fetchAll(db, sql: LocalSchema.select(table, where: terms), arguments: StatementArguments(arguments)).map { row in
            .object(table.columns.enumerated().map { index, column in (column.name, LocalValues.json(row[index], for: column)) })
        }
    }

    /// The row of `table` whose primary key is `rowKey` (`TableSchema.keyText(of:)`), or nil.
    package func row(_ table: TableSchema, rowKey: String) throws -> JSONValue? {
        guard let key = try? JSONParser.parse(rowKey) else { return nil }
        return try rows(table, where: table.primaryKey.map { ($0, key[$0] ?? .null) }).first
    }

    /// The primary keys (as `keyText`) of every row of `table`.
    package func rowKeys(_ table: TableSchema) throws -> [String] {
        try keys(of: table, sql: LocalSchema.select(table, columns: table.primaryKey, where: []), arguments: [])
    }

    /// The keys of the rows of `table` whose columns have the values of `matching` (a JSON object of column → value;
    /// every row when it is empty).
    package func rowKeys(_ table: TableSchema, matching: JSONValue) throws -> [String] {
        guard case .object(let pairs) = matching else { return [] }
        var terms: [String] = []
        var arguments: [DatabaseValue] = []
        for (name, value) in pairs {
            guard let column = table.column(named: name) else { throw LocalStorageError.unknownColumn(table: table.name, column: name) }
            terms.append("\(LocalSchema.quote(name)) = ?")
            arguments.append(try LocalValues.databaseValue(value, for: column))
        }
        return try keys(of: table, sql: LocalSchema.select(table, columns: table.primaryKey, where: terms), arguments: StatementArguments(arguments))
    }

    /// Writes `row` (a JSON object; absent columns are NULL) as the local row, in one pass over its fields.
    /// Without `replacing`, a row with the same key is refused (`duplicateKey`).
    package func writeRow(_ row: JSONValue, into table: TableSchema, replacing: Bool) throws {
        var values = [DatabaseValue](repeating: .null, count: table.columns.count)
        if case .object(let pairs) = row {
            for (name, value) in pairs {
                guard let position = table.position(of: name) else { continue }
                values[position] = try LocalValues.databaseValue(value, for: table.columns[position])
            }
        }
        do {
            let sql = replacing ? insertStatements[table.name]?.replacing : insertStatements[table.name]?.inserting
            try db.cachedStatement(sql: sql ?? LocalSchema.insert(table, replacing: replacing)).execute(arguments: StatementArguments(values))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw LocalStorageError.duplicateKey(table: table.name)
        }
    }

    /// The statement that writes (replacing) whole rows of `table` given as the values of its columns in their order,
    /// prepared once for many rows: the pull's hot path (`PullPageDecoder` decodes records into such values).
    package func rowWriter(_ table: TableSchema) throws -> RowWriter {
        // A statement of its own (not the cached one `writeRow` binds through GRDB): its arguments are marked as bound
        // once, so GRDB only resets it before each execution; each row binds its values straight from `Value` (no
        // `StatementArguments` per row: building one cost more than the insert).
        let statement = try db.makeStatement(sql: insertStatements[table.name]?.replacing ?? LocalSchema.insert(table, replacing: true))
        statement.setUncheckedArguments(StatementArguments([(any DatabaseValueConvertible)?](repeating: nil, count: table.columns.count)))
        return RowWriter(table: table, statement: statement)
    }

    package struct RowWriter {
        let table: TableSchema
        let statement: Statement

        /// Writes one row: `values` are those of the table's columns, in their order (the form `LocalValues` keeps).
        package func write(_ values: [Value]) throws {
            guard values.count == table.columns.count else {
                throw LocalStorageError.badValue(column: table.name, "\(values.count) values for the \(table.columns.count) columns of \(table.name)")
            }
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)   // its outcome is the last execution's, which threw if it failed
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                let code: Int32
                switch value {
                case .null: code = sqlite3_bind_null(handle, index)
                case .bool(let b): code = sqlite3_bind_int64(handle, index, b ? 1 : 0)
                case .integer(let i): code = sqlite3_bind_int64(handle, index, i)
                case .double(let d): code = sqlite3_bind_double(handle, index, d)
                case .text(var text), .json(var text):
                    code = text.withUTF8 { sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
                }
                guard code == SQLITE_OK else { throw LocalStorageError.badValue(column: table.columns[offset].name, "SQLite refused the value (\(code))") }
            }
            do {
                try statement.execute()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw LocalStorageError.duplicateKey(table: table.name)
            }
        }

        /// SQLite copies the bound text (`SQLITE_TRANSIENT`).
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    /// Deletes the row of `table` with key `rowKey`, and its freshness record.
    package func deleteRow(_ table: TableSchema, rowKey: String) throws {
        guard let key = try? JSONParser.parse(rowKey) else { return }
        let values = try table.primaryKey.map { name -> DatabaseValue in
            guard let column = table.column(named: name) else { return .null }
            return try LocalValues.databaseValue(key[name] ?? .null, for: column)
        }
        try db.cachedStatement(sql: LocalSchema.deleteByKey(table)).execute(arguments: StatementArguments(values))
        try db.cachedStatement(sql: #"DELETE FROM "caravan_local_rows" WHERE "table_name" = ? AND "row_key" = ?"#).execute(arguments: [table.name, rowKey])
    }

    /// The keys of the rows past the `count` newest per value of `group`, newest by `order` (nulls oldest), then by key.
    package func rowKeysBeyond(_ count: Int, of table: TableSchema, groupedBy group: String, orderedBy order: String) throws -> [String] {
        for name in [group, order] where table.column(named: name) == nil { throw LocalStorageError.unknownColumn(table: table.name, column: name) }
        return try keys(of: table, sql: LocalSchema.surplus(table, group: group, order: order), arguments: [count])
    }

    /// The key and the value of `column` of every row of `table` where it is not null.
    package func rowKeysAndValues(_ table: TableSchema, column: String) throws -> [(key: String, value: JSONValue)] {
        guard let declared = table.column(named: column) else { throw LocalStorageError.unknownColumn(table: table.name, column: column) }
        let names = table.primaryKey + [column]
        let sql = LocalSchema.select(table, columns: names, where: ["\(LocalSchema.quote(column)) IS NOT NULL"])
        return try Row.fetchAll(db, sql: sql).compactMap { row in
            guard let key = keyText(table, row) else { return nil }
            return (key, LocalValues.json(row[names.count - 1], for: declared))
        }
    }

    private func keys(of table: TableSchema, sql: String, arguments: StatementArguments) throws -> [String] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { keyText(table, $0) }
    }

    /// The key text of a fetched row whose first columns are `table`'s primary key.
    private func keyText(_ table: TableSchema, _ row: Row) -> String? {
        let pairs = table.primaryKey.enumerated().map { index, name -> (key: String, value: JSONValue) in
            guard let column = table.column(named: name) else { return (name, .null) }
            return (name, LocalValues.json(row[index], for: column))
        }
        return table.keyText(of: .object(pairs))
    }
}
