import CaravanCore
import Foundation

/// The SQL of the on-device store: its own bookkeeping tables and the mirror of each synced table, rendered from
/// the table's `TableSchema` declaration (no hand-written DDL per app).
enum LocalSchema {
    /// The store's own tables (outbox, sync cursors, session, row freshness, caches, metadata): migration
    /// `caravan-local-0001`, never edited once shipped.
    static let bookkeeping = """
            CREATE TABLE "caravan_local_outbox" (
              "position" INTEGER PRIMARY KEY AUTOINCREMENT,
              "mutation_id" TEXT NOT NULL UNIQUE,
              "table_name" TEXT NOT NULL,
              "op" TEXT NOT NULL CHECK ("op" IN ('insert', 'upsert', 'update', 'delete')),
              "row_key" TEXT NOT NULL,
              "key" TEXT NOT NULL,
              "record" TEXT,
              "priority" INTEGER NOT NULL,
              "attempts" INTEGER NOT NULL DEFAULT 0,
              "created_at" TEXT NOT NULL,
              "state" TEXT NOT NULL DEFAULT 'pending' CHECK ("state" IN ('pending', 'acked', 'parked')),
              "checkpoint" INTEGER,
              "error_code" TEXT,
              "error_message" TEXT
            );
            CREATE INDEX "caravan_local_outbox_row" ON "caravan_local_outbox" ("table_name", "row_key");
            CREATE TABLE "caravan_local_sync" (
              "scope" TEXT PRIMARY KEY,
              "cursor" TEXT,
              "last_sync_at" TEXT,
              "last_duration_ms" INTEGER
            );
            CREATE TABLE "caravan_local_session" (
              "id" INTEGER PRIMARY KEY CHECK ("id" = 1),
              "access_token" TEXT NOT NULL,
              "refresh_token" TEXT NOT NULL,
              "expires_at" INTEGER NOT NULL,
              "user_id" TEXT NOT NULL
            );
            CREATE TABLE "caravan_local_rows" (
              "table_name" TEXT NOT NULL,
              "row_key" TEXT NOT NULL,
              "fetched_at" INTEGER NOT NULL,
              PRIMARY KEY ("table_name", "row_key")
            );
            CREATE TABLE "caravan_local_kv" (
              "cache" TEXT NOT NULL,
              "key" TEXT NOT NULL,
              "value" TEXT NOT NULL,
              "stored_at" INTEGER NOT NULL,
              "used_at" INTEGER NOT NULL,
              PRIMARY KEY ("cache", "key")
            );
            CREATE INDEX "caravan_local_kv_used" ON "caravan_local_kv" ("cache", "used_at");
            CREATE TABLE "caravan_local_meta" ("key" TEXT PRIMARY KEY, "value" TEXT NOT NULL);
            """

    /// Rows a pull evicted while a local write of theirs was waiting (kept for the write's verdict): migration
    /// `caravan-local-0002-evicted`, never edited once shipped.
    static let evictedWhileWaiting = """
            CREATE TABLE "caravan_local_evicted" (
              "table_name" TEXT NOT NULL,
              "row_key" TEXT NOT NULL,
              "seq" INTEGER NOT NULL,
              PRIMARY KEY ("table_name", "row_key")
            );
            """

    /// Attachments (storage objects on the device): uploads queued for the server (`pending`, or `parked` when it
    /// refused them) and cached copies (`cached`: downloads and settled uploads, evicted least recently `used` first
    /// past the store's byte budget). One entry per object; the bytes are files beside the store (`file`, a name in
    /// `<store>.attachments/`). Migration `caravan-local-0003-attachments`, never edited once shipped.
    static let attachments = """
            CREATE TABLE "caravan_local_attachments" (
              "position" INTEGER PRIMARY KEY AUTOINCREMENT,
              "bucket" TEXT NOT NULL,
              "path" TEXT NOT NULL,
              "file" TEXT NOT NULL,
              "size" INTEGER NOT NULL,
              "etag" TEXT NOT NULL,
              "content_type" TEXT,
              "state" TEXT NOT NULL CHECK ("state" IN ('pending', 'parked', 'cached')),
              "upsert" INTEGER NOT NULL DEFAULT 0,
              "attempts" INTEGER NOT NULL DEFAULT 0,
              "queued_at" TEXT,
              "used" INTEGER NOT NULL DEFAULT 0,
              "error_code" TEXT,
              "error_message" TEXT,
              UNIQUE ("bucket", "path")
            );
            CREATE INDEX "caravan_local_attachments_state" ON "caravan_local_attachments" ("state", "used");
            """

    /// A mirror table: the declared columns and primary key; no foreign keys or checks (the server decides, and a
    /// mirror may hold a child whose parent the caller cannot see).
    static func createMirror(_ table: TableSchema) -> String {
        var lines = table.columns.map { "  \(quote($0.name)) \(LocalValues.physicalType($0.type))" }
        lines.append("  PRIMARY KEY (\(table.primaryKey.map(quote).joined(separator: ", ")))")
        return "CREATE TABLE \(quote(table.name)) (\n\(lines.joined(separator: ",\n"))\n)"
    }

    /// `INSERT INTO "table" (every column) VALUES (?, …)`, replacing: with an upsert on the primary key that sets every
    /// other column. An upsert, not `INSERT OR REPLACE`: the row keeps its rowid and SQLite tells the change as an
    /// update of it (a REPLACE deletes the old row untold), which is how a live query follows the table.
    static func insert(_ table: TableSchema, replacing: Bool) -> String {
        let names = table.columns.map { quote($0.name) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        let insert = "INSERT INTO \(quote(table.name)) (\(names)) VALUES (\(marks))"
        guard replacing else { return insert }
        let others = table.columns.map(\.name).filter { !table.primaryKey.contains($0) }
        let conflict = " ON CONFLICT (\(table.primaryKey.map(quote).joined(separator: ", "))) DO "
        guard !others.isEmpty else { return insert + conflict + "NOTHING" }
        return insert + conflict + "UPDATE SET " + others.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
    }

    /// Every column of `table`, in declaration order, matching `terms` (already rendered, one `?` each), by key.
    static func select(_ table: TableSchema, columns: [String]? = nil, where terms: [String]) -> String {
        let names = (columns ?? table.columns.map(\.name)).map(quote).joined(separator: ", ")
        var sql = "SELECT \(names) FROM \(quote(table.name))"
        if !terms.isEmpty { sql += " WHERE " + terms.joined(separator: " AND ") }
        return sql + " ORDER BY \(table.primaryKey.map(quote).joined(separator: ", "))"
    }

    /// The primary keys of the rows past the `count` newest per value of `group` (newest by `order`, then by key).
    static func surplus(_ table: TableSchema, group: String, order: String) -> String {
        let keys = table.primaryKey.map(quote).joined(separator: ", ")
        let keysDescending = table.primaryKey.map { quote($0) + " DESC" }.joined(separator: ", ")
        return """
            SELECT \(keys) FROM (SELECT \(keys), row_number() OVER (PARTITION BY \(quote(group)) ORDER BY \(quote(order)) DESC, \(keysDescending)) AS "rank"
            FROM \(quote(table.name))) WHERE "rank" > ?
            """
    }

    static func deleteByKey(_ table: TableSchema) -> String {
        "DELETE FROM \(quote(table.name)) WHERE \(table.primaryKey.map { "\(quote($0)) = ?" }.joined(separator: " AND "))"
    }

    static func quote(_ identifier: String) -> String {
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
