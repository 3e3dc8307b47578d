ALTER TABLE "users" RENAME TO "auth_users";
ALTER INDEX "users_pkey" RENAME TO "auth_users_pkey";
ALTER INDEX "users_email_key" RENAME TO "auth_users_email_key";
ALTER INDEX "users_phone_key" RENAME TO "auth_users_phone_key";
