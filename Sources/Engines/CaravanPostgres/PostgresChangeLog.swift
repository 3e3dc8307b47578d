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
/// **Drawing a transaction's `seq`s together.** A closed mark can only fall where no committed transaction has
/// entries on both sides. Were each entry drawn as its row is written, a transaction's `seq`s would span its whole
/// run, and under continuous concurrent writers (4 writers of 10-row requests: BENCHMARKS.md) such points come
/// seldom: the closed mark stood still for a second and more while the settled mark moved on. So a transaction holds
/// its entries back (`PostgresTransaction.sendChanges`) and appends them in one statement right before COMMIT,
/// drawing its `seq`s within microseconds, labelled with the first of them (`tx_id`); it sends them sooner only when
/// something waits for an entry's `seq`, reads the log, or opens a savepoint. Nothing in the rules above depends on
/// it: it only makes closed points frequent.
///
/// The trade-off: a transaction that stays open after drawing a `seq` holds back delivery of every entry drawn after
/// its first one (delayed, never lost); it draws them just before COMMIT, unless something waited for one sooner
/// (above). Delivery order is `seq` order: a transaction that writes a row after another
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

    /// Appends `entries` (in order) in one statement, returning each one's `seq`, `committed_at` and `tx_id`, in
    /// `seq` order. The materialized CTE gives the transaction its id before any `seq` is drawn (the horizon's rule
    /// needs id-before-seq); the `seq`s are drawn in the entries' order, one after another within the statement.
    /// `tx_id` is `label` (the transaction's first `seq`, from an earlier batch of it), else the batch's first `seq`.
    static func append(_ entries: ArraySlice<ChangeEntry>, label: Int64?) -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append(#"WITH "caravan_xact" AS MATERIALIZED (SELECT pg_current_xact_id(), pg_get_serial_sequence('"caravan_changes"', 'seq')::regclass AS "sequence"), "#)
        // The sort comes before the target list's `nextval` (PostgreSQL evaluates volatile outputs after sorting).
        sql.append(#""caravan_batch" AS MATERIALIZED (SELECT nextval("e"."sequence") AS "seq", "e".* FROM (SELECT "v".*, "x"."sequence" FROM "caravan_xact" AS "x", (VALUES "#)
        for (n, entry) in entries.enumerated() {
            sql.append(n == 0 ? "(" : ", (")
            sql.value(.integer(Int64(n)), as: .integer)
            for value in [Value.text(entry.table), .text(entry.primaryKey), .text(entry.operation.rawValue),
                          entry.record.map(Value.text) ?? .null, entry.oldRecord.map(Value.text) ?? .null, .text(entry.actor)] {
                sql.append(", ")
                sql.value(value, as: .text)
            }
            sql.append(")")
        }
        sql.append(#") AS "v"("n", "table_name", "primary_key", "op", "record", "old_record", "actor") ORDER BY "v"."n") AS "e"), "#)
        sql.append(#""caravan_entry" AS (INSERT INTO "caravan_changes" ("seq", "table_name", "primary_key", "op", "record", "old_record", "actor", "tx_id") "#)
        sql.append(#"OVERRIDING SYSTEM VALUE SELECT "seq", "table_name", "primary_key"::json, "op", "record"::json, "old_record"::json, "actor", "#)
        if let label {
            sql.value(.integer(label), as: .integer)
        } else {
            sql.append(#"min("seq") OVER ()"#)
        }
        sql.append(#" FROM "caravan_batch" RETURNING "seq", "committed_at", "tx_id") SELECT "seq", "#)
        sql.append(PostgresSyntax.textOutput(Column("committed_at", .timestamp)))
        sql.append(#", "tx_id" FROM "caravan_entry" ORDER BY "seq""#)
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
