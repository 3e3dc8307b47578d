import CaravanCore
import CaravanSQL

/// How the change log (`caravan_changes`) is written concurrently on PostgreSQL and still read without ever
/// skipping an entry, and how commits are announced.
///
/// **The problem.** An identity column hands out `seq` when a row is inserted, not when its transaction commits.
/// Write transactions run concurrently, so 8 can commit before 7; a reader of `changes(after: 6)` that delivered 8
/// and moved its cursor past 7 would never see 7. (A rolled-back transaction leaves a gap that never fills.)
///
/// **The rule.** Readers deliver only the *settled* prefix of the log: the entries up to a `seq` below which every
/// entry is committed or will never exist. `ChangeLogHorizon` tracks that `seq`; each observation reads, in one
/// statement, the visible `seq`s above the mark, the highest visible `seq` `h`, and then the ids of the
/// transactions of this database running at that moment (every transaction holds a lock on its own id, listed in
/// `pg_locks`).
/// - Entries that follow the settled mark without a gap are committed, so settled.
/// - A gap below `h` belongs to a transaction that drew its `seq` before `h` was drawn. It had its transaction
///   id (and the lock on it) before drawing — the append takes an id first, see `append` — so if it is still
///   running when the observation lists the running ids, it is among them. Once none of those ids is running,
///   everything up to `h` is settled; if none was running, it is settled at once. (The snapshot's own `xmax` is
///   no such bound: PostgreSQL sets it from the latest *completed* id, so a running transaction can be above it.)
/// - Readers read entries in a statement after the observation, so they see what the ended transactions committed.
///
/// **Whole transactions.** Entries of concurrent transactions interleave in `seq`, so a settled mark can fall
/// between two entries of one committed transaction. Readers therefore follow the *closed* mark: the settled mark
/// lowered until no transaction has entries on both sides of it (`ChangeLogHorizon.close`), so a page or a
/// realtime run that ends at the mark never splits a transaction.
///
/// The trade-off: a transaction that stays open holds back delivery of every entry drawn after its first one
/// (delayed, never lost). Delivery order is `seq` order: a transaction that writes a row after another
/// transaction's write of that row committed (a row lock makes it wait) draws a larger `seq`, so each row's
/// entries come in commit order. Cursors stay plain `seq`s.
///
/// **Announce.** After a write transaction commits, the writing instance wakes its own change listener in process and
/// sends `pg_notify('caravan_changes', '<seq>')` from a statement of its own, coalesced to at most one per
/// `commitAnnouncementInterval` (`CommitAnnouncer`: a notification queued inside the write transaction would
/// serialize every commit). The payload is a hint only: notifications coalesce and are lost while a listener is
/// disconnected, so `ChangeListener` always reads the log after the last `seq` it delivered.
///
/// `committed_at` is `now()`: the start time of the writing transaction, not its commit time (PostgreSQL only
/// knows commit times with `track_commit_timestamp`). It may therefore go backwards between consecutive `seq`s.
enum PostgresChangeLog {
    /// The NOTIFY channel that carries new change-log `seq`s.
    static let channel = "caravan_changes"

    /// The columns `PostgresStore.change(…)` decodes, in order.
    static let entryColumns = #""seq", "table_name", "primary_key"::text, "op", "record"::text, "old_record"::text, "#
        + PostgresSyntax.textOutput(Column("committed_at", .timestamp)) + #", "actor", "tx_id""#

    /// Appends `entry`, returning its `seq` and `committed_at`. The materialized CTE gives the transaction its id
    /// before the identity draws the `seq` (the horizon's rule needs id-before-seq).
    static func append(_ entry: ChangeEntry) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"WITH "caravan_xact" AS MATERIALIZED (SELECT pg_current_xact_id()), "caravan_entry" AS ("#)
        sql.append(#"INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "old_record", "actor", "tx_id") SELECT "#)
        sql.value(.text(entry.table), as: .text)
        sql.append(", ")
        sql.value(.text(entry.primaryKey), as: .text)
        sql.append("::json, ")
        sql.value(.text(entry.operation.rawValue), as: .text)
        sql.append(", ")
        sql.value(entry.record.map(Value.text) ?? .null, as: .text)
        sql.append("::json, ")
        sql.value(entry.oldRecord.map(Value.text) ?? .null, as: .text)
        sql.append("::json, ")
        sql.value(.text(entry.actor), as: .text)
        sql.append(", ")
        sql.value(entry.transaction.map(Value.integer) ?? .null, as: .integer)
        sql.append(#" FROM "caravan_xact" RETURNING "seq", "committed_at") SELECT "seq", "#)
        sql.append(PostgresSyntax.textOutput(Column("committed_at", .timestamp)))
        sql.append(#" FROM "caravan_entry""#)
        return sql
    }

    /// Notifies every listener that the log holds committed entries up to `seq` (run on its own, after the commits).
    static func announce(_ seq: Int64) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT pg_notify(")
        sql.value(.text(channel), as: .text)
        sql.append(", ")
        sql.value(.text(String(seq)), as: .text)
        sql.append(")")
        return sql
    }

    /// One observation for `ChangeLogHorizon`: the highest visible `seq`, the visible entries after `mark` (at most
    /// `limit`, ascending) as two arrays — their `seq`s and the `seq` of their transaction's first entry — and, read
    /// after those, the ids of the transactions running now (each holds the exclusive lock on its own id).
    static func observation(after mark: Int64, limit: Int) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"SELECT COALESCE((SELECT max("seq") FROM "caravan_changes"), 0)"#)
        for column in [#""seq""#, #"COALESCE("tx_id", "seq")"#] {
            sql.append(", ARRAY(SELECT \(column) FROM \"caravan_changes\" WHERE \"seq\" > ")
            sql.value(.integer(mark), as: .integer)
            sql.append(#" ORDER BY "seq" LIMIT "#)
            sql.value(.integer(Int64(limit)), as: .integer)
            sql.append(")")
        }
        // Transactions of this database only (other databases of the server never write this log), and not the
        // announcements: a `SELECT pg_notify(…)` runs alone in its own transaction (`CommitAnnouncer`, broadcast) and
        // never draws a `seq`, but it takes a transaction id — counting it would hold settled entries back.
        sql.append(", ARRAY(SELECT \"transactionid\"::text::int8 FROM pg_locks WHERE \"locktype\" = 'transactionid' AND \"mode\" = 'ExclusiveLock' AND \"granted\" ")
        sql.append("AND \"pid\" IN (SELECT \"pid\" FROM pg_stat_activity WHERE \"datname\" = current_database() ")
        sql.append("AND \"query\" NOT LIKE 'SELECT pg\\_notify(%'))")
        return sql
    }

    /// The last entry, up to `through`, of the transactions that have entries both at or below `mark` and above
    /// it (NULL when none does): a page that ends at `mark` must go on to there.
    static func beyond(_ mark: Int64, through: Int64) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"SELECT max("seq") FROM "caravan_changes" WHERE "seq" > "#)
        sql.value(.integer(mark), as: .integer)
        sql.append(#" AND "seq" <= "#)
        sql.value(.integer(through), as: .integer)
        sql.append(#" AND "tx_id" <= "#)
        sql.value(.integer(mark), as: .integer)
        return sql
    }

    /// The first entry of the earliest transaction that has entries both at or below `mark` and above it (NULL
    /// when none does): a transaction-closed mark must go below it.
    static func straddling(_ mark: Int64) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"SELECT min("tx_id") FROM "caravan_changes" WHERE "seq" > "#)
        sql.value(.integer(mark), as: .integer)
        sql.append(#" AND "tx_id" <= "#)
        sql.value(.integer(mark), as: .integer)
        return sql
    }

    /// Entries after `seq` up to `through` (the settled mark), oldest first, at most `limit`.
    static func changes(after seq: Int64, through: Int64, limit: Int) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("SELECT \(entryColumns) FROM \"caravan_changes\" WHERE \"seq\" > ")
        sql.value(.integer(seq), as: .integer)
        sql.append(#" AND "seq" <= "#)
        sql.value(.integer(through), as: .integer)
        sql.append(#" ORDER BY "seq" LIMIT "#)
        sql.value(.integer(Int64(limit)), as: .integer)
        return sql
    }
}
