ALTER TABLE "profiles" RENAME TO "member_profiles";
