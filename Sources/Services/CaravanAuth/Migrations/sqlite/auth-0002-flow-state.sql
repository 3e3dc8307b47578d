CREATE TABLE "auth_flow_state" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "auth_code_hash" TEXT NOT NULL,
  "code_challenge" TEXT NOT NULL,
  "code_challenge_method" TEXT NOT NULL,
  "provider" TEXT NOT NULL,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "expires_at" TEXT NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE ("auth_code_hash"),
  FOREIGN KEY ("user_id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_code_challenge_method" CHECK ("code_challenge_method" IN ('s256', 'plain'))
);
CREATE INDEX "idx_auth_flow_state_user" ON "auth_flow_state" ("user_id");
