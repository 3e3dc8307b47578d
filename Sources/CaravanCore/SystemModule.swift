/// Tables every deployment has, whatever its apps: `users` stands in for Supabase's `auth.users`
/// and is filled by auth. It is secret: never reachable through REST, never in the change log (it holds the
/// password hash).
public enum SystemModule {
    public static let users = TableSchema(
        "users",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("email", .text),
            Column("phone", .text),
            Column("app_metadata", .json, nullable: false, default: .value(.json("{}"))),
            Column("user_metadata", .json, nullable: false, default: .value(.json("{}"))),
            Column("is_anonymous", .boolean, nullable: false, default: .value(.bool(false))),
            Column("created_at", .timestamp, nullable: false, default: .now),
            Column("updated_at", .timestamp, nullable: false, default: .now),
            // system-0003
            Column("encrypted_password", .text),
            Column("email_confirmed_at", .timestamp),
            Column("phone_confirmed_at", .timestamp),
            Column("last_sign_in_at", .timestamp),
        ],
        primaryKey: ["id"],
        uniques: [["email"], ["phone"]],
        exposure: .secret
    )

    /// Frozen migrations of the system tables. Never edit a shipped entry; append new ones.
    public static let migrations: [Migration] = [
        Migration(id: "system-0001-users", sql: [
            .postgres: postgres0001Users,
            .sqlite: """
            CREATE TABLE "users" (
              "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
              "email" TEXT,
              "phone" TEXT,
              "app_metadata" TEXT NOT NULL DEFAULT '{}' CHECK (json_valid("app_metadata")),
              "user_metadata" TEXT NOT NULL DEFAULT '{}' CHECK (json_valid("user_metadata")),
              "is_anonymous" INTEGER NOT NULL DEFAULT 0 CHECK ("is_anonymous" IN (0, 1)),
              "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
              "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
              PRIMARY KEY ("id"),
              UNIQUE ("email"),
              UNIQUE ("phone")
            );
            """,
        ]),
        Migration(id: "system-0002-change-log", sql: [
            .postgres: postgres0002ChangeLog,
            .sqlite: """
            CREATE TABLE "caravan_changes" (
              "seq" INTEGER PRIMARY KEY AUTOINCREMENT,
              "table_name" TEXT NOT NULL,
              "primary_key" TEXT NOT NULL CHECK (json_valid("primary_key")),
              "op" TEXT NOT NULL CHECK ("op" IN ('insert', 'update', 'delete')),
              "record" TEXT CHECK ("record" IS NULL OR json_valid("record")),
              "old_record" TEXT CHECK ("old_record" IS NULL OR json_valid("old_record")),
              "committed_at" TEXT NOT NULL,
              "actor" TEXT NOT NULL
            );
            CREATE INDEX "caravan_changes_table_seq" ON "caravan_changes" ("table_name", "seq");
            """,
        ]),
        Migration(id: "system-0003-users-auth", sql: [
            .postgres: postgres0003UsersAuth,
            .sqlite: """
            ALTER TABLE "users" ADD COLUMN "encrypted_password" TEXT;
            ALTER TABLE "users" ADD COLUMN "email_confirmed_at" TEXT;
            ALTER TABLE "users" ADD COLUMN "phone_confirmed_at" TEXT;
            ALTER TABLE "users" ADD COLUMN "last_sign_in_at" TEXT;
            """,
        ]),
        migration0004Secrets,
        migration0005Sync,
    ]

    public static let module = AppModule(name: "system", tables: [users, secrets, syncMutations], migrations: migrations,
                                         functions: [UserExport.function])
}
