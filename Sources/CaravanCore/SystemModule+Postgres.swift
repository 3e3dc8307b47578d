extension SystemModule {
    // Frozen PostgreSQL statements of the system migrations, in the form `PostgresSchemaRenderer` gives.
    // Never edit a shipped entry; append new migrations.

    static let postgres0001Users = """
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
        """

    /// The change log. `json` (not `jsonb`) keeps each record's text exactly as logged, key order included.
    static let postgres0002ChangeLog = """
        CREATE TABLE "caravan_changes" (
          "seq" int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          "table_name" text NOT NULL,
          "primary_key" json NOT NULL,
          "op" text NOT NULL CHECK ("op" IN ('insert', 'update', 'delete')),
          "record" json,
          "old_record" json,
          "committed_at" timestamptz NOT NULL DEFAULT now(),
          "actor" text NOT NULL
        );
        CREATE INDEX "caravan_changes_table_seq" ON "caravan_changes" ("table_name", "seq");
        """

    static let postgres0003UsersAuth = """
        ALTER TABLE "users" ADD COLUMN "encrypted_password" text;
        ALTER TABLE "users" ADD COLUMN "email_confirmed_at" timestamptz;
        ALTER TABLE "users" ADD COLUMN "phone_confirmed_at" timestamptz;
        ALTER TABLE "users" ADD COLUMN "last_sign_in_at" timestamptz;
        """
}
