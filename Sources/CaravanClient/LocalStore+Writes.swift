public import CaravanCore
import Foundation
import GRDB

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

    init(_ row: Row) {
        position = row["position"]
        mutationID = row["mutation_id"]
        table = row["table_name"]
        operation = row["op"]
        rowKey = row["row_key"]
        key = (try? JSONParser.parse(row["key"] as String)) ?? .null
        record = (row["record"] as String?).flatMap { try? JSONParser.parse($0) }
        priority = MutationPriority(rawValue: row["priority"]) ?? .normal
        attempts = row["attempts"]
        createdAt = row["created_at"]
        state = State(rawValue: row["state"]) ?? .pending
        checkpoint = row["checkpoint"]
        errorCode = row["error_code"]
        errorMessage = row["error_message"]
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
    /// primary key with a random default is generated here (so the row has its final key offline); other defaults
    /// fill the local row only and are left to the server. Returns the local row.
    @discardableResult
    public func insert(_ tableName: String, _ record: JSONValue, priority: MutationPriority = .normal, now: String,
                       beforeCommit: (@Sendable () throws -> Void)? = nil) throws -> JSONValue {
        let table = try table(tableName)
        guard case .object(var sent) = record else { throw ClientError(.local, "a record must be a JSON object") }
        for name in sent.map(\.key) where table.column(named: name) == nil { throw ClientError(.local, "\(tableName) has no column \(name)") }
        for name in table.primaryKey where record[name] == nil {
            guard let column = table.column(named: name), column.defaultValue == .randomUUID else {
                throw ClientError(.local, "\(tableName).\(name) is required (the primary key)")
            }
            sent.append((name, .string(UUID().uuidString.lowercased())))
        }
        let full = JSONValue.object(sent)
        guard let rowKey = table.keyText(of: full) else { throw ClientError(.local, "\(tableName) needs its primary key") }
        let local = JSONValue.object(table.columns.map { column in (column.name, full[column.name] ?? Self.localDefault(column, now: now)) })
        try pool.write { db in
            try self.writeRow(local, into: table, in: db, replacing: false)
            try Self.enqueue(table: table, op: "insert", rowKey: rowKey, record: full, priority: priority, now: now, in: db)
            try beforeCommit?()
        }
        return local
    }

    /// Sets `changes` on the local row with primary key `key` and queues the update, in one transaction.
    public func update(_ tableName: String, key: JSONValue, _ changes: JSONValue, priority: MutationPriority = .normal, now: String,
                       beforeCommit: (@Sendable () throws -> Void)? = nil) throws {
        let table = try table(tableName)
        guard case .object(let pairs) = changes, !pairs.isEmpty else { throw ClientError(.local, "changes must be a non-empty JSON object") }
        guard let rowKey = table.keyText(of: key) else { throw ClientError(.local, "the key must hold \(table.primaryKey.joined(separator: ", "))") }
        try pool.write { db in
            guard var current = try Self.row(table, rowKey: rowKey, in: db), case .object(var fields) = current else {
                throw ClientError(.local, "no local \(tableName) row with key \(rowKey)")
            }
            for (name, value) in pairs {
                guard let index = fields.firstIndex(where: { $0.key == name }) else { throw ClientError(.local, "\(tableName) has no column \(name)") }
                fields[index].value = value
            }
            current = .object(fields)
            guard table.keyText(of: current) == rowKey else { throw ClientError(.local, "a local update cannot change the primary key") }
            try self.writeRow(current, into: table, in: db, replacing: true)
            try Self.enqueue(table: table, op: "update", rowKey: rowKey, record: changes, priority: priority, now: now, in: db)
            try beforeCommit?()
        }
    }

    /// Deletes the local row with primary key `key` and queues the delete, in one transaction.
    public func delete(_ tableName: String, key: JSONValue, priority: MutationPriority = .normal, now: String,
                       beforeCommit: (@Sendable () throws -> Void)? = nil) throws {
        let table = try table(tableName)
        guard let rowKey = table.keyText(of: key) else { throw ClientError(.local, "the key must hold \(table.primaryKey.joined(separator: ", "))") }
        try pool.write { db in
            try Self.deleteRow(table, rowKey: rowKey, in: db)
            try Self.enqueue(table: table, op: "delete", rowKey: rowKey, record: nil, priority: priority, now: now, in: db)
            try beforeCommit?()
        }
    }

    /// The outbox: pending and acknowledged entries in queue order, then the parked (rejected) ones.
    public func outbox() throws -> [OutboxEntry] {
        try pool.read { db in
            try Row.fetchAll(db, sql: #"SELECT * FROM "caravan_local_outbox" ORDER BY "state" = 'parked', "position""#).map(OutboxEntry.init)
        }
    }

    static func localDefault(_ column: CaravanCore.Column, now: String) -> JSONValue {
        switch column.defaultValue {
        case .value(let value)?: JSONValue(value)
        case .now?: .string(now)
        case .randomUUID?: .string(UUID().uuidString.lowercased())
        case nil: .null
        }
    }

    static func enqueue(table: TableSchema, op: String, rowKey: String, record: JSONValue?, priority: MutationPriority, now: String, in db: Database) throws {
        guard let key = try? JSONParser.parse(rowKey) else { throw ClientError(.local, "bad row key") }
        try db.execute(sql: """
            INSERT INTO "caravan_local_outbox" ("mutation_id", "table_name", "op", "row_key", "key", "record", "priority", "created_at")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [UUID().uuidString.lowercased(), table.name, op, rowKey, key.jsonText, record?.jsonText, priority.rawValue, now])
    }

    static func row(_ table: TableSchema, rowKey: String, in db: Database) throws -> JSONValue? {
        guard let key = try? JSONParser.parse(rowKey) else { return nil }
        return try rows(table, where: table.primaryKey.map { ($0, key[$0] ?? .null) }, in: db).first
    }

    /// Writes `row` (a JSON object; absent columns are NULL) as the local row, in one pass over its fields.
    func writeRow(_ row: JSONValue, into table: TableSchema, in db: Database, replacing: Bool) throws {
        var values = [DatabaseValue](repeating: .null, count: table.columns.count)
        if case .object(let pairs) = row {
            for (name, value) in pairs {
                guard let position = table.position(of: name) else { continue }
                values[position] = try LocalValues.databaseValue(value, for: table.columns[position])
            }
        }
        do {
            let sql = replacing ? insertStatements[table.name]?.replacing : insertStatements[table.name]?.inserting
            try db.cachedStatement(sql: sql ?? LocalValues.insertStatement(table, replacing: replacing)).execute(arguments: StatementArguments(values))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw ClientError(.local, "a local \(table.name) row with that key exists already")
        }
    }

    static func deleteRow(_ table: TableSchema, rowKey: String, in db: Database) throws {
        guard let key = try? JSONParser.parse(rowKey) else { return }
        let terms = table.primaryKey.map { "\(LocalValues.quote($0)) = ?" }.joined(separator: " AND ")
        let values = try table.primaryKey.map { name -> DatabaseValue in
            guard let column = table.column(named: name) else { return .null }
            return try LocalValues.databaseValue(key[name] ?? .null, for: column)
        }
        try db.cachedStatement(sql: "DELETE FROM \(LocalValues.quote(table.name)) WHERE \(terms)").execute(arguments: StatementArguments(values))
        try db.cachedStatement(sql: #"DELETE FROM "caravan_local_rows" WHERE "table_name" = ? AND "row_key" = ?"#).execute(arguments: [table.name, rowKey])
    }
}

