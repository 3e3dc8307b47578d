package import CaravanCore
import CaravanSQL
import Logging
import PostgresNIO

/// The change log as sync reads and compacts it, on PostgreSQL. Pages are read up to the settled mark
/// (`PostgresChangeLog`, `ChangeLogHorizon`): every entry below it is committed or will never exist, so a page
/// read after a cursor, bounded by it, has no gap that could fill later.
extension PostgresStore {
    private static let changeColumns = PostgresChangeLog.entryColumns

    /// The head a reader may follow to: the settled mark, or the compaction mark when that is higher (everything
    /// compacted was settled when it was removed, and the head must not go back when the log is empty).
    private static func headStatement(settled: Int64) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT GREATEST(")
        sql.value(.integer(settled), as: .integer)
        sql.append(#"::int8, (SELECT "compacted_through" FROM "caravan_sync_state" WHERE "id" = 1))"#)
        return sql
    }

    /// Entries of `tables` after `seq` up to `through`, oldest first, at most `limit`.
    private static func page(after seq: Int64, through: Int64, tables: [String], limit: Int?) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT \(changeColumns) FROM \"caravan_changes\" WHERE \"seq\" > ")
        sql.value(.integer(seq), as: .integer)
        sql.append(#" AND "seq" <= "#)
        sql.value(.integer(through), as: .integer)
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

    package func changeLogPage(after seq: Int64, tables: [String], limit: Int) async throws -> ChangeLogPage {
        let logger = self.logger
        return try await withConnection { connection in
            let settled = try await self.settle(on: connection)
            let head = try await connection.query(Self.headStatement(settled: settled).query, logger: logger).collect().first?.decode(Int64.self) ?? 0
            guard !tables.isEmpty else { return ChangeLogPage(changes: [], head: head, reachedLimit: false) }
            var changes = try await Self.decodeChanges(
                try await connection.query(Self.page(after: seq, through: head, tables: tables, limit: limit).query, logger: logger))
            let reachedLimit = changes.count >= limit
            if reachedLimit, let last = changes.last {
                // Transactions interleave in `seq`: the page goes on to the first point after its last entry where
                // no transaction has entries on both sides, and holds every entry up to there.
                var end = last.seq
                while let further = try await connection.query(PostgresChangeLog.beyond(end, through: head).query, logger: logger).collect().first?.decode(Int64?.self) {
                    end = further
                }
                if end > last.seq {
                    changes += try await Self.decodeChanges(
                        try await connection.query(Self.page(after: last.seq, through: end, tables: tables, limit: nil).query, logger: logger))
                }
            }
            return ChangeLogPage(changes: changes, head: head, reachedLimit: reachedLimit)
        }
    }

    package func changeLogState() async throws -> ChangeLogState {
        let logger = self.logger
        return try await withConnection { connection in
            let settled = try await self.settle(on: connection)
            var sql = PostgresSQL()
            sql.append(#"SELECT "epoch", "compacted_through", GREATEST("#)
            sql.value(.integer(settled), as: .integer)
            sql.append(#"::int8, "compacted_through") FROM "caravan_sync_state" WHERE "id" = 1"#)
            guard let row = try await connection.query(sql.query, logger: logger).collect().first else {
                throw CaravanError(.internalFailure, "the sync state row is missing (migration system-0005)")
            }
            let (epoch, compacted, head) = try row.decode((String, Int64, Int64).self)
            return ChangeLogState(epoch: epoch, compactedThrough: compacted, head: head)
        }
    }

    package func compactChangeLog(committedBefore cutoff: String) async throws -> ChangeLogCompaction {
        let logger = self.logger
        return try await withConnection { connection in
            // Only settled entries are removed: an entry still in flight below the mark would commit after its
            // readers had been told that everything up to the mark is gone.
            let settled = try await self.settle(on: connection)
            return try await Self.inTransaction(connection, logger: logger) {
                var through = PostgresSQL()
                through.append(#"SELECT max("seq") FROM "caravan_changes" WHERE "committed_at" < "#)
                through.value(.text(cutoff), as: .timestamp)
                through.append(#" AND "seq" <= "#)
                through.value(.integer(settled), as: .integer)
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
