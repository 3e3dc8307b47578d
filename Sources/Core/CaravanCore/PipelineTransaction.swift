import Foundation

/// The write pipeline on one engine transaction: schema validation, policies compiled into SQL (USING in the
/// statement's WHERE, WITH CHECK verified on the stored rows), the write, the re-read of what was stored (triggers
/// included), cascade logging and the change-log append — all through one `TransactionDriver`, so every engine
/// gives the same semantics.
package final class PipelineTransaction: StoreTransaction {
    package private(set) var access: AccessContext
    private let driver: any TransactionDriver
    /// The entries logged so far, in order, each with where it landed (perhaps not answered yet).
    private var logged: [(entry: ChangeEntry, appended: AppendedChange)] = []
    /// The first entries of `logged`, answered.
    private var answered: [Change] = []
    private var validators: [String: RowValidator] = [:]
    private let clock: @Sendable () -> Int64
    /// The transaction's time (microseconds since 1970), read once: what `touches` columns are set to.
    private lazy var transactionTime: Value = .text(Timestamp.format(microseconds: clock()))

    /// - Parameter clock: microseconds since 1970, read once per transaction (for `updated_at` maintenance).
    package init(driver: any TransactionDriver, access: AccessContext, clock: @escaping @Sendable () -> Int64 = PipelineTransaction.systemClock) {
        self.driver = driver
        self.access = access
        self.clock = clock
    }

    /// The system's wall clock in microseconds since 1970.
    package static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1_000_000).rounded()) }

    package func asServiceRole<T>(_ body: (any StoreTransaction) async throws -> T) async throws -> T {
        let caller = access
        guard caller.identity.role != .serviceRole else { return try await body(self) }
        access = AccessContext(identity: .serviceRole, policies: caller.policies, catalog: caller.catalog)
        defer { access = caller }
        return try await body(self)
    }

    // MARK: Table behaviours

    /// `row` with the table's derived columns computed from it (absent columns count as their declared default).
    private func withDerivedColumns(_ row: RowValues, _ behaviour: TableBehaviour, table: TableSchema) -> RowValues {
        guard !behaviour.derived.isEmpty else { return row }
        let values = table.columns.map { column -> Value in
            if let value = row[column.name] { return value }
            if case .value(let value)? = column.defaultValue { return value }
            return .null
        }
        var result = row
        let stored = StoredRow(table: table, values: values)
        for derived in behaviour.derived { result.set(derived.column, derived.compute(stored)) }
        return result
    }

    /// The assignments of an update of `old` by `values`: the touched timestamp (unless set) and derived columns.
    private func assignments(_ values: RowValues, old: [Value], _ behaviour: TableBehaviour, table: TableSchema) -> RowValues {
        var result = values
        if let touched = behaviour.touches, values[touched] == nil { result.set(touched, transactionTime) }
        guard !behaviour.derived.isEmpty else { return result }
        var merged = old
        for (name, value) in zip(result.columns, result.values) {
            if let position = table.position(of: name) { merged[position] = value }
        }
        let stored = StoredRow(table: table, values: merged)
        for derived in behaviour.derived { result.set(derived.column, derived.compute(stored)) }
        return result
    }

    /// Runs the table's row hook on one row written, and keeps the row for its statement hook.
    private func runHook(_ behaviour: TableBehaviour?, _ operation: ChangeOperation, table: TableSchema, new: [Value]?, old: [Value]?,
                         statement: inout [RowWrite]) async throws {
        guard let behaviour, behaviour.afterWrite != nil || behaviour.afterStatement != nil else { return }
        let write = RowWrite(operation: operation, new: new.map { StoredRow(table: table, values: $0) }, old: old.map { StoredRow(table: table, values: $0) })
        if let hook = behaviour.afterWrite { try await asServiceRole { try await hook(write, $0) } }
        if behaviour.afterStatement != nil { statement.append(write) }
    }

    /// How many rows one re-read after a statement's hooks matches.
    static let rereadSlice = 200

    /// Ends a statement on `table`: runs its statement hook on the rows it wrote, then answers what is stored now
    /// for `rows` (either hook may have changed them), in the same order.
    private func finishStatement(_ table: TableSchema, _ statement: [RowWrite], rows: [[Value]]) async throws -> [[Value]] {
        guard let behaviour = access.catalog.behaviour(of: table.name) else { return rows }
        if let hook = behaviour.afterStatement, !statement.isEmpty { try await asServiceRole { try await hook(statement, $0) } }
        guard behaviour.afterWrite != nil || behaviour.afterStatement != nil, !rows.isEmpty else { return rows }
        let keys = rows.map { Self.primaryKeyValues($0, of: table) }
        var finalByKey: [[Value]: [Value]] = [:]
        // In slices: a composite key's match is an OR of one group per row, and engines bound an expression's depth.
        for start in stride(from: 0, to: keys.count, by: Self.rereadSlice) {
            let slice = Array(keys[start..<min(start + Self.rereadSlice, keys.count)])
            for row in try await driver.selectRows(table, where: try Self.matching(slice, in: table)) { finalByKey[Self.primaryKeyValues(row, of: table)] = row }
        }
        return zip(rows, keys).map { finalByKey[$1] ?? $0 }
    }

    private var actor: String { access.identity.userID ?? access.identity.role.rawValue }

    package func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        try await driver.fetch(plan)
    }

    package func rankedFetch(_ search: RankedSearch) async throws -> [RankedRow] {
        try await driver.rankedFetch(search)
    }

    package func insertBookkeeping(_ row: RowValues, into table: TableSchema) async throws {
        guard table.exposure == .secret else {
            throw CaravanError(.internalFailure, "only secret bookkeeping tables are written without policies", internalDetail: table.name)
        }
        _ = try await driver.insertRow(row, into: table, skippingConflictOn: nil)
    }

    package func serialize(on key: String) async throws {
        try await driver.serialize(on: key)
    }

    /// Nil too when the last append failed: that failure is thrown again by `loggedChanges()` before any commit.
    package var lastLoggedSeq: Int64? { get async { (try? await loggedChanges())?.last?.seq } }

    package func changeLogHead() async throws -> Int64 {
        let log = SystemModule.changeLog
        let query = Query(select: [.column(name: "seq", alias: nil, cast: nil)], order: [OrderTerm(column: "seq", direction: .descending)], limit: 1)
        let plan = try ReadPlan(table: log, query: query, access: .constant(true), maxRows: nil, includeCount: false)
        guard case .integer(let seq)? = try await driver.fetch(plan).rows.first?.first else { return 0 }
        return seq
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

    /// A row as a JSON object of `names` → values (change-log records and keys).
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

    private func log(_ operation: ChangeOperation, table: TableSchema, new: [Value]?, old: [Value]?) async throws {
        guard table.isChangeLogged, let keyRow = new ?? old else { return }
        let names = table.columns.map(\.name)
        let entry = ChangeEntry(
            table: table.name,
            primaryKey: Self.json(Self.primaryKeyValues(keyRow, of: table), names: table.primaryKey),
            operation: operation,
            record: new.map { Self.json($0, names: names) },
            oldRecord: old.map { Self.json($0, names: names) },
            actor: actor,
            transaction: logged.isEmpty || driver.labelsTransactions ? nil : try await changes(upTo: 1).first?.seq
        )
        logged.append((entry, try await driver.appendChange(entry, of: table)))
    }

    /// How many changes this transaction has logged so far.
    package var loggedCount: Int { logged.count }

    /// The changes logged so far, in order, once the engine has answered where each landed: waits for answers
    /// still in flight, and throws an append's failure (then the transaction cannot commit).
    package func loggedChanges() async throws -> [Change] {
        try await changes(upTo: logged.count)
    }

    /// The first `count` logged changes, answered.
    private func changes(upTo count: Int) async throws -> [Change] {
        while answered.count < count {
            let (entry, appended) = logged[answered.count]
            let stored = try await appended.position()
            answered.append(Change(seq: stored.seq, table: entry.table, primaryKey: entry.primaryKey, operation: entry.operation, record: entry.record,
                                   oldRecord: entry.oldRecord, committedAt: stored.committedAt, actor: entry.actor,
                                   transaction: stored.transaction ?? entry.transaction ?? stored.seq))
        }
        return Array(answered.prefix(count))
    }

    // MARK: Writes

    /// The table's validator, its CHECK rules bound once per transaction.
    private func validator(for table: TableSchema) throws(CaravanError) -> RowValidator {
        if let cached = validators[table.name] { return cached }
        let validator = try RowValidator(table: table)
        validators[table.name] = validator
        return validator
    }

    package func insert(_ rows: [RowValues], into table: TableSchema, conflict: ConflictTarget?) async throws -> WriteOutcome {
        var outcome = WriteOutcome()
        var statement: [RowWrite] = []
        var copied: CopiedValues = [:]
        var prepared: [RowValues] = []
        prepared.reserveCapacity(rows.count)
        for row in rows { prepared.append(try await prepare(row, for: table, copied: &copied)) }
        var lookup = try await conflictLookup(for: prepared, in: table, conflict: conflict)
        for row in prepared { try await write(row, into: table, conflict: conflict, lookup: &lookup, outcome: &outcome, statement: &statement) }
        outcome.rows = try await finishStatement(table, statement, rows: outcome.rows)
        return outcome
    }

    /// `sent` as the insert stores it: the caller's id in the columns that default to it, copied columns filled,
    /// derived columns computed.
    private func prepare(_ sent: RowValues, for table: TableSchema, copied: inout CopiedValues) async throws -> RowValues {
        guard let behaviour = access.catalog.behaviour(of: table.name) else { return sent }
        var sent = sent
        if let userID = access.identity.userID {
            for column in behaviour.defaultsToCaller where sent[column] == nil { sent.set(column, .text(userID)) }
        }
        sent = try await withCopiedColumns(sent, behaviour, table: table, cache: &copied)
        return withDerivedColumns(sent, behaviour, table: table)
    }

    /// Values of copied columns read during one statement: by the copied column's name, then by reference (an absent
    /// value: no row has that key).
    typealias CopiedValues = [String: [Value: Value?]]

    /// `row` with the copied columns whose reference it holds filled from the referenced rows. A row whose reference
    /// matches nothing keeps what was sent (its foreign key answers). A value sent that differs is refused, as a
    /// policy violation when the caller may not read the referenced row (nothing is told about it).
    private func withCopiedColumns(_ row: RowValues, _ behaviour: TableBehaviour, table: TableSchema, cache: inout CopiedValues) async throws -> RowValues {
        var row = row
        for copied in behaviour.copied {
            guard let reference = row[copied.reference], reference != .null else { continue }
            guard let value = try await copiedValue(copied, reference: reference, cache: &cache) else { continue }
            if let sent = row[copied.column], sent != value { throw try await copiedMismatch(copied, reference: reference, table: table) }
            row.set(copied.column, value)
        }
        return row
    }

    private func copiedValue(_ copied: CopiedColumn, reference: Value, cache: inout CopiedValues) async throws -> Value? {
        if let known = cache[copied.column]?[reference] { return known }
        let referenced = try referencedTable(copied)
        let found = try await driver.selectRows(referenced, where: .compare(try referenced.requireColumn(copied.key), .eq, reference)).first
        let value = try found.map { $0[try Self.position(of: copied.source, in: referenced)] }
        cache[copied.column, default: [:]][reference] = .some(value)
        return value
    }

    private func referencedTable(_ copied: CopiedColumn) throws -> TableSchema {
        guard let referenced = access.catalog.table(named: copied.table) else {
            throw CaravanError(.internalFailure, "An internal error occurred", internalDetail: "copied column \(copied.column) refers to unknown table \(copied.table)")
        }
        return referenced
    }

    private func copiedMismatch(_ copied: CopiedColumn, reference: Value, table: TableSchema) async throws -> CaravanError {
        let referenced = try referencedTable(copied)
        let select = try access.policies.rule(.select, on: referenced, for: access.identity, catalog: access.catalog)
        let row = BoundPredicate.compare(try referenced.requireColumn(copied.key), .eq, reference)
        if try await driver.countFailing(select, in: referenced, rows: row) > 0 { return access.policyViolation(table) }
        return CaravanError(.checkViolation, "\(table.name).\(copied.column) must be the \(copied.source) of the row of \(copied.table) that \(copied.reference) refers to",
                            details: "field \(copied.column)", hint: "The server fills \(copied.column) from \(copied.table): leave it out.")
    }

    private static func position(of column: String, in table: TableSchema) throws(CaravanError) -> Int {
        guard let position = table.position(of: column) else { throw CaravanError(.unknownColumn, "column \(table.name).\(column) does not exist") }
        return position
    }

    /// An update's `values` with the copied columns of a changed reference filled; a copied column set without its
    /// reference must equal what each row's reference gives.
    private func copiedAssignments(_ values: RowValues, oldRows: [[Value]], table: TableSchema) async throws -> RowValues {
        guard let behaviour = access.catalog.behaviour(of: table.name), !behaviour.copied.isEmpty else { return values }
        var cache: CopiedValues = [:]
        var values = try await withCopiedColumns(values, behaviour, table: table, cache: &cache)
        for copied in behaviour.copied where values[copied.reference] == nil {
            guard let sent = values[copied.column] else { continue }
            for old in oldRows {
                let reference = old[try Self.position(of: copied.reference, in: table)]
                guard reference != .null, let value = try await copiedValue(copied, reference: reference, cache: &cache) else { continue }
                if sent != value { throw try await copiedMismatch(copied, reference: reference, table: table) }
            }
            values.set(copied.column, sent)
        }
        return values
    }

    /// How many conflict keys one lookup reads.
    static let lookupSlice = 500

    /// The rows a multi-row upsert's conflict target already matches, read for the whole statement in a few
    /// queries instead of one per row. Only for a unique key: a key it misses (sent in another spelling, taken
    /// meanwhile by a concurrent writer) makes the insert skip, and the row is then looked up alone.
    private func conflictLookup(for rows: [RowValues], in table: TableSchema, conflict: ConflictTarget?) async throws -> ConflictLookup? {
        guard let conflict, rows.count > 1, table.isUniqueKey(conflict.columns) else { return nil }
        let columns = try conflict.columns.map { try table.requireColumn($0) }
        let keys = Array(Set(rows.compactMap { ConflictLookup.key(of: $0, columns: conflict.columns) }))
        var lookup = ConflictLookup(columns: conflict.columns, positions: columns.map { table.position(of: $0.name)! })
        for start in stride(from: 0, to: keys.count, by: Self.lookupSlice) {
            let slice = keys[start..<min(start + Self.lookupSlice, keys.count)]
            let match: BoundPredicate = columns.count == 1
                ? .inList(columns[0], slice.map { $0[0] })
                : .or(slice.map { key in .and(zip(columns, key).map { .compare($0, .eq, $1) }) })
            for stored in try await driver.selectRows(table, where: match) {
                lookup.existing[lookup.key(ofStored: stored)] = stored
            }
        }
        return lookup
    }

    private func write(_ row: RowValues, into table: TableSchema, conflict: ConflictTarget?, lookup: inout ConflictLookup?, outcome: inout WriteOutcome,
                       statement: inout [RowWrite]) async throws {
        let behaviour = access.catalog.behaviour(of: table.name)
        var conflictMatch: BoundPredicate?
        if let conflict {
            let conflictColumns = try conflict.columns.map { try table.requireColumn($0) }
            let match = BoundPredicate.and(conflictColumns.map { .compare($0, .eq, row[$0.name] ?? .null) })
            let found: [Value]?
            if let known = lookup?.take(row) { found = known } else { found = try await driver.selectRows(table, where: match).first }
            if let existing = found {
                lookup?.written(existing)
                if conflict.resolution == .ignore { return }
                try await mergeUpdate(existing, with: row, table: table, conflictColumns: conflict.columns, outcome: &outcome, statement: &statement)
                return
            }
            conflictMatch = match
        }
        // As in Postgres, the policy's check comes before constraints (and foreign keys): a row the caller may
        // not write is refused as such. Checks that need other tables run after the insert, below.
        let check = try access.policies.rule(.insert, on: table, for: access.identity, catalog: access.catalog, forCheck: true)
        var checkedInMemory = check == .constant(true)
        let verdict = check.evaluate { name in
            if let value = row[name] { return value }
            if case .value(let value)? = table.column(named: name)?.defaultValue { return value }
            return .null
        }
        // A check that needs other tables is unknown in memory, unless the row alone already fails it (a caller
        // writing someone else's row): refused before the insert, so no constraint answers in the policy's place.
        if check.containsSubquery, verdict == false { throw access.policyViolation(table) }
        if !check.containsSubquery, check != .constant(true) {
            if verdict != true { throw access.policyViolation(table) }
            // Decisive when every column it reads was sent (no default or trigger can change them on insert).
            checkedInMemory = check.columnNames.allSatisfy { row[$0] != nil }
        }
        try validator(for: table).validate(row)
        // The key was free when looked up above; a concurrent transaction may still take it before this insert
        // (engines with concurrent writers). Then the insert waits for it, skips, and the row it stored is merged
        // with (or ignored), as if the lookup had found it.
        let skipping = conflict.flatMap { table.isUniqueKey($0.columns) ? $0.columns : nil }
        guard let stored = try await driver.insertRow(row, into: table, skippingConflictOn: skipping) else {
            guard let conflict, let conflictMatch, let existing = try await driver.selectRows(table, where: conflictMatch).first else {
                throw CaravanError(.internalFailure, "An internal error occurred", internalDetail: "a skipped insert into \(table.name) found no row")
            }
            lookup?.written(existing)
            if conflict.resolution == .ignore { return }
            try await mergeUpdate(existing, with: row, table: table, conflictColumns: conflict.columns, outcome: &outcome, statement: &statement)
            return
        }
        lookup?.written(stored)
        let keyMatch = try Self.matching([Self.primaryKeyValues(stored, of: table)], in: table)
        if !checkedInMemory, try await driver.countFailing(check, in: table, rows: keyMatch) > 0 { throw access.policyViolation(table) }
        try await log(.insert, table: table, new: stored, old: nil)
        // A hook may still change the row (a profile's language codes made canonical): the statement's end answers
        // what is stored then.
        try await runHook(behaviour, .insert, table: table, new: stored, old: nil, statement: &statement)
        outcome.rows.append(stored)
        outcome.inserted += 1
    }

    private func mergeUpdate(_ existing: [Value], with row: RowValues, table: TableSchema, conflictColumns: [String], outcome: inout WriteOutcome,
                             statement: inout [RowWrite]) async throws {
        let keyMatch = try Self.matching([Self.primaryKeyValues(existing, of: table)], in: table)
        let using = BoundPredicate.both(
            try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog),
            try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
        )
        if try await driver.countFailing(using, in: table, rows: keyMatch) > 0 { throw access.policyViolation(table) }
        let assignments = RowValues(
            columns: row.columns.filter { !conflictColumns.contains($0) },
            values: zip(row.columns, row.values).filter { !conflictColumns.contains($0.0) }.map(\.1)
        )
        let updated = try await applyUpdate(table, set: assignments, oldRows: [existing], statement: &statement)
        outcome.rows.append(contentsOf: updated)
        outcome.updated += updated.count
    }

    package func update(_ table: TableSchema, set values: RowValues, where filter: BoundPredicate) async throws -> WriteOutcome {
        for name in values.columns where table.column(named: name) == nil {
            throw CaravanError(.unknownBodyColumn, "Could not find the '\(name)' column of '\(table.name)' in the schema cache")
        }
        let target = BoundPredicate.both(filter, .both(
            try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog),
            try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
        ))
        let oldRows = try await driver.selectRows(table, where: target)
        var outcome = WriteOutcome()
        var statement: [RowWrite] = []
        let values = try await copiedAssignments(values, oldRows: oldRows, table: table)
        let updated = try await applyUpdate(table, set: values, oldRows: oldRows, statement: &statement)
        outcome.rows = try await finishStatement(table, statement, rows: updated)
        outcome.updated = outcome.rows.count
        return outcome
    }

    /// Updates `oldRows` (by primary key) with `values`, checks the update policy on the new rows, logs each change.
    private func applyUpdate(_ table: TableSchema, set values: RowValues, oldRows: [[Value]], statement: inout [RowWrite]) async throws -> [[Value]] {
        guard !oldRows.isEmpty else { return [] }
        let oldKeys = oldRows.map { Self.primaryKeyValues($0, of: table) }
        guard !values.columns.isEmpty else { return oldRows }
        let behaviour = access.catalog.behaviour(of: table.name)
        if let behaviour, !behaviour.derived.isEmpty {
            // Derived values differ per row: one statement per row.
            for (old, key) in zip(oldRows, oldKeys) {
                try await driver.updateRows(table, set: assignments(values, old: old, behaviour, table: table), where: try Self.matching([key], in: table))
            }
        } else {
            let all = behaviour.map { assignments(values, old: [], $0, table: table) } ?? values
            try await driver.updateRows(table, set: all, where: try Self.matching(oldKeys, in: table))
        }
        let newKeys = oldKeys.map { key in
            zip(table.primaryKey, key).map { name, old in values[name] ?? old }
        }
        let newMatch = try Self.matching(newKeys, in: table)
        let check = try access.policies.rule(.update, on: table, for: access.identity, catalog: access.catalog, forCheck: true)
        if try await driver.countFailing(check, in: table, rows: newMatch) > 0 { throw access.policyViolation(table) }
        let newRows = try await driver.selectRows(table, where: newMatch)
        var newByKey: [[Value]: [Value]] = [:]
        for row in newRows { newByKey[Self.primaryKeyValues(row, of: table)] = row }
        var ordered: [[Value]] = []
        for (old, key) in zip(oldRows, newKeys) {
            guard let new = newByKey[key] else { continue }
            try await log(.update, table: table, new: new, old: old)
            try await runHook(behaviour, .update, table: table, new: new, old: old, statement: &statement)
            ordered.append(new)
        }
        return ordered
    }

    package func delete(from table: TableSchema, where filter: BoundPredicate) async throws -> WriteOutcome {
        let target = BoundPredicate.both(filter, .both(
            try access.policies.rule(.delete, on: table, for: access.identity, catalog: access.catalog),
            try access.policies.rule(.select, on: table, for: access.identity, catalog: access.catalog)
        ))
        let oldRows = try await driver.selectRows(table, where: target)
        var outcome = WriteOutcome()
        guard !oldRows.isEmpty else { return outcome }
        try await logCascades(from: table, rows: oldRows)
        try await driver.deleteRows(from: table, where: try Self.matching(oldRows.map { Self.primaryKeyValues($0, of: table) }, in: table))
        let behaviour = access.catalog.behaviour(of: table.name)
        var statement: [RowWrite] = []
        for old in oldRows {
            try await log(.delete, table: table, new: nil, old: old)
            try await runHook(behaviour, .delete, table: table, new: nil, old: old, statement: &statement)
        }
        // Deleted rows are answered as they were: nothing to read again.
        _ = try await finishStatement(table, statement, rows: [])
        outcome.rows = oldRows
        outcome.deleted = oldRows.count
        return outcome
    }

    /// Logs the deletes that `ON DELETE CASCADE` foreign keys will make when `rows` of `table` go, so the change
    /// log misses none of them.
    private func logCascades(from table: TableSchema, rows: [[Value]]) async throws {
        for child in access.catalog.allTables {
            for key in child.foreignKeys where key.referencedTable == table.name && key.onDelete == .cascade {
                let referenced = key.referencedColumns.map { name in rows.map { row in table.position(of: name).map { row[$0] } ?? .null } }
                let childColumns = try key.columns.map { try child.requireColumn($0) }
                let predicate: BoundPredicate = childColumns.count == 1
                    ? .inList(childColumns[0], referenced[0])
                    : .or(rows.indices.map { r in .and(childColumns.enumerated().map { .compare($1, .eq, referenced[$0][r]) }) })
                let children = try await driver.selectRows(child, where: predicate)
                guard !children.isEmpty else { continue }
                try await logCascades(from: child, rows: children)
                for old in children { try await log(.delete, table: child, new: nil, old: old) }
            }
        }
    }

    package func upsertEach(_ rows: [RowValues], into table: TableSchema, conflictColumns: [String]) async throws -> [RowOutcome] {
        let conflict = ConflictTarget(columns: conflictColumns.isEmpty ? table.primaryKey : conflictColumns, resolution: .merge)
        var outcomes: [RowOutcome] = []
        outcomes.reserveCapacity(rows.count)
        for row in rows {
            let loggedBefore = logged.count
            var outcome = WriteOutcome()
            do {
                try await driver.withSavepoint(on: table) {
                    // Each row is a statement of its own: its hooks run (and fail) with it.
                    var statement: [RowWrite] = []
                    var lookup: ConflictLookup?
                    var copied: CopiedValues = [:]
                    let prepared = try await prepare(row, for: table, copied: &copied)
                    try await write(prepared, into: table, conflict: conflict, lookup: &lookup, outcome: &outcome, statement: &statement)
                    _ = try await finishStatement(table, statement, rows: [])
                }
                outcomes.append(outcome.inserted > 0 ? .inserted : .updated)
            } catch {
                logged.removeSubrange(loggedBefore...)
                answered.removeSubrange(min(loggedBefore, answered.count)...)
                // A failure that ended the whole transaction (disk full, lost connection) fails the batch, not the row.
                guard driver.isInsideTransaction, let error = error as? CaravanError, error.code != .storageUnavailable else { throw error }
                outcomes.append(.rejected(error))
            }
        }
        return outcomes
    }
}

/// What a multi-row upsert found stored under its conflict target, by key, read once for the statement.
private struct ConflictLookup {
    let columns: [String]
    /// Where the conflict columns are in a stored row.
    let positions: [Int]
    /// Stored rows by the values of the conflict columns.
    var existing: [[Value]: [Value]] = [:]
    /// Keys this statement has written since the lookup (as sent, and as stored): a later row with one of them is
    /// looked up alone.
    var written: Set<[Value]> = []

    init(columns: [String], positions: [Int]) {
        self.columns = columns
        self.positions = positions
    }

    func key(ofStored row: [Value]) -> [Value] { positions.map { row[$0] } }

    /// A row this statement inserted or reached: its key as stored is no longer what the lookup read.
    mutating func written(_ stored: [Value]) { written.insert(key(ofStored: stored)) }

    /// The key of `row`, or nil when a column is absent or NULL (NULL matches nothing: such a row is looked up alone).
    static func key(of row: RowValues, columns: [String]) -> [Value]? {
        var key: [Value] = []
        for column in columns {
            guard let value = row[column], value != .null else { return nil }
            key.append(value)
        }
        return key
    }

    /// What the lookup knows of `row`'s key: `.some(stored)`, `.some(nil)` when nothing was stored under it, or nil
    /// when it does not know (the row is then looked up alone). The key counts as written from here on.
    mutating func take(_ row: RowValues) -> [Value]?? {
        guard let key = Self.key(of: row, columns: columns) else { return nil }
        guard written.insert(key).inserted else { return nil }
        return .some(existing[key])
    }
}
