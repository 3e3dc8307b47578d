CREATE TABLE "languages" (
  "code" TEXT NOT NULL,
  "iso639_3" TEXT NOT NULL,
  "iso639_1" TEXT,
  "iso639_2b" TEXT,
  "name_en" TEXT NOT NULL,
  "name_ar" TEXT,
  "native_name" TEXT,
  "scope" TEXT,
  "type" TEXT,
  PRIMARY KEY ("code"),
  UNIQUE ("iso639_3"),
  CONSTRAINT "languages_code_not_blank" CHECK ("code" <> ''),
  CONSTRAINT "languages_iso639_3_not_blank" CHECK ("iso639_3" <> ''),
  CONSTRAINT "languages_name_en_not_blank" CHECK ("name_en" <> '')
);
CREATE INDEX "idx_languages_iso639_2b" ON "languages" ("iso639_2b");
CREATE TABLE "profiles" (
  "id" TEXT NOT NULL CHECK (length("id") = 36),
  "first_name" TEXT NOT NULL,
  "bio" TEXT,
  "age" INTEGER,
  "location" TEXT,
  "native_language" TEXT NOT NULL,
  "learning_languages" TEXT NOT NULL CHECK ("learning_languages" IS NULL OR (json_valid("learning_languages") AND json_type("learning_languages") = 'array')),
  "proficiency_levels" TEXT NOT NULL DEFAULT '{}' CHECK ("proficiency_levels" IS NULL OR json_valid("proficiency_levels")),
  "learning_goals" TEXT NOT NULL DEFAULT '[]' CHECK ("learning_goals" IS NULL OR (json_valid("learning_goals") AND json_type("learning_goals") = 'array')),
  "profile_image_url" TEXT,
  "is_premium" INTEGER NOT NULL DEFAULT 0 CHECK ("is_premium" IN (0, 1)),
  "granularity_level" INTEGER NOT NULL DEFAULT 2,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "last_active" TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "profiles_first_name_not_blank" CHECK ("first_name" <> ''),
  CONSTRAINT "valid_age" CHECK (("age" >= 18 AND "age" <= 120)),
  CONSTRAINT "granularity_level_range" CHECK (("granularity_level" >= 0 AND "granularity_level" <= 3)),
  CONSTRAINT "valid_languages" CHECK ("learning_languages" <> '[]')
);
CREATE INDEX "idx_profiles_native_language" ON "profiles" ("native_language");
CREATE INDEX "idx_profiles_last_active" ON "profiles" ("last_active" DESC);
CREATE INDEX "idx_profiles_location" ON "profiles" ("location");
CREATE TABLE "profile_private" (
  "id" TEXT NOT NULL CHECK (length("id") = 36),
  "email" TEXT NOT NULL,
  "email_key" TEXT NOT NULL,
  "cloudkit_record_id" TEXT,
  PRIMARY KEY ("id"),
  UNIQUE ("email_key"),
  FOREIGN KEY ("id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "profile_private_email_not_blank" CHECK ("email" <> '')
);
CREATE TABLE "user_preferences" (
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "min_age" INTEGER NOT NULL DEFAULT 18,
  "max_age" INTEGER NOT NULL DEFAULT 99,
  "max_distance_km" INTEGER,
  "preferred_locations" TEXT NOT NULL DEFAULT '[]' CHECK ("preferred_locations" IS NULL OR (json_valid("preferred_locations") AND json_type("preferred_locations") = 'array')),
  "blocked_users" TEXT NOT NULL DEFAULT '[]' CHECK ("blocked_users" IS NULL OR (json_valid("blocked_users") AND json_type("blocked_users") = 'array')),
  "notification_settings" TEXT NOT NULL DEFAULT '{"likes":true,"matches":true,"messages":true}' CHECK ("notification_settings" IS NULL OR json_valid("notification_settings")),
  "privacy_settings" TEXT NOT NULL DEFAULT '{"show_location":true,"show_online":true}' CHECK ("privacy_settings" IS NULL OR json_valid("privacy_settings")),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("user_id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "user_preferences_min_age" CHECK ("min_age" >= 18),
  CONSTRAINT "user_preferences_age_order" CHECK ("min_age" <= "max_age"),
  CONSTRAINT "user_preferences_max_distance" CHECK ("max_distance_km" > 0)
);
CREATE TABLE "blocks" (
  "blocker_id" TEXT NOT NULL CHECK (length("blocker_id") = 36),
  "blocked_id" TEXT NOT NULL CHECK (length("blocked_id") = 36),
  PRIMARY KEY ("blocker_id", "blocked_id"),
  FOREIGN KEY ("blocker_id") REFERENCES "user_preferences" ("user_id") ON DELETE CASCADE
);
CREATE INDEX "idx_blocks_blocked" ON "blocks" ("blocked_id", "blocker_id");
CREATE TABLE "matches" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user1_id" TEXT NOT NULL CHECK (length("user1_id") = 36),
  "user2_id" TEXT NOT NULL CHECK (length("user2_id") = 36),
  "user1_liked" INTEGER NOT NULL DEFAULT 0 CHECK ("user1_liked" IN (0, 1)),
  "user2_liked" INTEGER NOT NULL DEFAULT 0 CHECK ("user2_liked" IN (0, 1)),
  "is_mutual" INTEGER NOT NULL DEFAULT 0 CHECK ("is_mutual" IN (0, 1)),
  "match_type" TEXT NOT NULL DEFAULT 'normal',
  "matched_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "conversation_id" TEXT CHECK (length("conversation_id") = 36),
  "is_active" INTEGER NOT NULL DEFAULT 1 CHECK ("is_active" IN (0, 1)),
  PRIMARY KEY ("id"),
  UNIQUE ("user1_id", "user2_id"),
  UNIQUE ("id", "user1_id", "user2_id"),
  FOREIGN KEY ("user1_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("user2_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "matches_match_type" CHECK ("match_type" IN ('normal', 'super_like')),
  CONSTRAINT "matches_ordered_pair" CHECK ("user1_id" < "user2_id")
);
CREATE INDEX "idx_matches_user1" ON "matches" ("user1_id");
CREATE INDEX "idx_matches_user2" ON "matches" ("user2_id");
CREATE INDEX "idx_matches_mutual" ON "matches" ("is_mutual") WHERE "is_mutual" IS 1;
CREATE TABLE "swipes" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "swiper_id" TEXT NOT NULL CHECK (length("swiper_id") = 36),
  "swiped_id" TEXT NOT NULL CHECK (length("swiped_id") = 36),
  "direction" TEXT NOT NULL,
  "swiped_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("swiper_id", "swiped_id"),
  FOREIGN KEY ("swiper_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("swiped_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "swipes_direction" CHECK ("direction" IN ('left', 'right', 'super')),
  CONSTRAINT "no_self_swipe" CHECK ("swiper_id" <> "swiped_id")
);
CREATE INDEX "idx_swipes_swiper" ON "swipes" ("swiper_id");
CREATE INDEX "idx_swipes_swiped_at" ON "swipes" ("swiped_at" DESC);
CREATE TABLE "conversations" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "match_id" TEXT NOT NULL CHECK (length("match_id") = 36),
  "user1_id" TEXT NOT NULL CHECK (length("user1_id") = 36),
  "user2_id" TEXT NOT NULL CHECK (length("user2_id") = 36),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "last_message_at" TEXT,
  "last_message_preview" TEXT,
  "message_count" INTEGER NOT NULL DEFAULT 0,
  "is_active" INTEGER NOT NULL DEFAULT 1 CHECK ("is_active" IN (0, 1)),
  PRIMARY KEY ("id"),
  UNIQUE ("match_id"),
  FOREIGN KEY ("match_id", "user1_id", "user2_id") REFERENCES "matches" ("id", "user1_id", "user2_id") ON DELETE CASCADE,
  CONSTRAINT "valid_message_count" CHECK ("message_count" >= 0)
);
CREATE INDEX "idx_conversations_last_message" ON "conversations" ("last_message_at" DESC);
CREATE TABLE "messages" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "conversation_id" TEXT NOT NULL CHECK (length("conversation_id") = 36),
  "sender_id" TEXT NOT NULL CHECK (length("sender_id") = 36),
  "receiver_id" TEXT NOT NULL CHECK (length("receiver_id") = 36),
  "original_text" TEXT NOT NULL,
  "original_language" TEXT NOT NULL,
  "translated_text" TEXT NOT NULL DEFAULT '{}' CHECK ("translated_text" IS NULL OR json_valid("translated_text")),
  "ai_insights" TEXT NOT NULL DEFAULT '{}' CHECK ("ai_insights" IS NULL OR json_valid("ai_insights")),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "edited_at" TEXT,
  "is_read" INTEGER NOT NULL DEFAULT 0 CHECK ("is_read" IN (0, 1)),
  "is_delivered" INTEGER NOT NULL DEFAULT 0 CHECK ("is_delivered" IN (0, 1)),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("conversation_id") REFERENCES "conversations" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("sender_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("receiver_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_participants" CHECK ("sender_id" <> "receiver_id"),
  CONSTRAINT "messages_text_length" CHECK (("original_text" <> '' AND NOT ("original_text" GLOB '?????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????????*')))
);
CREATE INDEX "idx_messages_conversation" ON "messages" ("conversation_id", "created_at");
CREATE INDEX "idx_messages_created" ON "messages" ("created_at" DESC);
CREATE INDEX "idx_messages_sender" ON "messages" ("sender_id");
CREATE INDEX "idx_messages_receiver" ON "messages" ("receiver_id");
CREATE TABLE "saved_phrases" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "message_id" TEXT CHECK (length("message_id") = 36),
  "original_text" TEXT NOT NULL,
  "translated_text" TEXT NOT NULL,
  "language" TEXT NOT NULL,
  "context" TEXT,
  "cloudkit_record_id" TEXT,
  "saved_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("message_id") REFERENCES "messages" ("id") ON DELETE SET NULL
);
CREATE INDEX "idx_saved_phrases_user" ON "saved_phrases" ("user_id");
CREATE INDEX "idx_saved_phrases_language" ON "saved_phrases" ("language");
CREATE TABLE "analytics_events" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "event_type" TEXT NOT NULL,
  "event_data" TEXT NOT NULL DEFAULT '{}' CHECK ("event_data" IS NULL OR json_valid("event_data")),
  "device_info" TEXT NOT NULL DEFAULT '{}' CHECK ("device_info" IS NULL OR json_valid("device_info")),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "analytics_events_event_type_not_blank" CHECK ("event_type" <> '')
);
CREATE INDEX "idx_analytics_user" ON "analytics_events" ("user_id");
CREATE INDEX "idx_analytics_type" ON "analytics_events" ("event_type");
CREATE INDEX "idx_analytics_created" ON "analytics_events" ("created_at" DESC);
CREATE TABLE "translation_cache" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "text_hash" TEXT NOT NULL,
  "from_language" TEXT NOT NULL,
  "to_language" TEXT NOT NULL,
  "translated_text" TEXT NOT NULL,
  "provider" TEXT NOT NULL DEFAULT 'openai',
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "usage_count" INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY ("id"),
  UNIQUE ("text_hash", "from_language", "to_language", "provider"),
  CONSTRAINT "translation_cache_hash" CHECK (caravan_regexp('^[0-9a-f]{64}$', "text_hash", 0)),
  CONSTRAINT "translation_cache_usage" CHECK ("usage_count" >= 1)
);
CREATE INDEX "idx_translation_usage" ON "translation_cache" ("usage_count" DESC);
