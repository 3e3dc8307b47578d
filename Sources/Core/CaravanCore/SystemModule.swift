/// Tables every deployment has, whatever its apps: `auth_users` stands in for Supabase's `auth.users`
/// and is filled by auth. It is secret: never reachable through REST, never in the change log (it holds the
/// password hash). It was called `users` until system-0006; an app may now declare a `users` table of its own.
public enum SystemModule {
    public static let users = TableSchema(
        "auth_users",
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

    /// The system tables' migrations, frozen in `Sources/Core/CaravanCore/Migrations/<dialect>/<id>.sql`. Never edit a
    /// shipped file; append new migrations. (system-0001…0005 were written by hand before tables were declared.)
    public static let migrations: [Migration] = [
        "system-0001-users", "system-0002-change-log", "system-0003-users-auth", "system-0004-secrets", "system-0005-sync",
    ].map { MigrationFiles(embedded: EmbeddedFiles.contents).migration($0, phase: .beforeUsersRename) }
        + ["system-0006-auth-users", "system-0007-search-functions"].map { MigrationFiles(embedded: EmbeddedFiles.contents).migration($0) }

    public static let module = AppModule(name: "system", tables: [users, secrets, syncMutations], migrations: migrations,
                                         asyncFunctions: [UserExport.function])
}
