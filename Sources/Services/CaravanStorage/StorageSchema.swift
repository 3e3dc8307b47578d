package import CaravanCore

/// Supabase Storage's `storage.buckets` and `storage.objects` as Caravan tables, plus the chunks that hold object
/// bytes on PostgreSQL deployments. They take the reserved prefix `storage_` (Supabase's `storage` schema, as
/// `auth_` stands for `auth`): no app can declare a table of that name, and REST never serves them (`.internal`:
/// reached through `/storage/v1` only, but every change is in the change log; the chunks are `.secret`: bytes never
/// enter the change log).
package enum StorageSchema {
    package static let buckets = TableSchema(
        "storage_buckets",
        columns: [
            Column("id", .text, nullable: false),
            Column("name", .text, nullable: false),
            /// The user who created the bucket (NULL for the service role).
            Column("owner", .uuid),
            Column("public", .boolean, nullable: false, default: .value(.bool(false))),
            /// The largest object in bytes (NULL: the server's limit).
            Column("file_size_limit", .integer),
            /// MIME types objects may have (`image/jpeg`, `image/*`), checked on the bytes (NULL: any).
            Column("allowed_mime_types", .textArray),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("updated_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["name"]],
        checks: [CheckConstraint("storage_buckets_limit_not_negative", .condition(Condition(column: "file_size_limit", op: .gte, operand: .scalar("0"))))],
        exposure: .internal
    )

    package static let objects = TableSchema(
        "storage_objects",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("bucket_id", .text, nullable: false),
            /// The object's key in its bucket (`folder/cat.png`).
            Column("name", .text, nullable: false),
            /// The uploading user (NULL when the service role uploaded it).
            Column("owner", .uuid),
            /// Which bytes the row points at (a new id on every write of the object: bytes are never overwritten).
            Column("version", .text, nullable: false),
            Column("size", .integer, nullable: false),
            /// The MD5 of the bytes, hex, in double quotes (as S3 and Supabase give it).
            Column("etag", .text, nullable: false),
            Column("content_type", .text, nullable: false),
            Column("cache_control", .text),
            /// The uploader's `metadata` form field (a JSON object), when sent.
            Column("user_metadata", .json),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("updated_at", .timestamp, nullable: false, default: .now),
            Column("last_accessed_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        uniques: [["bucket_id", "name"]],
        foreignKeys: [ForeignKey(["bucket_id"], references: "storage_buckets", ["id"])],
        indexes: [
            Index("idx_storage_objects_name_prefix", [IndexKey("bucket_id"), IndexKey("name")], kind: .textPrefix),
            Index("idx_storage_objects_owner", [IndexKey("owner")]),
        ],
        exposure: .internal,
        owner: "owner"
    )

    /// Object bytes on PostgreSQL deployments, in chunks of `DatabaseByteStore.chunkSize` bytes (base64 text), so
    /// that every instance on the database serves them. Empty on SQLite deployments (files in the data directory).
    package static let chunks = TableSchema(
        "storage_object_chunks",
        columns: [
            Column("version", .text, nullable: false),
            Column("chunk_index", .integer, nullable: false),
            Column("data", .text, nullable: false),
        ],
        primaryKey: ["version", "chunk_index"],
        exposure: .secret
    )

    package static let tables = [buckets, objects, chunks]
}
