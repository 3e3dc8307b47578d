CREATE TABLE "auth_mfa_factors" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "friendly_name" text,
  "factor_type" text NOT NULL,
  "status" text NOT NULL,
  "secret" text NOT NULL,
  "last_used_step" int8,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_factor_type" CHECK ("factor_type" IN ('totp')),
  CONSTRAINT "valid_factor_status" CHECK ("status" IN ('unverified', 'verified'))
);
CREATE INDEX "idx_auth_mfa_factors_user" ON "auth_mfa_factors" ("user_id");
CREATE TABLE "auth_mfa_challenges" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "factor_id" uuid NOT NULL,
  "ip" text NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "verified_at" timestamptz,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("factor_id") REFERENCES "auth_mfa_factors" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_auth_mfa_challenges_factor" ON "auth_mfa_challenges" ("factor_id");
CREATE TABLE "auth_reauthentications" (
  "user_id" uuid NOT NULL,
  "code_hash" text NOT NULL,
  "attempts" int8 NOT NULL DEFAULT 0,
  "sent_at" timestamptz NOT NULL,
  "expires_at" timestamptz NOT NULL,
  PRIMARY KEY ("user_id"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE
);
