import CaravanCore
import GRDB

/// The write pipeline on one SQLite write transaction: schema validation, policies compiled into SQL, the write,
/// the re-read of what was stored (triggers included), and the change-log append — all on the same connection.
final class SQLiteTransaction: StoreTransaction {
    let db: Database
    let access: AccessContext
    private(set) var changes: [Change] = []
    private var validators: [String: RowValidator] = [:]

    init(db: Database, access: AccessContext) {
        self.db = db
        self.access = access
    }

    private var actor: String { access.identity.userID ?? access.identity.role.rawValue }

    // MARK: Reads

    func fetch(_ plan: ReadPlan) throws -> ReadResult {
        try SQLiteStore.run(plan, in: db)
    }

    /// Every column of the rows of `table` matching `predicate`, in primary-key order.
    func selectRows(_ table: TableSchema, where predicate: BoundPredicate) throws -> [[Value]] {
        var sql = SQLiteSQL()
        sql.append("SELECT \(table.columns.map { SQLiteSQL.quote($0.name) }.joined(separator: ", ")) FROM \(SQLiteSQL.quote(table.name)) WHERE ")
        sql.predicate(predicate)
        sql.append(" ORDER BY \(table.primaryKey.map(SQLiteSQL.quote).joined(separator: ", "))")
        return try SQLiteStore.fetchRows(try db.cachedStatement(sql: sql.text), arguments: sql.arguments, types: table.columns.map(\.type))
    }

    /// How many of the rows matching `rows` do not satisfy `rule` (NULL counts as not satisfied, as WITH CHECK does).
    private func countFailing(_ rule: BoundPredicate, in table: TableSchema, rows: BoundPredicate) throws -> Int {
        if case .constant(true) = rule { return 0 }
        var sql = SQLiteSQL()
        sql.append("SELECT count(*) FROM \(SQLiteSQL.quote(table.name)) WHERE ")
        sql.predicate(rows)
        sql.append(" AND NOT COALESCE((")
        sql.predicate(rule)
        sql.append("), 0)")
        return try Int.fetchOne(try db.cachedStatement(sql: sql.text), arguments: StatementArguments(sql.arguments)) ?? 0
    }

    func rankedFetch(_ search: RankedSearch) throws -> [RankedRow] {
        try SQLiteTextSearch.run(search, in: db)
    }

    // MARK: Keys and records

    static func primaryKeyValues(_ row: [Value], of table: TableSchema) -> [Value] {
        table.primaryKey.map { name in table.position(of: name).map { row[$0] } ?? .null }
    }

    static func matching(_ keys: [[Value]], in table: TableSchema) throws -> BoundPredicate {
        let columns = try table.primaryKey.map { try table.requireColumn($0) }
        if columns.count == 1 { return .inList(columns[0], keys.map { $0[0] }) }
        return .or(keys.map { key in .and(zip(columns, key).map { .compare($0, .eq, $1) }) })
    }

    static func json(_ values: [Value], names: [String]) -> String {
        var writer = JSONWriter()
        writer.bytes.append(UInt8(ascii: "{"))
        for (i, (name, value)) in zip(names, values).enumerated() {
            if i > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.writeString(name)
            writer.bytes.append(UInt8(ascii: ":"))
            writer.write(value)
        }
        writer.bytes.append(UInt8(ascii: "}"))
        return writer.string
    }

    private func log(_ operation: ChangeOperation, table: TableSchema, new: [Value]?, old: [Value]?) throws {
        let names = table.columns.map(\.name)
        guard let keyRow = new ?? old else { return }
        let key = Self.json(Self.primaryKeyValues(keyRow, of: table), names: table.primaryKey)
        let statement = try db.cachedStatement(sql: """
            INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "old_record", "committed_at", "actor")
            VALUES (?, ?, ?, ?, ?, \(SQLiteSchemaRenderer.nowExpression), ?) RETURNING "seq", "committed_at"
            """)
        let record = new.map { Self.json($0, names: names) }
        let oldRecord = old.map { Self.json($0, names: names) }
        guard let stored = try Row.fetchOne(statement, arguments: [table.name, key, operation.rawValue, record, oldRecord, actor]) else {
            throw CaravanError(.internalFailure, "the change log did not return its entry")
        }
        changes.append(Change(seq: stored["seq"], table: table.name, primaryKey: key, operation: operation, record: record,
                              oldRecord: oldRecord, committedAt: stored["committed_at"], actor: actor))
    }

    // MARK: Writes

    /// The table's validator, its CHECK rules bound once per transaction.
    private func validator(for table: TableSchema) throws(CaravanError) -> RowValidator {
        if let cached = validators[table.name] { return cached }
        let validator = try RowValidator(table: table)
        validators[table.name] = validator
        return validator
    }

    func insert(_ rows: [RowValues], into table: TableSchema, conflict: ConflictTarget?) throws -> WriteOutcome {
        var outcome = WriteOutcome()
        for row in rows { try write(row, into: table, conflict: conflict, outcome: &outcome) }
        return outcome
    }

    private func write(_ row: RowValues, into table: TableSchema, conflict: ConflictTarget?, outcome: inout WriteOutcome) throws {
        do {
            if let conflict {
                let conflictColumns = try conflict.columns.map { try table.requireColumn($0) }
                let match = BoundPredicate.and(conflictColumns.map { .compare($0, .eq, row[$0.name] ?? .null) })
                if let existing = try selectRows(table, where: match).first {
                    if conflict.resolution == .ignore { return }
                    try mergeUpdate(existing, with: row, table: table, conflictColumns: conflict.columns, outcome: &outcome)
                    return
                }
            }
            // As in Postgres, the policy's check comes before constraints (and foreign keys): a row the caller may
            // not write is refused as such. Checks that need other tables run after the insert, below.
            let check = try access.policies.rule(.insert, on: table, for: access.identity, catalog: access.catalog, forCheck: true)
            var checkedInMemory = check == .constant(true)
            if !check.containsSubquery, check != .constant(true) {
                let verdict = check.evaluate { name in
                    if let value = row[name] { return value }
                    if case .value(let value)? = table.column(named: name)?.defaultValue { return value }
                    return .null
                }
                if verdict != true { throw access.policyViolation(table) }
                // Decisive when every column it reads was sent (no default or trigger can change them on insert).
                checkedInMemory = check.columnNames.allSatisfy { row[$0] != nil }
            }
            try validator(for: table).validate(row)
            var sql = "INSERT INTO \(SQLiteSQL.quote(table.name))"
            if row.columns.isEmpty {
                sql += " DEFAULT VALUES"
            } else {
                sql += " (\(row.columns.map(SQLiteSQL.quote).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: row.columns.count).joined(separator: ", ")))"
            }
            sql += " RETURNING \(table.primaryKey.map(SQLiteSQL.quote).joined(separator: ", "))"
            let statement = try db.cachedStatement(sql: sql)
            let pkTypes = try table.primaryKey.map { try table.requireColumn($0).type }
            guard let key = try SQLiteStore.fetchRows(statement, arguments: row.values.map(SQLiteSQL.databaseValue), types: pkTypes).first else {
                throw CaravanError(.internalFailure, "insert returned no key")
            }
            let keyMatch = try Self.matching([key], in: table)
            if !checkedInMemory, try countFailing(check, in: table, rows: keyMatch) > 0 { throw access.policyViolation(table) }
            let stored = try selectRows(table, where: keyMatch)
            for new in stored { try log(.insert, table: table, new: new, old: nil) }
            outcome.rows.append(contentsOf: stored)
            outcome.inserted += stored.count
        } catch let error as DatabaseError {
            throw SQLiteStore.translate(error, table: table)
        }
    }

    private func mergeUpdate(_ existing: [Value], with row: RowValues, table: TableSchema, conflictColumns: [String], outcome: inout WriteOutcome) throws {
        let keyMatch = try Self.matching([Self.primaryKeyValues(existing, of: table)], in: table)
        let using = BoundPredicate.both(
            try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog),
            try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
        )
        if try countFailing(using, in: table, rows: keyMatch) > 0 { throw access.policyViolation(table) }
        let assignments = RowValues(
            columns: row.columns.filter { !conflictColumns.contains($0) },
            values: zip(row.columns, row.values).filter { !conflictColumns.contains($0.0) }.map(\.1)
        )
        let updated = try applyUpdate(table, set: assignments, oldRows: [existing])
        outcome.rows.append(contentsOf: updated)
        outcome.updated += updated.count
    }

    func update(_ table: TableSchema, set values: RowValues, where filter: BoundPredicate) throws -> WriteOutcome {
        do {
            for name in values.columns where table.column(named: name) == nil {
                throw CaravanError(.unknownBodyColumn, "Could not find the '\(name)' column of '\(table.name)' in the schema cache")
            }
            let target = BoundPredicate.both(filter, .both(
                try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog),
                try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
            ))
            let oldRows = try selectRows(table, where: target)
            var outcome = WriteOutcome()
            outcome.rows = try applyUpdate(table, set: values, oldRows: oldRows)
            outcome.updated = outcome.rows.count
            return outcome
        } catch let error as DatabaseError {
            throw SQLiteStore.translate(error, table: table)
        }
    }

    /// Updates `oldRows` (by primary key) with `values`, checks the update policy on the new rows, logs each change.
    private func applyUpdate(_ table: TableSchema, set values: RowValues, oldRows: [[Value]]) throws -> [[Value]] {
        guard !oldRows.isEmpty else { return [] }
        let oldKeys = oldRows.map { Self.primaryKeyValues($0, of: table) }
        guard !values.columns.isEmpty else { return oldRows }
        var sql = SQLiteSQL()
        sql.append("UPDATE \(SQLiteSQL.quote(table.name)) SET ")
        for (i, (name, value)) in zip(values.columns, values.values).enumerated() {
            if i > 0 { sql.append(", ") }
            sql.append("\(SQLiteSQL.quote(name)) = ")
            sql.value(value)
        }
        sql.append(" WHERE ")
        sql.predicate(try Self.matching(oldKeys, in: table))
        try db.cachedStatement(sql: sql.text).execute(arguments: StatementArguments(sql.arguments))
        let newKeys = oldKeys.map { key in
            zip(table.primaryKey, key).map { name, old in values[name] ?? old }
        }
        let newMatch = try Self.matching(newKeys, in: table)
        let check = try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog, forCheck: true)
        if try countFailing(check, in: table, rows: newMatch) > 0 { throw access.policyViolation(table) }
        let newRows = try selectRows(table, where: newMatch)
        var newByKey: [[Value]: [Value]] = [:]
        for row in newRows { newByKey[Self.primaryKeyValues(row, of: table)] = row }
        var ordered: [[Value]] = []
        for (old, key) in zip(oldRows, newKeys) {
            guard let new = newByKey[key] else { continue }
            try log(.update, table: table, new: new, old: old)
            ordered.append(new)
        }
        return ordered
    }

    func delete(from table: TableSchema, where filter: BoundPredicate) throws -> WriteOutcome {
        do {
            let target = BoundPredicate.both(filter, .both(
                try access.policies.rule(.delete, on: table, for: access.identity, catalog: access.catalog),
                try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
            ))
            let oldRows = try selectRows(table, where: target)
            var outcome = WriteOutcome()
            guard !oldRows.isEmpty else { return outcome }
            try logCascades(from: table, rows: oldRows)
            var sql = SQLiteSQL()
            sql.append("DELETE FROM \(SQLiteSQL.quote(table.name)) WHERE ")
            sql.predicate(try Self.matching(oldRows.map { Self.primaryKeyValues($0, of: table) }, in: table))
            try db.cachedStatement(sql: sql.text).execute(arguments: StatementArguments(sql.arguments))
            for old in oldRows { try log(.delete, table: table, new: nil, old: old) }
            outcome.rows = oldRows
            outcome.deleted = oldRows.count
            return outcome
        } catch let error as DatabaseError {
            throw SQLiteStore.translate(error, table: table)
        }
    }

    /// Logs the deletes that `ON DELETE CASCADE` foreign keys will make when `rows` of `table` go, so the change
    /// log misses none of them.
    private func logCascades(from table: TableSchema, rows: [[Value]]) throws {
        for child in access.catalog.allTables {
            for key in child.foreignKeys where key.referencedTable == table.name && key.onDelete == .cascade {
                let referenced = key.referencedColumns.map { name in rows.map { row in table.position(of: name).map { row[$0] } ?? .null } }
                let childColumns = try key.columns.map { try child.requireColumn($0) }
                let predicate: BoundPredicate = childColumns.count == 1
                    ? .inList(childColumns[0], referenced[0])
                    : .or(rows.indices.map { r in .and(childColumns.enumerated().map { .compare($1, .eq, referenced[$0][r]) }) })
                let children = try selectRows(child, where: predicate)
                guard !children.isEmpty else { continue }
                try logCascades(from: child, rows: children)
                for old in children { try log(.delete, table: child, new: nil, old: old) }
            }
        }
    }

    func upsertEach(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String]) throws -> [RowOutcome] {
        let conflict = ConflictTarget(columns: conflictColumns.isEmpty ? table.primaryKey : conflictColumns, resolution: .merge)
        var outcomes: [RowOutcome] = []
        outcomes.reserveCapacity(rows.count)
        for row in rows {
            let logged = changes.count
            var outcome = WriteOutcome()
            do {
                try db.inSavepoint {
                    try write(row, into: table, conflict: conflict, outcome: &outcome)
                    return .commit
                }
                outcomes.append(outcome.inserted > 0 ? .inserted : .updated)
            } catch {
                changes.removeSubrange(logged...)
                // SQLITE_FULL, SQLITE_IOERR and the like end the whole transaction: the batch fails, not the row.
                guard db.isInsideTransaction else { throw error }
                if let error = error as? CaravanError {
                    outcomes.append(.rejected(error))
                } else if let error = error as? DatabaseError {
                    outcomes.append(.rejected(SQLiteStore.translate(error, table: table)))
                } else {
                    throw error
                }
            }
        }
        return outcomes
    }
}
