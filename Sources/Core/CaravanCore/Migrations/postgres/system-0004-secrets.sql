CREATE TABLE "caravan_secrets" (
  "name" text NOT NULL,
  "secret" text NOT NULL,
  "created_at" int8 NOT NULL,
  PRIMARY KEY ("name")
);