package import CaravanCore
import GRDB

/// The change log as sync reads and compacts it, on SQLite. One writer at a time commits in `seq` order, so any
/// read snapshot holds a gap-free prefix of the log.
extension SQLiteStore {
    static let changeColumns = #""seq", "table_name", "primary_key", "op", "record", "old_record", "committed_at", "actor", "tx_id""#

    static func change(_ row: Row) throws -> Change {
        try change(seq: row["seq"], table: row["table_name"], primaryKey: row["primary_key"], op: row["op"], record: row["record"],
                   oldRecord: row["old_record"], committedAt: row["committed_at"], actor: row["actor"], transaction: row["tx_id"])
    }

    static func head(_ db: Database) throws -> Int64 {
        // AUTOINCREMENT keeps its high-water mark in sqlite_sequence, so the head survives compaction of every entry.
        let logged = try Int64.fetchOne(db, sql: #"SELECT max("seq") FROM "caravan_changes""#) ?? 0
        let sequence = try Int64.fetchOne(db, sql: #"SELECT "seq" FROM sqlite_sequence WHERE "name" = 'caravan_changes'"#) ?? 0
        return max(logged, sequence)
    }

    package func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage {
        guard !tables.isEmpty else { return ChangeLogPage(changes: [], head: try await changeLogState().head, reachedLimit: false) }
        let placeholders = Array(repeating: "?", count: tables.count).joined(separator: ", ")
        return try await pool.read { db in
            let head = try Self.head(db)
            var arguments = StatementArguments([seq, head])
            arguments += StatementArguments(tables)
            arguments += [limit]
            var changes = try Row.fetchAll(db, sql: """
                SELECT \(Self.changeColumns) FROM "caravan_changes"
                WHERE "seq" > ? AND "seq" <= ? AND "table_name" IN (\(placeholders)) ORDER BY "seq" LIMIT ?
                """, arguments: arguments).map(Self.change)
            let reachedLimit = changes.count >= limit
            if reachedLimit, let last = changes.last {
                var rest = StatementArguments([last.seq, head, last.transaction])
                rest += StatementArguments(tables)
                changes += try Row.fetchAll(db, sql: """
                    SELECT \(Self.changeColumns) FROM "caravan_changes"
                    WHERE "seq" > ? AND "seq" <= ? AND "tx_id" = ? AND "table_name" IN (\(placeholders)) ORDER BY "seq"
                    """, arguments: rest).map(Self.change)
            }
            return ChangeLogPage(changes: changes, head: head, reachedLimit: reachedLimit)
        }
    }

    package func changeLogState() async throws -> ChangeLogState {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: #"SELECT "epoch", "compacted_through" FROM "caravan_sync_state" WHERE "id" = 1"#) else {
                throw CaravanError(.internalFailure, "the sync state row is missing (migration system-0005)")
            }
            return ChangeLogState(epoch: row["epoch"], compactedThrough: row["compacted_through"], head: try Self.head(db))
        }
    }

    package func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction {
        try await pool.write { db in
            let through = try Int64.fetchOne(db, sql: #"SELECT max("seq") FROM "caravan_changes" WHERE "committed_at" < ?"#, arguments: [cutoff])
            var removed = 0
            if let through {
                try db.execute(sql: #"DELETE FROM "caravan_changes" WHERE "seq" <= ?"#, arguments: [through])
                removed = db.changesCount
                try db.execute(sql: #"UPDATE "caravan_sync_state" SET "compacted_through" = max("compacted_through", ?) WHERE "id" = 1"#,
                               arguments: [through])
            }
            try db.execute(sql: #"DELETE FROM "caravan_sync_mutations" WHERE "created_at" < ?"#, arguments: [cutoff])
            let verdicts = db.changesCount
            let mark = try Int64.fetchOne(db, sql: #"SELECT "compacted_through" FROM "caravan_sync_state" WHERE "id" = 1"#) ?? 0
            return ChangeLogCompaction(removedChanges: removed, removedVerdicts: verdicts, compactedThrough: mark)
        }
    }
}
