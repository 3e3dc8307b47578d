CREATE TABLE "caravan_secrets" (
  "name" TEXT NOT NULL,
  "secret" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL,
  PRIMARY KEY ("name")
);