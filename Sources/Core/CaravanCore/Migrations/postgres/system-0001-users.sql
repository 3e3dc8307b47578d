CREATE TABLE "users" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "email" text,
  "phone" text,
  "app_metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "user_metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "is_anonymous" boolean NOT NULL DEFAULT false,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("email"),
  UNIQUE ("phone")
);