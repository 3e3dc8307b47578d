CREATE TABLE "storage_buckets" (
  "id" text NOT NULL,
  "name" text NOT NULL,
  "owner" uuid,
  "public" boolean NOT NULL DEFAULT false,
  "file_size_limit" int8,
  "allowed_mime_types" text[],
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("name"),
  CONSTRAINT "storage_buckets_limit_not_negative" CHECK ("file_size_limit" >= 0)
);
CREATE TABLE "storage_objects" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "bucket_id" text NOT NULL,
  "name" text NOT NULL,
  "owner" uuid,
  "version" text NOT NULL,
  "size" int8 NOT NULL,
  "etag" text NOT NULL,
  "content_type" text NOT NULL,
  "cache_control" text,
  "user_metadata" jsonb,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  "last_accessed_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("bucket_id", "name"),
  FOREIGN KEY ("bucket_id") REFERENCES "storage_buckets" ("id")
);
CREATE INDEX "idx_storage_objects_name_prefix" ON "storage_objects" ("bucket_id" text_pattern_ops, "name" text_pattern_ops);
CREATE INDEX "idx_storage_objects_owner" ON "storage_objects" ("owner");
CREATE TABLE "storage_object_chunks" (
  "version" text NOT NULL,
  "chunk_index" int8 NOT NULL,
  "data" text NOT NULL,
  PRIMARY KEY ("version", "chunk_index")
);
