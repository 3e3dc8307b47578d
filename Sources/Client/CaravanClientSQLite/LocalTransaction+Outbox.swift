package import CaravanCore
import GRDB

/// How many outbox entries wait for the server and how many it refused.
package struct OutboxCounts: Sendable, Hashable {
    package var pending = 0
    package var parked = 0
    /// Attachment uploads waiting, and refused for good.
    package var pendingUploads = 0
    package var parkedUploads = 0
    package init() {}
}

/// One stored outbox entry, as the SDK's `OutboxEntry` reads it.
package struct OutboxRecord: Sendable {
    package let position: Int64
    package let mutationID: String
    package let table: String
    package let operation: String
    package let rowKey: String
    package let key: JSONValue
    package let record: JSONValue?
    package let priority: Int
    package let attempts: Int
    package let createdAt: String
    /// `pending`, `acked` or `parked`.
    package let state: String
    package let checkpoint: Int64?
    package let errorCode: String?
    package let errorMessage: String?

    init(_ row: Row) {
        position = row["position"]
        mutationID = row["mutation_id"]
        table = row["table_name"]
        operation = row["op"]
        rowKey = row["row_key"]
        key = (try? JSONParser.parse(row["key"] as String)) ?? .null
        record = (row["record"] as String?).flatMap { try? JSONParser.parse($0) }
        priority = row["priority"]
        attempts = row["attempts"]
        createdAt = row["created_at"]
        state = row["state"]
        checkpoint = row["checkpoint"]
        errorCode = row["error_code"]
        errorMessage = row["error_message"]
    }
}

extension LocalTransaction {
    /// Queues a local write for the server.
    package func enqueue(mutationID: String, table: String, operation: String, rowKey: String, key: JSONValue, record: JSONValue?,
                        priority: Int, createdAt: String) throws {
        try db.execute(sql: """
            INSERT INTO "caravan_local_outbox" ("mutation_id", "table_name", "op", "row_key", "key", "record", "priority", "created_at")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [mutationID, table, operation, rowKey, key.jsonText, record?.jsonText, priority, createdAt])
    }

    /// Every entry: pending and acknowledged in queue order, then the parked (rejected) ones.
    package func outbox() throws -> [OutboxRecord] {
        try Row.fetchAll(db, sql: #"SELECT * FROM "caravan_local_outbox" ORDER BY "state" = 'parked', "position""#).map(OutboxRecord.init)
    }

    /// The entries waiting for the server, in queue order.
    package func pendingOutbox() throws -> [OutboxRecord] {
        try Row.fetchAll(db, sql: #"SELECT * FROM "caravan_local_outbox" WHERE "state" = 'pending' ORDER BY "position""#).map(OutboxRecord.init)
    }

    /// The rows local writes still guard (entries not parked): table, row key, whether the write is still pending,
    /// and the change-log position an acknowledged one was applied at. Only these four columns: a pull reads them
    /// for every page.
    package func writeGuards() throws -> [(table: String, rowKey: String, pending: Bool, checkpoint: Int64?)] {
        try Row.fetchAll(db, sql: #"SELECT "table_name", "row_key", "state", "checkpoint" FROM "caravan_local_outbox" WHERE "state" != 'parked'"#)
            .map { row in (row["table_name"], row["row_key"], (row["state"] as String) == "pending", row["checkpoint"]) }
    }

    /// The server applied the entry at change-log position `checkpoint`.
    package func markAcknowledged(_ mutationID: String, checkpoint: Int64) throws {
        try db.execute(sql: #"UPDATE "caravan_local_outbox" SET "state" = 'acked', "checkpoint" = ?, "attempts" = "attempts" + 1 WHERE "mutation_id" = ?"#,
                       arguments: [checkpoint, mutationID])
    }

    /// The server refused the entry for good: it is kept, parked, with the error.
    package func park(_ mutationID: String, code: String, message: String) throws {
        try db.execute(sql: """
            UPDATE "caravan_local_outbox" SET "state" = 'parked', "error_code" = ?, "error_message" = ?, "attempts" = "attempts" + 1
            WHERE "mutation_id" = ?
            """, arguments: [code, message, mutationID])
    }

    package func countAttempt(_ mutationID: String) throws {
        try db.execute(sql: #"UPDATE "caravan_local_outbox" SET "attempts" = "attempts" + 1 WHERE "mutation_id" = ?"#, arguments: [mutationID])
    }

    /// How many writes are waiting for the server (`pending`) and how many it refused (`parked`).
    package func outboxCounts() throws -> OutboxCounts {
        var counts = OutboxCounts()
        for row in try Row.fetchAll(db, sql: #"SELECT "state", count(*) FROM "caravan_local_outbox" GROUP BY "state""#) {
            let state: String = row[0], count: Int = row[1]
            if state == "pending" { counts.pending = count } else if state == "parked" { counts.parked = count }
        }
        for row in try Row.fetchAll(db, sql: #"SELECT "state", count(*) FROM "caravan_local_attachments" WHERE "state" IN ('pending', 'parked') GROUP BY "state""#) {
            let state: String = row[0], count: Int = row[1]
            if state == "pending" { counts.pendingUploads = count } else { counts.parkedUploads = count }
        }
        return counts
    }

    /// How many writes of the row are in the given states (`pending`, `acked`, `parked`).
    package func outboxCount(table: String, rowKey: String, states: Set<String>) throws -> Int {
        let marks = Array(repeating: "?", count: states.count).joined(separator: ", ")
        return try Int.fetchOne(db, sql: """
            SELECT count(*) FROM "caravan_local_outbox" WHERE "table_name" = ? AND "row_key" = ? AND "state" IN (\(marks))
            """, arguments: StatementArguments([table, rowKey] + states.sorted())) ?? 0
    }

    /// The keys of `table`'s rows with writes in the given states (`pending`, `acked`, `parked`).
    package func outboxRowKeys(table: String, states: Set<String>) throws -> Set<String> {
        let marks = Array(repeating: "?", count: states.count).joined(separator: ", ")
        let rows = try String.fetchAll(db, sql: """
            SELECT "row_key" FROM "caravan_local_outbox" WHERE "table_name" = ? AND "state" IN (\(marks))
            """, arguments: StatementArguments([table] + states.sorted()))
        return Set(rows)
    }

    package func acknowledgedIDs() throws -> [String] {
        try String.fetchAll(db, sql: #"SELECT "mutation_id" FROM "caravan_local_outbox" WHERE "state" = 'acked'"#)
    }

    package func forgetAcknowledged(_ mutationID: String) throws {
        try db.execute(sql: #"DELETE FROM "caravan_local_outbox" WHERE "mutation_id" = ? AND "state" = 'acked'"#, arguments: [mutationID])
    }

    // MARK: Rows evicted while a write of theirs waited

    /// A pull evicted the row at `seq`, but a local write of it was waiting: it stays until the write is settled.
    package func markEvicted(table: String, rowKey: String, seq: Int64) throws {
        try db.execute(sql: """
            INSERT INTO "caravan_local_evicted" ("table_name", "row_key", "seq") VALUES (?, ?, ?)
            ON CONFLICT ("table_name", "row_key") DO UPDATE SET "seq" = max("seq", excluded."seq")
            """, arguments: [table, rowKey, seq])
    }

    /// The server sent the row (or its deletion) after the eviction: the mark goes.
    package func clearEvicted(table: String, rowKey: String) throws {
        try db.execute(sql: #"DELETE FROM "caravan_local_evicted" WHERE "table_name" = ? AND "row_key" = ?"#, arguments: [table, rowKey])
    }

    /// The marked rows: table + row key → the seq of the eviction.
    package func evictedRows() throws -> [(table: String, rowKey: String, seq: Int64)] {
        try Row.fetchAll(db, sql: #"SELECT "table_name", "row_key", "seq" FROM "caravan_local_evicted""#)
            .map { row in (row["table_name"], row["row_key"], row["seq"]) }
    }

    /// The marked rows no waiting or acknowledged write holds any more (their writes are settled), marks removed.
    package func takeSettledEvictions() throws -> [(table: String, rowKey: String)] {
        let settled = try Row.fetchAll(db, sql: """
            SELECT "table_name", "row_key" FROM "caravan_local_evicted" AS e WHERE NOT EXISTS (
              SELECT 1 FROM "caravan_local_outbox" AS o
              WHERE o."table_name" = e."table_name" AND o."row_key" = e."row_key" AND o."state" IN ('pending', 'acked'))
            """).map { row -> (table: String, rowKey: String) in (row["table_name"], row["row_key"]) }
        for row in settled { try clearEvicted(table: row.table, rowKey: row.rowKey) }
        return settled
    }
}
