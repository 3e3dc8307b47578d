ALTER TABLE "users" ADD COLUMN "encrypted_password" text;
ALTER TABLE "users" ADD COLUMN "email_confirmed_at" timestamptz;
ALTER TABLE "users" ADD COLUMN "phone_confirmed_at" timestamptz;
ALTER TABLE "users" ADD COLUMN "last_sign_in_at" timestamptz;