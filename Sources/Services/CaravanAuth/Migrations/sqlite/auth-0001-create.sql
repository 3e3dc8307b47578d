CREATE TABLE "auth_identities" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "provider" TEXT NOT NULL,
  "provider_id" TEXT NOT NULL,
  "identity_data" TEXT NOT NULL DEFAULT '{}' CHECK ("identity_data" IS NULL OR json_valid("identity_data")),
  "last_sign_in_at" TEXT,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("provider", "provider_id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_identities_user" ON "auth_identities" ("user_id");
CREATE TABLE "auth_sessions" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "aal" TEXT NOT NULL DEFAULT 'aal1',
  "amr" TEXT NOT NULL DEFAULT '[]' CHECK ("amr" IS NULL OR json_valid("amr")),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "refreshed_at" TEXT,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_sessions_user" ON "auth_sessions" ("user_id");
CREATE TABLE "auth_refresh_tokens" (
  "token_hash" TEXT NOT NULL,
  "session_id" TEXT NOT NULL CHECK (length("session_id") = 36),
  "parent_hash" TEXT,
  "revoked" INTEGER NOT NULL DEFAULT 0 CHECK ("revoked" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "revoked_at" TEXT,
  PRIMARY KEY ("token_hash"),
  FOREIGN KEY ("session_id") REFERENCES "auth_sessions" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_refresh_tokens_session" ON "auth_refresh_tokens" ("session_id");
CREATE INDEX "idx_auth_refresh_tokens_parent" ON "auth_refresh_tokens" ("parent_hash");
CREATE TABLE "auth_codes" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "purpose" TEXT NOT NULL,
  "recipient" TEXT NOT NULL,
  "code_hash" TEXT NOT NULL,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "sent_at" TEXT NOT NULL,
  "expires_at" TEXT NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE ("user_id", "purpose"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_code_purpose" CHECK ("purpose" IN ('signup', 'email', 'sms', 'recovery', 'email_change', 'phone_change'))
);
CREATE INDEX "idx_auth_codes_recipient" ON "auth_codes" ("recipient", "purpose");
CREATE TABLE "auth_outbox" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "channel" TEXT NOT NULL,
  "recipient" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id")
);
CREATE INDEX "idx_auth_outbox_recipient" ON "auth_outbox" ("recipient", "created_at");