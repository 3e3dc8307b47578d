import GRDB

/// One stored attachment entry (`caravan_local_attachments`), as the SDK's `Attachment` reads it.
package struct StoredAttachment: Sendable, Hashable {
    package var bucket: String
    package var path: String
    /// The file's name in the store's attachments folder.
    package var file: String
    package var size: Int64
    /// `"<md5 hex>"`, as the server's etag.
    package var etag: String
    package var contentType: String?
    /// `pending`, `parked` or `cached`.
    package var state: String
    package var upsert: Bool
    package var attempts: Int
    package var queuedAt: String?
    package var errorCode: String?
    package var errorMessage: String?

    package init(bucket: String, path: String, file: String, size: Int64, etag: String, contentType: String?, state: String, upsert: Bool,
                 attempts: Int = 0, queuedAt: String?, errorCode: String? = nil, errorMessage: String? = nil) {
        self.bucket = bucket
        self.path = path
        self.file = file
        self.size = size
        self.etag = etag
        self.contentType = contentType
        self.state = state
        self.upsert = upsert
        self.attempts = attempts
        self.queuedAt = queuedAt
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    init(_ row: Row) {
        self.init(bucket: row["bucket"], path: row["path"], file: row["file"], size: row["size"], etag: row["etag"], contentType: row["content_type"],
                  state: row["state"], upsert: row["upsert"], attempts: row["attempts"], queuedAt: row["queued_at"], errorCode: row["error_code"],
                  errorMessage: row["error_message"])
    }
}

extension LocalTransaction {
    /// Stores `entry` as the object's only entry, marked most recently used; returns the file of the entry it
    /// replaced, for the caller to remove once the transaction has committed.
    package func putAttachment(_ entry: StoredAttachment) throws -> String? {
        let replaced = try attachment(bucket: entry.bucket, path: entry.path)
        try db.execute(sql: #"DELETE FROM "caravan_local_attachments" WHERE "bucket" = ? AND "path" = ?"#, arguments: [entry.bucket, entry.path])
        try db.execute(sql: """
            INSERT INTO "caravan_local_attachments" ("bucket", "path", "file", "size", "etag", "content_type", "state", "upsert", "attempts",
              "queued_at", "used", "error_code", "error_message")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max("used"), 0) + 1 FROM "caravan_local_attachments"), ?, ?)
            """, arguments: [entry.bucket, entry.path, entry.file, entry.size, entry.etag, entry.contentType, entry.state, entry.upsert,
                             entry.attempts, entry.queuedAt, entry.errorCode, entry.errorMessage])
        return replaced.map(\.file).flatMap { $0 == entry.file ? nil : $0 }
    }

    package func attachment(bucket: String, path: String) throws -> StoredAttachment? {
        try Row.fetchOne(db, sql: #"SELECT * FROM "caravan_local_attachments" WHERE "bucket" = ? AND "path" = ?"#, arguments: [bucket, path])
            .map(StoredAttachment.init)
    }

    /// Every entry: pending uploads in queue order, then the parked ones, then the cached copies, most recently used first.
    package func attachments() throws -> [StoredAttachment] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM "caravan_local_attachments"
            ORDER BY CASE "state" WHEN 'pending' THEN 0 WHEN 'parked' THEN 1 ELSE 2 END, CASE "state" WHEN 'cached' THEN -"used" ELSE "position" END
            """).map(StoredAttachment.init)
    }

    /// The uploads waiting for the server, in queue order.
    package func pendingAttachments() throws -> [StoredAttachment] {
        try Row.fetchAll(db, sql: #"SELECT * FROM "caravan_local_attachments" WHERE "state" = 'pending' ORDER BY "position""#).map(StoredAttachment.init)
    }

    /// Counts one more attempt of a pending upload; returns how many came before it (nil: no longer pending).
    package func countAttachmentAttempt(bucket: String, path: String) throws -> Int? {
        guard let attempts = try Int.fetchOne(db, sql: """
            SELECT "attempts" FROM "caravan_local_attachments" WHERE "bucket" = ? AND "path" = ? AND "state" = 'pending'
            """, arguments: [bucket, path]) else { return nil }
        try db.execute(sql: #"UPDATE "caravan_local_attachments" SET "attempts" = "attempts" + 1 WHERE "bucket" = ? AND "path" = ?"#,
                       arguments: [bucket, path])
        return attempts
    }

    /// The server holds the pending upload of `file` now: it becomes a cached copy (most recently used).
    package func settleAttachment(bucket: String, path: String, file: String) throws {
        try db.execute(sql: """
            UPDATE "caravan_local_attachments" SET "state" = 'cached', "error_code" = NULL, "error_message" = NULL,
              "used" = (SELECT coalesce(max("used"), 0) + 1 FROM "caravan_local_attachments")
            WHERE "bucket" = ? AND "path" = ? AND "file" = ? AND "state" = 'pending'
            """, arguments: [bucket, path, file])
    }

    /// The server refused the pending upload of `file` for good: kept with its error, never retried.
    package func parkAttachment(bucket: String, path: String, file: String, code: String, message: String) throws {
        try db.execute(sql: """
            UPDATE "caravan_local_attachments" SET "state" = 'parked', "error_code" = ?, "error_message" = ?
            WHERE "bucket" = ? AND "path" = ? AND "file" = ? AND "state" = 'pending'
            """, arguments: [code, message, bucket, path, file])
    }

    /// Marks the entry most recently used.
    package func touchAttachment(bucket: String, path: String) throws {
        try db.execute(sql: """
            UPDATE "caravan_local_attachments" SET "used" = (SELECT coalesce(max("used"), 0) + 1 FROM "caravan_local_attachments")
            WHERE "bucket" = ? AND "path" = ?
            """, arguments: [bucket, path])
    }

    /// Removes the entry; returns its file, for the caller to remove once the transaction has committed.
    package func removeAttachment(bucket: String, path: String) throws -> String? {
        let file = try attachment(bucket: bucket, path: path)?.file
        try db.execute(sql: #"DELETE FROM "caravan_local_attachments" WHERE "bucket" = ? AND "path" = ?"#, arguments: [bucket, path])
        return file
    }

    /// Removes the least recently used cached copies until those left hold at most `budget` bytes (pending and
    /// parked uploads are not counted and never removed); returns the removed entries' files.
    package func evictAttachments(over budget: Int64) throws -> [String] {
        let cached = try Row.fetchAll(db, sql: """
            SELECT "bucket", "path", "file", "size" FROM "caravan_local_attachments" WHERE "state" = 'cached' ORDER BY "used" DESC
            """)
        var kept: Int64 = 0
        var removed: [String] = []
        for row in cached {
            let size: Int64 = row["size"]
            if removed.isEmpty, kept + size <= budget {
                kept += size
                continue
            }
            // The first copy past the budget goes, and every copy used less recently than it.
            try db.execute(sql: #"DELETE FROM "caravan_local_attachments" WHERE "bucket" = ? AND "path" = ?"#, arguments: [row["bucket"] as String, row["path"] as String])
            removed.append(row["file"])
        }
        return removed
    }

    /// The files every entry points at.
    package func attachmentFiles() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: #"SELECT "file" FROM "caravan_local_attachments""#))
    }
}
