ALTER TABLE "users" RENAME TO "auth_users";
