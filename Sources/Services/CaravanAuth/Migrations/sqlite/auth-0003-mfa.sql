CREATE TABLE "auth_mfa_factors" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "friendly_name" TEXT,
  "factor_type" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "secret" TEXT NOT NULL,
  "last_used_step" INTEGER,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_factor_type" CHECK ("factor_type" IN ('totp')),
  CONSTRAINT "valid_factor_status" CHECK ("status" IN ('unverified', 'verified'))
);
CREATE INDEX "idx_auth_mfa_factors_user" ON "auth_mfa_factors" ("user_id");
CREATE TABLE "auth_mfa_challenges" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "factor_id" TEXT NOT NULL CHECK (length("factor_id") = 36),
  "ip" TEXT NOT NULL,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "verified_at" TEXT,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("factor_id") REFERENCES "auth_mfa_factors" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_mfa_challenges_factor" ON "auth_mfa_challenges" ("factor_id");
CREATE TABLE "auth_reauthentications" (
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "code_hash" TEXT NOT NULL,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "sent_at" TEXT NOT NULL,
  "expires_at" TEXT NOT NULL,
  PRIMARY KEY ("user_id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE
);
