CREATE INDEX "idx_profiles_native_last_active" ON "profiles" ("native_language", "last_active" DESC, "id");
