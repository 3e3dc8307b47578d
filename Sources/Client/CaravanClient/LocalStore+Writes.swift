public import CaravanCore
import CaravanClientSQLite
import Foundation

/// How soon a local write should reach the server: the push sends higher priorities first (keeping each row's
/// writes in order).
public enum MutationPriority: Int, Sendable, Comparable, CaseIterable {
    case low = 0, normal = 1, high = 2, immediate = 3

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public init?(name: String) {
        switch name {
        case "low": self = .low
        case "normal": self = .normal
        case "high": self = .high
        case "immediate": self = .immediate
        default: return nil
        }
    }
}

/// One local write waiting for (or answered by) the server.
public struct OutboxEntry: Sendable {
    public enum State: String, Sendable { case pending, acked, parked }

    public let position: Int64
    public let mutationID: String
    public let table: String
    public let operation: String
    public let rowKey: String
    public let key: JSONValue
    public let record: JSONValue?
    public let priority: MutationPriority
    public let attempts: Int
    public let createdAt: String
    public let state: State
    public let checkpoint: Int64?
    public let errorCode: String?
    public let errorMessage: String?

    init(_ stored: OutboxRecord) {
        position = stored.position
        mutationID = stored.mutationID
        table = stored.table
        operation = stored.operation
        rowKey = stored.rowKey
        key = stored.key
        record = stored.record
        priority = MutationPriority(rawValue: stored.priority) ?? .normal
        attempts = stored.attempts
        createdAt = stored.createdAt
        state = State(rawValue: stored.state) ?? .pending
        checkpoint = stored.checkpoint
        errorCode = stored.errorCode
        errorMessage = stored.errorMessage
    }

    /// The mutation as `/sync/v1/push` takes it.
    public var wireMutation: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [("id", .string(mutationID)), ("table", .string(table)), ("op", .string(operation))]
        if operation != "insert" && operation != "upsert" { pairs.append(("key", key)) }
        if let record { pairs.append(("record", record)) }
        return .object(pairs)
    }

    public var json: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [
            ("mutation_id", .string(mutationID)), ("table", .string(table)), ("op", .string(operation)), ("key", key),
            ("record", record ?? .null), ("priority", .integer(Int64(priority.rawValue))), ("attempts", .integer(Int64(attempts))),
            ("created_at", .string(createdAt)), ("state", .string(state.rawValue)),
        ]
        if let errorCode { pairs.append(("error", .object([("code", .string(errorCode)), ("message", .string(errorMessage ?? ""))]))) }
        return .object(pairs)
    }
}

extension LocalStore {
    /// Inserts `record` into the local `table` and queues it for the server, in one transaction. A missing uuid
    /// primary key with a random default is generated here (so the row has its final key offline); the other
    /// defaults fill the local row, and those taken on the device — the time (`now()`, `now` here) and random uuids —
    /// are sent with the row, so the server keeps when it was written rather than when it synced. A row the server
    /// would refuse for good (a value not of its column's type, a null in a NOT NULL column, a failed CHECK) is refused
    /// here, before anything is written (`ClientError.code`: `invalidValue`, `notNullViolation`, `checkViolation`).
    /// `attaching`: staged uploads (`stageUpload`) queued in the same transaction — the row and its photo wait
    /// together. Returns the local row.
    @discardableResult
    public func insert(_ tableName: String, _ record: JSONValue, priority: MutationPriority = .normal, now: String,
                       attaching: [AttachmentUpload] = []) throws -> JSONValue {
        try insert(tableName, record, priority: priority, now: now, attaching: attaching, beforeCommit: nil)
    }

    /// `insert`, with a test's fault hook run inside the transaction before it commits.
    @discardableResult
    package func insert(_ tableName: String, _ record: JSONValue, priority: MutationPriority = .normal, now: String,
                        attaching: [AttachmentUpload] = [], beforeCommit: (@Sendable () throws -> Void)?) throws -> JSONValue {
        let table = try table(tableName)
        guard case .object(var sent) = record else { throw ClientError(.local, "a record must be a JSON object") }
        for name in sent.map(\.key) where table.column(named: name) == nil { throw ClientError(.local, "\(tableName) has no column \(name)") }
        for name in table.primaryKey where record[name] == nil {
            guard let column = table.column(named: name), column.defaultValue == .randomUUID else {
                throw ClientError(.local, "\(tableName).\(name) is required (the primary key)")
            }
            sent.append((name, .string(ids.next())))
        }
        let given = Set(sent.map(\.key))
        for column in table.columns where !given.contains(column.name) && (column.defaultValue == .now || column.defaultValue == .randomUUID) {
            sent.append((column.name, localDefault(column, now: now)))
        }
        let full = JSONValue.object(sent)
        guard let rowKey = table.keyText(of: full) else { throw ClientError(.local, "\(tableName) needs its primary key") }
        let local = JSONValue.object(table.columns.map { column in (column.name, full[column.name] ?? localDefault(column, now: now)) })
        try Self.checkRules(local, of: table, given: given)
        try committing(attaching) { transaction in
            try transaction.writeRow(local, into: table, replacing: false)
            try enqueue(table: table, op: "insert", rowKey: rowKey, record: full, priority: priority, now: now, in: transaction)
            try beforeCommit?()
        }
        return local
    }

    /// Sets `changes` on the local row with primary key `key` and queues the update, in one transaction; refused at
    /// once, as `insert` is, when the row would break a declared rule. `attaching`: staged uploads queued in the same
    /// transaction.
    public func update(_ tableName: String, key: JSONValue, _ changes: JSONValue, priority: MutationPriority = .normal, now: String,
                       attaching: [AttachmentUpload] = []) throws {
        try update(tableName, key: key, changes, priority: priority, now: now, attaching: attaching, beforeCommit: nil)
    }

    /// `update`, with a test's fault hook run inside the transaction before it commits.
    package func update(_ tableName: String, key: JSONValue, _ changes: JSONValue, priority: MutationPriority = .normal, now: String,
                        attaching: [AttachmentUpload] = [], beforeCommit: (@Sendable () throws -> Void)?) throws {
        let table = try table(tableName)
        guard case .object(let pairs) = changes, !pairs.isEmpty else { throw ClientError(.local, "changes must be a non-empty JSON object") }
        guard let rowKey = table.keyText(of: key) else { throw ClientError(.local, "the key must hold \(table.primaryKey.joined(separator: ", "))") }
        try committing(attaching) { transaction in
            guard var current = try transaction.row(table, rowKey: rowKey), case .object(var fields) = current else {
                throw ClientError(.local, "no local \(tableName) row with key \(rowKey)")
            }
            for (name, value) in pairs {
                guard let index = fields.firstIndex(where: { $0.key == name }) else { throw ClientError(.local, "\(tableName) has no column \(name)") }
                fields[index].value = value
            }
            current = .object(fields)
            guard table.keyText(of: current) == rowKey else { throw ClientError(.local, "a local update cannot change the primary key") }
            try Self.checkRules(current, of: table, given: Set(pairs.map(\.key)))
            try transaction.writeRow(current, into: table, replacing: true)
            try enqueue(table: table, op: "update", rowKey: rowKey, record: changes, priority: priority, now: now, in: transaction)
            try beforeCommit?()
        }
    }

    /// Deletes the local row with primary key `key` and queues the delete, in one transaction.
    public func delete(_ tableName: String, key: JSONValue, priority: MutationPriority = .normal, now: String) throws {
        try delete(tableName, key: key, priority: priority, now: now, beforeCommit: nil)
    }

    /// `delete`, with a test's fault hook run inside the transaction before it commits.
    package func delete(_ tableName: String, key: JSONValue, priority: MutationPriority = .normal, now: String,
                        beforeCommit: (@Sendable () throws -> Void)?) throws {
        let table = try table(tableName)
        guard let rowKey = table.keyText(of: key) else { throw ClientError(.local, "the key must hold \(table.primaryKey.joined(separator: ", "))") }
        try write { transaction in
            try transaction.deleteRow(table, rowKey: rowKey)
            try enqueue(table: table, op: "delete", rowKey: rowKey, record: nil, priority: priority, now: now, in: transaction)
            try beforeCommit?()
        }
    }

    /// The outbox: pending and acknowledged entries in queue order, then the parked (rejected) ones.
    public func outbox() throws -> [OutboxEntry] {
        try read { try $0.outbox() }.map(OutboxEntry.init)
    }

    func localDefault(_ column: CaravanCore.Column, now: String) -> JSONValue {
        switch column.defaultValue {
        case .value(let value)?: JSONValue(value)
        case .now?: .string(now)
        case .randomUUID?: .string(ids.next())
        case nil: .null
        }
    }

    /// What the server would refuse for good, refused before anything is written: a value of `row` that is not of its
    /// column's type, a null written (`given`) into a NOT NULL column, a row failing a declared CHECK (SQL's rule:
    /// only false fails). A NOT NULL column the write leaves out without a default is left to the server, which may
    /// fill it from the caller (`default auth.uid()`).
    static func checkRules(_ row: JSONValue, of table: TableSchema, given: Set<String>) throws {
        var values: [String: Value] = [:]
        for column in table.columns {
            let value: Value
            do {
                value = try column.type.value(fromJSON: row[column.name] ?? .null)
            } catch {
                throw ClientError(.local, code: error.code.description, "\(table.name).\(column.name): \(error.message)")
            }
            if value.isNull, !column.isNullable, given.contains(column.name) {
                throw ClientError(.local, code: CaravanError.Code.notNullViolation.description,
                                  "null value in column \"\(column.name)\" of relation \"\(table.name)\" violates not-null constraint")
            }
            values[column.name] = value
        }
        for check in table.checks {
            guard let rule = try? check.rule.bound(to: table), rule.evaluate({ values[$0] ?? .null }) == false else { continue }
            throw ClientError(.local, code: CaravanError.Code.checkViolation.description,
                              "new row for relation \"\(table.name)\" violates check constraint \"\(check.name)\"")
        }
    }

    func enqueue(table: TableSchema, op: String, rowKey: String, record: JSONValue?, priority: MutationPriority, now: String,
                 in transaction: LocalTransaction) throws {
        guard let key = try? JSONParser.parse(rowKey) else { throw ClientError(.local, "bad row key") }
        try transaction.enqueue(mutationID: ids.next(), table: table.name, operation: op, rowKey: rowKey, key: key,
                                record: record, priority: priority.rawValue, createdAt: now)
    }
}
