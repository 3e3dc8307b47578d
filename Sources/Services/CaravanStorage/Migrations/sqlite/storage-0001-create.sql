CREATE TABLE "storage_buckets" (
  "id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "owner" TEXT CHECK (length("owner") = 36),
  "public" INTEGER NOT NULL DEFAULT 0 CHECK ("public" IN (0, 1)),
  "file_size_limit" INTEGER,
  "allowed_mime_types" TEXT CHECK ("allowed_mime_types" IS NULL OR (json_valid("allowed_mime_types") AND json_type("allowed_mime_types") = 'array')),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("name"),
  CONSTRAINT "storage_buckets_limit_not_negative" CHECK ("file_size_limit" >= 0)
);
CREATE TABLE "storage_objects" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "bucket_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "owner" TEXT CHECK (length("owner") = 36),
  "version" TEXT NOT NULL,
  "size" INTEGER NOT NULL,
  "etag" TEXT NOT NULL,
  "content_type" TEXT NOT NULL,
  "cache_control" TEXT,
  "user_metadata" TEXT CHECK ("user_metadata" IS NULL OR json_valid("user_metadata")),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "last_accessed_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("bucket_id", "name"),
  FOREIGN KEY ("bucket_id") REFERENCES "storage_buckets" ("id")
);
CREATE INDEX "idx_storage_objects_name_prefix" ON "storage_objects" ("bucket_id", "name");
CREATE INDEX "idx_storage_objects_owner" ON "storage_objects" ("owner");
CREATE TABLE "storage_object_chunks" (
  "version" TEXT NOT NULL,
  "chunk_index" INTEGER NOT NULL,
  "data" TEXT NOT NULL,
  PRIMARY KEY ("version", "chunk_index")
);
