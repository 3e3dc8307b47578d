ALTER TABLE "users" ADD COLUMN "encrypted_password" TEXT;
ALTER TABLE "users" ADD COLUMN "email_confirmed_at" TEXT;
ALTER TABLE "users" ADD COLUMN "phone_confirmed_at" TEXT;
ALTER TABLE "users" ADD COLUMN "last_sign_in_at" TEXT;