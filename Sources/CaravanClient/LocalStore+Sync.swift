import CaravanCore
import Foundation
import GRDB

extension LocalStore {
    /// The next pending mutations to push, at most `limit`: higher priority first, but a row's writes never
    /// overtake each other (a write is sent at the highest priority of its row's later writes).
    func pendingBatch(limit: Int) throws -> [OutboxEntry] {
        let pending = try pool.read { db in
            try Row.fetchAll(db, sql: #"SELECT * FROM "caravan_local_outbox" WHERE "state" = 'pending' ORDER BY "position""#).map(OutboxEntry.init)
        }
        var effective: [String: MutationPriority] = [:]
        for entry in pending.reversed() {
            let row = entry.table + "\u{1}" + entry.rowKey
            effective[row] = max(effective[row] ?? .low, entry.priority)
        }
        let ordered = pending.enumerated().sorted { a, b in
            let pa = effective[a.element.table + "\u{1}" + a.element.rowKey] ?? a.element.priority
            let pb = effective[b.element.table + "\u{1}" + b.element.rowKey] ?? b.element.priority
            return pa != pb ? pa > pb : a.offset < b.offset
        }
        return Array(ordered.prefix(limit).map(\.element))
    }

    /// Records the server's verdicts: applied entries are kept as acknowledged (with their checkpoint) until a
    /// pull has caught up with them; rejected ones are parked with their error.
    func record(_ verdicts: [PushVerdict]) throws {
        try pool.write { db in
            for verdict in verdicts {
                switch verdict.status {
                case .applied(let seq):
                    try db.execute(sql: #"UPDATE "caravan_local_outbox" SET "state" = 'acked', "checkpoint" = ?, "attempts" = "attempts" + 1 WHERE "mutation_id" = ?"#,
                                   arguments: [seq, verdict.id])
                case .rejected(let code, let message):
                    try db.execute(sql: """
                        UPDATE "caravan_local_outbox" SET "state" = 'parked', "error_code" = ?, "error_message" = ?, "attempts" = "attempts" + 1
                        WHERE "mutation_id" = ?
                        """, arguments: [code, message, verdict.id])
                }
            }
        }
    }

    func countAttempt(_ ids: [String]) throws {
        try pool.write { db in
            for id in ids { try db.execute(sql: #"UPDATE "caravan_local_outbox" SET "attempts" = "attempts" + 1 WHERE "mutation_id" = ?"#, arguments: [id]) }
        }
    }

    /// Puts back the server's copy of a row whose write was rejected (nil: the server has none or hides it),
    /// unless later local writes of that row are still waiting.
    func restore(_ table: TableSchema, rowKey: String, serverRow: JSONValue?) throws {
        try pool.write { db in
            let waiting = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM "caravan_local_outbox" WHERE "table_name" = ? AND "row_key" = ? AND "state" = 'pending'
                """, arguments: [table.name, rowKey]) ?? 0
            guard waiting == 0 else { return }
            if let serverRow {
                try self.writeRow(.object(table.columns.map { ($0.name, serverRow[$0.name] ?? .null) }), into: table, in: db, replacing: true)
            } else {
                try Self.deleteRow(table, rowKey: rowKey, in: db)
            }
        }
    }

    /// Applies one pulled page (or live changes: no cursor) and saves its cursor, in one transaction. A row with a pending local write keeps its
    /// optimistic state; a row with an acknowledged write ignores pulled state older than the write's checkpoint.
    /// Returns how many changes were applied.
    func apply(_ reply: PullReply, scope: [String], now: Int64, beforeCommit: (@Sendable () throws -> Void)? = nil) throws -> Int {
        try pool.write { db in
            var guarded: [String: Int64] = [:]   // table + row key → the newest seq that must not be overwritten by older state
            for row in try Row.fetchAll(db, sql: #"SELECT "table_name", "row_key", "state", "checkpoint" FROM "caravan_local_outbox" WHERE "state" != 'parked'"#) {
                let id = (row["table_name"] as String) + "\u{1}" + (row["row_key"] as String)
                let limit: Int64 = (row["state"] as String) == "pending" ? .max : (row["checkpoint"] as Int64? ?? .max)
                guarded[id] = max(guarded[id] ?? 0, limit)
            }
            let timed = Set(caches.compactMap { rule -> String? in if case .timeToLive(let table, _) = rule { table } else { nil } })
            var applied = 0
            for change in reply.changes {
                guard let table = tables[change.table] else { continue }
                // The row key is only needed where a local write guards the row, or a time-to-live tracks it.
                var rowKey: String?
                if !guarded.isEmpty || timed.contains(table.name) || change.operation == .delete {
                    guard let key = table.keyText(of: change.key) else { continue }
                    rowKey = key
                    if let checkpoint = guarded[table.name + "\u{1}" + key], change.seq < checkpoint || checkpoint == .max { continue }
                }
                switch change.operation {
                case .upsert:
                    guard let record = change.record else { continue }
                    try self.writeRow(record, into: table, in: db, replacing: true)
                    if let rowKey, timed.contains(table.name) {
                        try db.cachedStatement(sql: #"INSERT OR REPLACE INTO "caravan_local_rows" ("table_name", "row_key", "fetched_at") VALUES (?, ?, ?)"#)
                            .execute(arguments: [table.name, rowKey, now])
                    }
                case .delete:
                    guard let rowKey else { continue }
                    try Self.deleteRow(table, rowKey: rowKey, in: db)
                }
                applied += 1
            }
            if let cursor = reply.cursor {
                try db.execute(sql: """
                    INSERT INTO "caravan_local_sync" ("scope", "cursor") VALUES (?, ?) ON CONFLICT ("scope") DO UPDATE SET "cursor" = excluded."cursor"
                    """, arguments: [scope.joined(separator: ","), cursor])
            }
            try beforeCommit?()
            return applied
        }
    }

    /// After a pull that began once `ids` were acknowledged has caught up: those writes are in the pulled state.
    func forgetAcknowledged(_ ids: [String], scope: [String], syncedAt: String, durationMilliseconds: Int64) throws {
        try pool.write { db in
            for id in ids {
                try db.execute(sql: #"DELETE FROM "caravan_local_outbox" WHERE "mutation_id" = ? AND "state" = 'acked'"#, arguments: [id])
            }
            try db.execute(sql: #"UPDATE "caravan_local_sync" SET "last_sync_at" = ?, "last_duration_ms" = ? WHERE "scope" = ?"#,
                           arguments: [syncedAt, durationMilliseconds, scope.joined(separator: ",")])
        }
    }

    func acknowledgedIDs() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: #"SELECT "mutation_id" FROM "caravan_local_outbox" WHERE "state" = 'acked'"#) }
    }

    /// 409 must-refetch: forget the cursor and the rows of `scope` (but rows with writes still waiting), so the next
    /// pull starts with a snapshot.
    func resetForRefetch(scope: [String]) throws {
        try pool.write { db in
            try db.execute(sql: #"DELETE FROM "caravan_local_sync" WHERE "scope" = ?"#, arguments: [scope.joined(separator: ",")])
            for name in scope {
                guard let table = tables[name] else { continue }
                let keep = Set(try String.fetchAll(db, sql: """
                    SELECT "row_key" FROM "caravan_local_outbox" WHERE "table_name" = ? AND "state" != 'parked'
                    """, arguments: [name]))
                for row in try Self.rows(table, where: [], in: db) {
                    guard let key = table.keyText(of: row), !keep.contains(key) else { continue }
                    try Self.deleteRow(table, rowKey: key, in: db)
                }
            }
        }
    }
}

