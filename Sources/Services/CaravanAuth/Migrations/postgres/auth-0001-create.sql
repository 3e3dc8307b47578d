CREATE TABLE "auth_identities" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "provider" text NOT NULL,
  "provider_id" text NOT NULL,
  "identity_data" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "last_sign_in_at" timestamptz,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("provider", "provider_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_identities_user" ON "auth_identities" ("user_id");
CREATE TABLE "auth_sessions" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "aal" text NOT NULL DEFAULT 'aal1',
  "amr" jsonb NOT NULL DEFAULT '[]'::jsonb,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "refreshed_at" timestamptz,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_sessions_user" ON "auth_sessions" ("user_id");
CREATE TABLE "auth_refresh_tokens" (
  "token_hash" text NOT NULL,
  "session_id" uuid NOT NULL,
  "parent_hash" text,
  "revoked" boolean NOT NULL DEFAULT false,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "revoked_at" timestamptz,
  PRIMARY KEY ("token_hash"),
  FOREIGN KEY ("session_id") REFERENCES "auth_sessions" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_refresh_tokens_session" ON "auth_refresh_tokens" ("session_id");
CREATE INDEX "idx_auth_refresh_tokens_parent" ON "auth_refresh_tokens" ("parent_hash");
CREATE TABLE "auth_codes" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "purpose" text NOT NULL,
  "recipient" text NOT NULL,
  "code_hash" text NOT NULL,
  "attempts" int8 NOT NULL DEFAULT 0,
  "sent_at" timestamptz NOT NULL,
  "expires_at" timestamptz NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "purpose"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_code_purpose" CHECK ("purpose" IN ('signup', 'email', 'sms', 'recovery', 'email_change', 'phone_change'))
);
CREATE INDEX "idx_auth_codes_recipient" ON "auth_codes" ("recipient", "purpose");
CREATE TABLE "auth_outbox" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "channel" text NOT NULL,
  "recipient" text NOT NULL,
  "subject" text NOT NULL,
  "body" text NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id")
);
CREATE INDEX "idx_auth_outbox_recipient" ON "auth_outbox" ("recipient", "created_at");