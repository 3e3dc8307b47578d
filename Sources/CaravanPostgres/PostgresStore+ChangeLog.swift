public import CaravanCore
import CaravanSQL
import Logging
import PostgresNIO

/// The change log as sync reads and compacts it, on PostgreSQL. Write transactions hold the write-order lock from
/// their first write to COMMIT (`PostgresChangeLog`), so once the head `seq` is visible every smaller entry is
/// committed or rolled back: a page read after the head, bounded by it, has no gap.
extension PostgresStore {
    private static let changeColumns = #""seq", "table_name", "primary_key"::text, "op", "record"::text, "old_record"::text, "#
        + PostgresSyntax.output(Column("committed_at", .timestamp)) + #", "actor", "tx_id""#

    private static var headStatement: PostgresSQL {
        var sql = PostgresSQL()
        // The mark keeps the head from going back when compaction has removed every entry.
        sql.append(#"SELECT GREATEST((SELECT COALESCE(max("seq"), 0) FROM "caravan_changes"), "#)
        sql.append(#"(SELECT "compacted_through" FROM "caravan_sync_state" WHERE "id" = 1))"#)
        return sql
    }

    private static func page(after seq: Int64, head: Int64, tables: [String], transaction: Int64?, limit: Int?) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT \(changeColumns) FROM \"caravan_changes\" WHERE \"seq\" > ")
        sql.value(.integer(seq), as: .integer)
        sql.append(#" AND "seq" <= "#)
        sql.value(.integer(head), as: .integer)
        if let transaction {
            sql.append(#" AND "tx_id" = "#)
            sql.value(.integer(transaction), as: .integer)
        }
        sql.append(#" AND "table_name" IN ("#)
        for (i, table) in tables.enumerated() {
            if i > 0 { sql.append(", ") }
            sql.value(.text(table), as: .text)
        }
        sql.append(#") ORDER BY "seq""#)
        if let limit {
            sql.append(" LIMIT ")
            sql.value(.integer(Int64(limit)), as: .integer)
        }
        return sql
    }

    private static func decodeChanges(_ rows: PostgresRowSequence) async throws -> [Change] {
        var changes: [Change] = []
        for try await row in rows {
            let (seq, table, key, op, record, oldRecord, committedAt, actor, transaction) =
                try row.decode((Int64, String, String, String, String?, String?, String, String, Int64?).self)
            changes.append(try change(seq: seq, table: table, primaryKey: key, op: op, record: record, oldRecord: oldRecord,
                                      committedAt: committedAt, actor: actor, transaction: transaction))
        }
        return changes
    }

    public func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage {
        let logger = self.logger
        return try await withConnection { connection in
            let head = try await connection.query(Self.headStatement.query, logger: logger).collect().first?.decode(Int64.self) ?? 0
            guard !tables.isEmpty else { return ChangeLogPage(changes: [], head: head, reachedLimit: false) }
            var changes = try await Self.decodeChanges(
                try await connection.query(Self.page(after: seq, head: head, tables: tables, transaction: nil, limit: limit).query, logger: logger))
            let reachedLimit = changes.count >= limit
            if reachedLimit, let last = changes.last {
                let rest = Self.page(after: last.seq, head: head, tables: tables, transaction: last.transaction, limit: nil)
                changes += try await Self.decodeChanges(try await connection.query(rest.query, logger: logger))
            }
            return ChangeLogPage(changes: changes, head: head, reachedLimit: reachedLimit)
        }
    }

    public func changeLogState() async throws -> ChangeLogState {
        let logger = self.logger
        return try await withConnection { connection in
            var sql = PostgresSQL()
            sql.append(#"SELECT "epoch", "compacted_through", GREATEST((SELECT COALESCE(max("seq"), 0) FROM "caravan_changes"), "compacted_through") "#)
            sql.append(#"FROM "caravan_sync_state" WHERE "id" = 1"#)
            guard let row = try await connection.query(sql.query, logger: logger).collect().first else {
                throw CaravanError(.internalFailure, "the sync state row is missing (migration system-0005)")
            }
            let (epoch, compacted, head) = try row.decode((String, Int64, Int64).self)
            return ChangeLogState(epoch: epoch, compactedThrough: compacted, head: head)
        }
    }

    public func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.inTransaction(connection, logger: logger) {
                // Compaction takes the write-order lock too, so it never races a writer's seq assignment.
                _ = try await connection.query(PostgresChangeLog.lockStatement.query, logger: logger).collect()
                var through = PostgresSQL()
                through.append(#"SELECT max("seq") FROM "caravan_changes" WHERE "committed_at" < "#)
                through.value(.text(cutoff), as: .timestamp)
                let mark = try await connection.query(through.query, logger: logger).collect().first?.decode(Int64?.self)
                var removed = 0
                if let mark {
                    var delete = PostgresSQL()
                    delete.append(#"WITH gone AS (DELETE FROM "caravan_changes" WHERE "seq" <= "#)
                    delete.value(.integer(mark), as: .integer)
                    delete.append(#" RETURNING 1) SELECT count(*) FROM gone"#)
                    removed = Int(try await connection.query(delete.query, logger: logger).collect().first?.decode(Int64.self) ?? 0)
                    var raise = PostgresSQL()
                    raise.append(#"UPDATE "caravan_sync_state" SET "compacted_through" = GREATEST("compacted_through", "#)
                    raise.value(.integer(mark), as: .integer)
                    raise.append(#") WHERE "id" = 1"#)
                    _ = try await connection.query(raise.query, logger: logger).collect()
                }
                var prune = PostgresSQL()
                prune.append(#"WITH gone AS (DELETE FROM "caravan_sync_mutations" WHERE "created_at" < "#)
                prune.value(.text(cutoff), as: .timestamp)
                prune.append(#" RETURNING 1) SELECT count(*) FROM gone"#)
                let verdicts = Int(try await connection.query(prune.query, logger: logger).collect().first?.decode(Int64.self) ?? 0)
                let state = try await connection.query(#"SELECT "compacted_through" FROM "caravan_sync_state" WHERE "id" = 1"#, logger: logger)
                    .collect().first?.decode(Int64.self) ?? 0
                return ChangeLogCompaction(removedChanges: removed, removedVerdicts: verdicts, compactedThrough: state)
            }
        }
    }
}
