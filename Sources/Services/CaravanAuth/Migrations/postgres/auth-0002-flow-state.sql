CREATE TABLE "auth_flow_state" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "auth_code_hash" text NOT NULL,
  "code_challenge" text NOT NULL,
  "code_challenge_method" text NOT NULL,
  "provider" text NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "expires_at" timestamptz NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE ("auth_code_hash"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_code_challenge_method" CHECK ("code_challenge_method" IN ('s256', 'plain'))
);
CREATE INDEX "idx_auth_flow_state_user" ON "auth_flow_state" ("user_id");
