public import CaravanCore
import CaravanClientSQLite

/// The typed API: generated records (`caravan gen swift`, `TableRecord`) written and read beside the `JSONValue` one,
/// through the same rules (one transaction for the row and its outbox entry, the same mirror). Every call is `async`
/// and runs off the caller's actor (`@concurrent`): a write from the main actor does not hold it while SQLite commits.
/// The time a write records comes from the store's injected clock.
extension LocalStore {
    /// Inserts `record` into its table and queues it for the server, in one transaction; returns the row as stored. A
    /// nil property of a column with a default takes the default: the time (`now()`, from the store's clock) and
    /// random uuids are taken on the device and sent with the row. A row breaking a declared rule is refused at once
    /// (see the `JSONValue` `insert`). `attaching`: staged uploads (`stageUpload`) queued in the same transaction.
    @concurrent
    @discardableResult
    public func insert<Record: TableRecord>(_ record: Record, priority: MutationPriority = .normal, attaching: [AttachmentUpload] = []) async throws -> Record {
        try await insert(record, priority: priority, attaching: attaching, beforeCommit: nil)
    }

    /// `insert`, with a test's fault hook run inside the transaction before it commits (`caravan-client`'s crash points).
    @concurrent
    @discardableResult
    package func insert<Record: TableRecord>(_ record: Record, priority: MutationPriority = .normal, attaching: [AttachmentUpload] = [],
                                             beforeCommit: (@Sendable () throws -> Void)?) async throws -> Record {
        let table = try table(for: Record.self)
        var filled: [String] = []
        let stored = try insert(table.name, try row(of: record, in: table, defaultingNil: true, filled: &filled), priority: priority,
                                now: nowText(), attaching: attaching, beforeCommit: beforeCommit)
        return try Self.record(record, setting: filled, from: stored)
    }

    /// Writes the columns of `record` that differ from the local row with its primary key, and queues them as one
    /// update; nothing is queued when none differs. The row must be in the store. `attaching`: staged uploads queued in
    /// the same transaction.
    @concurrent
    public func update<Record: TableRecord>(_ record: Record, priority: MutationPriority = .normal, attaching: [AttachmentUpload] = []) async throws {
        let table = try table(for: Record.self)
        let row = try row(of: record, in: table)
        let key = JSONValue.object(table.primaryKey.map { ($0, row[$0] ?? .null) })
        guard let current = try read({ try $0.rows(table, where: table.primaryKey.map { ($0, key[$0] ?? .null) }) }).first else {
            throw ClientError(.local, code: "rowNotFound", "no local \(table.name) row with key \(key.jsonText)")
        }
        let changes = table.columns.compactMap { column -> (key: String, value: JSONValue)? in
            guard !table.primaryKey.contains(column.name) else { return nil }
            let value = row[column.name] ?? .null
            return current[column.name] == value ? nil : (column.name, value)
        }
        guard !changes.isEmpty else { return try committing(attaching) { _ in } }
        try update(table.name, key: key, .object(changes), priority: priority, now: nowText(), attaching: attaching)
    }

    /// Deletes the local row with `record`'s primary key and queues the delete, in one transaction.
    @concurrent
    public func delete<Record: TableRecord>(_ record: Record, priority: MutationPriority = .normal) async throws {
        let table = try table(for: Record.self)
        let row = try row(of: record, in: table)
        try delete(table.name, key: .object(table.primaryKey.map { ($0, row[$0] ?? .null) }), priority: priority, now: nowText())
    }

    /// The local rows of `Record`'s table matching `predicate` — the filter grammar REST and policies use, evaluated by
    /// SQL on the store — in `order` (then by primary key), at most `limit`.
    ///
    /// ```swift
    /// let nearby = try await store.fetch(Place.self, where: .column(Place.CodingKeys.areaID, .eq, "olaya"),
    ///                                    order: [OrderTerm(Place.CodingKeys.name)], limit: 20)
    /// ```
    @concurrent
    public func fetch<Record: TableRecord>(_ type: Record.Type, where predicate: Predicate = .constant(true), order: [OrderTerm] = [],
                                           limit: Int? = nil) async throws -> [Record] {
        let table = try table(for: Record.self)
        let bound = try Self.bind(predicate, to: table)
        return try read { try $0.rows(table, matching: bound, order: order, limit: limit) }.map { try Self.record(Record.self, from: $0) }
    }

    /// The rows of a `Query` (its filters, order, limit and offset; `select` and embedding are REST's own).
    @concurrent
    public func fetch<Record: TableRecord>(_ type: Record.Type, query: Query) async throws -> [Record] {
        try Self.checkLocal(query)
        return try await fetch(type, where: query.filter, order: query.order, limit: query.limit)
    }

    // MARK: Helpers

    /// `predicate` bound to `table`'s declaration: an unknown column or a bad value refused with its code.
    static func bind(_ predicate: Predicate, to table: TableSchema) throws -> BoundPredicate {
        do {
            return try predicate.bound(to: table)
        } catch {
            throw ClientError(.local, code: error.code.description, error.message)
        }
    }

    /// Refuses what a `Query` holds beyond a local read's filters, order and limit.
    static func checkLocal(_ query: Query) throws {
        guard query.select == [.star], query.embedded.isEmpty, (query.offset ?? 0) == 0 else {
            throw ClientError(.local, code: "unsupportedQuery", "a local read takes filters, order and limit (no select, embedding or offset)")
        }
    }

    func table<Record: TableRecord>(for type: Record.Type) throws -> TableSchema {
        let table = try table(Record.table.name)
        guard table.primaryKey == Record.table.primaryKey else {
            throw ClientError(.local, code: "recordMismatch", "\(Record.self) has primary key \(Record.table.primaryKey) but \(table.name) has \(table.primaryKey): regenerate the records")
        }
        return table
    }

    /// The record as a row of `table`: every column named (a nil optional as null; left out, for its default, when
    /// `defaultingNil` and the column has one), uuids in canonical form.
    func row<Record: TableRecord>(of record: Record, in table: TableSchema, defaultingNil: Bool = false) throws -> JSONValue {
        var filled: [String] = []
        return try row(of: record, in: table, defaultingNil: defaultingNil, filled: &filled)
    }

    /// `row(of:in:defaultingNil:)`; `filled` gets the columns whose stored value `record` does not hold as it is: left
    /// to their defaults, or respelled (a uuid in canonical form). A nil property's null is the record's own.
    func row<Record: TableRecord>(of record: Record, in table: TableSchema, defaultingNil: Bool, filled: inout [String]) throws -> JSONValue {
        let encoded: JSONValue
        do {
            encoded = try record.encodedRow()
        } catch let error as CaravanError {
            throw ClientError(.local, code: error.code.description, error.message)
        } catch {
            throw ClientError(.local, code: CaravanError.Code.invalidValue.description, "the record does not encode as a row: \(error)")
        }
        // A record encodes its properties in its columns' order: each column is looked for just after the last found.
        let pairs = if case .object(let pairs) = encoded { pairs } else { [(key: String, value: JSONValue)]() }
        var next = 0
        func encodedValue(_ name: String) -> JSONValue? {
            let start = min(next, pairs.count)
            guard let index = pairs[start...].firstIndex(where: { $0.key == name }) ?? pairs[..<start].firstIndex(where: { $0.key == name }) else { return nil }
            next = index + 1
            return pairs[index].value
        }
        let row = JSONValue.object(try table.columns.compactMap { column in
            let encoded = encodedValue(column.name)
            if defaultingNil, column.defaultValue != nil, encoded ?? .null == .null {
                filled.append(column.name)
                return nil
            }
            guard let value = encoded else {
                guard column.isNullable else {
                    throw ClientError(.local, code: CaravanError.Code.notNullViolation.description, "\(Record.self) has no value for \(table.name).\(column.name)")
                }
                return (column.name, .null)
            }
            if column.type == .uuid, case .string(let text) = value, let canonical = ColumnType.canonicalUUID(text), canonical != text {
                filled.append(column.name)
                return (column.name, .string(canonical))
            }
            return (column.name, value)
        })
        return row
    }

    /// `record` as `row` holds it: the columns `filled` set from the row (`setColumn`), or, for a record that cannot
    /// set one, the whole row decoded.
    static func record<Record: TableRecord>(_ record: Record, setting filled: [String], from row: JSONValue) throws -> Record {
        var updated = record
        do {
            for column in filled where try !updated.setColumn(column, to: row[column] ?? .null) {
                return try Self.record(Record.self, from: row)
            }
        } catch let error as CaravanError {
            throw ClientError(.local, code: error.code.description, error.message)
        }
        return updated
    }

    static func record<Record: TableRecord>(_ type: Record.Type, from row: JSONValue) throws -> Record {
        do {
            return try RecordCoding.decode(Record.self, from: row)
        } catch {
            throw ClientError(.local, code: error.code.description, error.message)
        }
    }

    /// Now, from the injected clock, as canonical timestamp text.
    func nowText() -> String { Timestamp.format(microseconds: clock.microseconds) }
}

extension TableRecord {
    /// The record a JSON row holds: an element of a REST response, a pulled record, a `LiveChange`'s row.
    public init(row: JSONValue) throws {
        self = try LocalStore.record(Self.self, from: row)
    }
}
