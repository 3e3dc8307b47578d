package import CaravanCore
import GRDB

/// The signed-in session as stored.
package struct StoredSession: Sendable, Hashable {
    package let accessToken: String
    package let refreshToken: String
    package let expiresAt: Int64
    package let userID: String

    package init(accessToken: String, refreshToken: String, expiresAt: Int64, userID: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.userID = userID
    }
}

/// A sync scope's stored state: cursor, last sync time and duration.
package struct StoredSyncState: Sendable, Hashable {
    package let cursor: String?
    package let lastSyncAt: String?
    package let lastDurationMilliseconds: Int64?
}

extension LocalTransaction {
    // MARK: Session

    package func session() throws -> StoredSession? {
        try Row.fetchOne(db, sql: #"SELECT * FROM "caravan_local_session" WHERE "id" = 1"#).map { row in
            StoredSession(accessToken: row["access_token"], refreshToken: row["refresh_token"], expiresAt: row["expires_at"], userID: row["user_id"])
        }
    }

    /// Replaces the stored session (nil: signed out).
    package func saveSession(_ session: StoredSession?) throws {
        try db.execute(sql: #"DELETE FROM "caravan_local_session""#)
        guard let session else { return }
        try db.execute(sql: """
            INSERT INTO "caravan_local_session" ("id", "access_token", "refresh_token", "expires_at", "user_id") VALUES (1, ?, ?, ?, ?)
            """, arguments: [session.accessToken, session.refreshToken, session.expiresAt, session.userID])
    }

    // MARK: Sync scopes

    package func syncState(scope: String) throws -> StoredSyncState {
        let row = try Row.fetchOne(db, sql: #"SELECT * FROM "caravan_local_sync" WHERE "scope" = ?"#, arguments: [scope])
        return StoredSyncState(cursor: row?["cursor"], lastSyncAt: row?["last_sync_at"], lastDurationMilliseconds: row?["last_duration_ms"])
    }

    /// The scopes synced before, most recent first.
    package func syncedScopes() throws -> [String] {
        try String.fetchAll(db, sql: #"SELECT "scope" FROM "caravan_local_sync" ORDER BY "last_sync_at" DESC"#)
    }

    package func saveCursor(_ cursor: String, scope: String) throws {
        try db.execute(sql: """
            INSERT INTO "caravan_local_sync" ("scope", "cursor") VALUES (?, ?) ON CONFLICT ("scope") DO UPDATE SET "cursor" = excluded."cursor"
            """, arguments: [scope, cursor])
    }

    package func recordSync(scope: String, at syncedAt: String, durationMilliseconds: Int64) throws {
        try db.execute(sql: #"UPDATE "caravan_local_sync" SET "last_sync_at" = ?, "last_duration_ms" = ? WHERE "scope" = ?"#,
                       arguments: [syncedAt, durationMilliseconds, scope])
    }

    package func forgetScope(_ scope: String) throws {
        try db.execute(sql: #"DELETE FROM "caravan_local_sync" WHERE "scope" = ?"#, arguments: [scope])
    }

    // MARK: Row freshness

    /// Notes that the row was fetched from the server at `now` (seconds).
    package func markFetched(table: String, rowKey: String, now: Int64) throws {
        try db.cachedStatement(sql: #"INSERT OR REPLACE INTO "caravan_local_rows" ("table_name", "row_key", "fetched_at") VALUES (?, ?, ?)"#)
            .execute(arguments: [table, rowKey, now])
    }

    /// When the row was last fetched from the server (seconds), or nil when it never was.
    package func fetchedAt(table: String, rowKey: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: #"SELECT "fetched_at" FROM "caravan_local_rows" WHERE "table_name" = ? AND "row_key" = ?"#, arguments: [table, rowKey])
    }

    /// The keys of `table`'s rows fetched before `time` (seconds).
    package func rowKeysFetched(table: String, before time: Int64) throws -> [String] {
        try String.fetchAll(db, sql: #"SELECT "row_key" FROM "caravan_local_rows" WHERE "table_name" = ? AND "fetched_at" < ?"#, arguments: [table, time])
    }

    // MARK: Key-value caches and metadata

    /// The value of `key` in `cache`, marked used at `now`.
    package func cachedValue(_ cache: String, key: String, now: Int64) throws -> String? {
        guard let value = try String.fetchOne(db, sql: #"SELECT "value" FROM "caravan_local_kv" WHERE "cache" = ? AND "key" = ?"#,
                                              arguments: [cache, key]) else { return nil }
        try db.execute(sql: #"UPDATE "caravan_local_kv" SET "used_at" = ? WHERE "cache" = ? AND "key" = ?"#, arguments: [now, cache, key])
        return value
    }

    package func storeValue(_ value: String, in cache: String, key: String, now: Int64) throws {
        try db.execute(sql: """
            INSERT INTO "caravan_local_kv" ("cache", "key", "value", "stored_at", "used_at") VALUES (?, ?, ?, ?, ?)
            ON CONFLICT ("cache", "key") DO UPDATE SET "value" = excluded."value", "stored_at" = excluded."stored_at", "used_at" = excluded."used_at"
            """, arguments: [cache, key, value, now, now])
    }

    /// Keeps the `maxEntries` most recently used entries of `cache`; returns how many went.
    package func evictLeastRecentlyUsed(_ cache: String, keeping maxEntries: Int) throws -> Int {
        try db.execute(sql: """
            DELETE FROM "caravan_local_kv" WHERE "cache" = ? AND "key" NOT IN
              (SELECT "key" FROM "caravan_local_kv" WHERE "cache" = ? ORDER BY "used_at" DESC, "key" LIMIT ?)
            """, arguments: [cache, cache, maxEntries])
        return db.changesCount
    }

    package func metaValue(_ key: String) throws -> String? {
        try String.fetchOne(db, sql: #"SELECT "value" FROM "caravan_local_meta" WHERE "key" = ?"#, arguments: [key])
    }

    package func setMetaValue(_ value: String, for key: String) throws {
        try db.execute(sql: #"INSERT OR REPLACE INTO "caravan_local_meta" ("key", "value") VALUES (?, ?)"#, arguments: [key, value])
    }

    // MARK: Tables to pull again

    /// The tables whose declaration changed since their rows were pulled (`LocalSchemaUpgrade`).
    package func tablesToRefetch() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: #"SELECT substr("key", 9) FROM "caravan_local_meta" WHERE "key" LIKE 'refetch:%'"#))
    }

    /// The tables' rows were pulled anew.
    package func clearRefetch(_ tables: Set<String>) throws {
        for table in tables {
            try db.execute(sql: #"DELETE FROM "caravan_local_meta" WHERE "key" = ?"#, arguments: [LocalSchemaUpgrade.refetchKey(table)])
        }
    }
}
