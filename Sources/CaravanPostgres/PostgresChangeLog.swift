import CaravanCore
import CaravanSQL

/// How the change log (`caravan_changes`) stays in commit order on PostgreSQL, and how commits are announced.
///
/// **Order.** An identity column hands out `seq` when a row is inserted, not when its transaction commits, so two
/// concurrent transactions could commit 8 before 7; a reader of `changes(after: 6)` would then see 8, move its
/// cursor past 7 and never see it. To rule that out, every write transaction of the pipeline takes the
/// transaction-scoped advisory lock `writeOrderLock` before its first row-locking statement (SELECT … FOR UPDATE,
/// INSERT, UPDATE, DELETE, change-log append) and holds it until COMMIT or ROLLBACK. PostgreSQL makes a commit
/// visible before it releases the transaction's locks, so a transaction draws its `seq`s only once every smaller
/// `seq` is committed or rolled back (a rolled-back `seq` is a gap that never fills). A reader that sees `seq` n
/// therefore already sees every committed entry below n, whatever its snapshot.
///
/// The lock comes before any row lock of the transaction, so no lock-order cycle (deadlock) can involve it. The
/// price: write transactions on one database run one at a time from their first write to their commit. Reads —
/// REST reads and the reads inside a transaction before its first write — are not affected.
///
/// **Announce.** A transaction that logged changes runs `pg_notify('caravan_changes', '<last seq>')` just before
/// COMMIT; PostgreSQL delivers it to every listener once the commit is done, in commit order. The payload is a
/// hint only: notifications coalesce and are lost while a listener is disconnected, so `ChangeListener` always
/// reads the log after the last `seq` it delivered.
enum PostgresChangeLog {
    /// The advisory lock key that orders write transactions ("Caravan" + 2; the migration lock is + 1).
    static let writeOrderLock: Int64 = 0x4361_7261_7661_6E02

    /// The NOTIFY channel that carries new change-log `seq`s.
    static let channel = "caravan_changes"

    /// Waits for, then holds until the transaction ends, the write-order lock.
    static var lockStatement: PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT pg_advisory_xact_lock(")
        sql.value(.integer(writeOrderLock), as: .integer)
        sql.append(")")
        return sql
    }

    /// Queues the notification that `seq` (the transaction's last entry) is committed; sent on COMMIT.
    static func announce(_ seq: Int64) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT pg_notify(")
        sql.value(.text(channel), as: .text)
        sql.append(", ")
        sql.value(.text(String(seq)), as: .text)
        sql.append(")")
        return sql
    }

    /// The highest `seq` logged so far (0 for an empty log).
    static var latestStatement: PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"SELECT COALESCE(max("seq"), 0) FROM "caravan_changes""#)
        return sql
    }

    /// Entries after `seq`, oldest first, at most `limit`; the columns `decode` reads.
    static func changes(after seq: Int64, limit: Int) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"SELECT "seq", "table_name", "primary_key"::text, "op", "record"::text, "old_record"::text, "#)
        sql.append(PostgresSyntax.output(Column("committed_at", .timestamp)))
        sql.append(#", "actor", "tx_id" FROM "caravan_changes" WHERE "seq" > "#)
        sql.value(.integer(seq), as: .integer)
        sql.append(#" ORDER BY "seq" LIMIT "#)
        sql.value(.integer(Int64(limit)), as: .integer)
        return sql
    }
}
