CREATE TABLE "languages" (
  "code" text NOT NULL,
  "iso639_3" text NOT NULL,
  "iso639_1" text,
  "iso639_2b" text,
  "name_en" text NOT NULL,
  "name_ar" text,
  "native_name" text,
  "scope" text,
  "type" text,
  PRIMARY KEY ("code"),
  UNIQUE ("iso639_3"),
  CONSTRAINT "languages_code_not_blank" CHECK ("code" <> ''),
  CONSTRAINT "languages_iso639_3_not_blank" CHECK ("iso639_3" <> ''),
  CONSTRAINT "languages_name_en_not_blank" CHECK ("name_en" <> '')
);
CREATE INDEX "idx_languages_iso639_2b" ON "languages" ("iso639_2b");
CREATE TABLE "profiles" (
  "id" uuid NOT NULL,
  "first_name" text NOT NULL,
  "bio" text,
  "age" int8,
  "location" text,
  "native_language" text NOT NULL,
  "learning_languages" text[] NOT NULL,
  "proficiency_levels" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "learning_goals" text[] NOT NULL DEFAULT ARRAY[]::text[],
  "profile_image_url" text,
  "is_premium" boolean NOT NULL DEFAULT false,
  "granularity_level" int8 NOT NULL DEFAULT 2,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "last_active" timestamptz DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "profiles_first_name_not_blank" CHECK ("first_name" <> ''),
  CONSTRAINT "valid_age" CHECK (("age" >= 18 AND "age" <= 120)),
  CONSTRAINT "granularity_level_range" CHECK (("granularity_level" >= 0 AND "granularity_level" <= 3)),
  CONSTRAINT "valid_languages" CHECK ("learning_languages" <> ARRAY[]::text[])
);
CREATE INDEX "idx_profiles_native_language" ON "profiles" ("native_language");
CREATE INDEX "idx_profiles_learning_languages" ON "profiles" USING gin ("learning_languages");
CREATE INDEX "idx_profiles_last_active" ON "profiles" ("last_active" DESC);
CREATE INDEX "idx_profiles_location" ON "profiles" ("location");
CREATE TABLE "profile_private" (
  "id" uuid NOT NULL,
  "email" text NOT NULL,
  "email_key" text NOT NULL,
  "cloudkit_record_id" text,
  PRIMARY KEY ("id"),
  UNIQUE ("email_key"),
  FOREIGN KEY ("id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "profile_private_email_not_blank" CHECK ("email" <> '')
);
CREATE TABLE "user_preferences" (
  "user_id" uuid NOT NULL,
  "min_age" int8 NOT NULL DEFAULT 18,
  "max_age" int8 NOT NULL DEFAULT 99,
  "max_distance_km" int8,
  "preferred_locations" text[] NOT NULL DEFAULT ARRAY[]::text[],
  "blocked_users" text[] NOT NULL DEFAULT ARRAY[]::text[],
  "notification_settings" jsonb NOT NULL DEFAULT '{"likes":true,"matches":true,"messages":true}'::jsonb,
  "privacy_settings" jsonb NOT NULL DEFAULT '{"show_location":true,"show_online":true}'::jsonb,
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("user_id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "user_preferences_min_age" CHECK ("min_age" >= 18),
  CONSTRAINT "user_preferences_age_order" CHECK ("min_age" <= "max_age"),
  CONSTRAINT "user_preferences_max_distance" CHECK ("max_distance_km" > 0)
);
CREATE TABLE "blocks" (
  "blocker_id" uuid NOT NULL,
  "blocked_id" uuid NOT NULL,
  PRIMARY KEY ("blocker_id", "blocked_id"),
  FOREIGN KEY ("blocker_id") REFERENCES "user_preferences" ("user_id") ON DELETE CASCADE
);
CREATE INDEX "idx_blocks_blocked" ON "blocks" ("blocked_id", "blocker_id");
CREATE TABLE "matches" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user1_id" uuid NOT NULL,
  "user2_id" uuid NOT NULL,
  "user1_liked" boolean NOT NULL DEFAULT false,
  "user2_liked" boolean NOT NULL DEFAULT false,
  "is_mutual" boolean NOT NULL DEFAULT false,
  "match_type" text NOT NULL DEFAULT 'normal',
  "matched_at" timestamptz NOT NULL DEFAULT now(),
  "conversation_id" uuid,
  "is_active" boolean NOT NULL DEFAULT true,
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
CREATE INDEX "idx_matches_mutual" ON "matches" ("is_mutual") WHERE "is_mutual" IS TRUE;
CREATE TABLE "swipes" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "swiper_id" uuid NOT NULL,
  "swiped_id" uuid NOT NULL,
  "direction" text NOT NULL,
  "swiped_at" timestamptz NOT NULL DEFAULT now(),
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
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "match_id" uuid NOT NULL,
  "user1_id" uuid NOT NULL,
  "user2_id" uuid NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "last_message_at" timestamptz,
  "last_message_preview" text,
  "message_count" int8 NOT NULL DEFAULT 0,
  "is_active" boolean NOT NULL DEFAULT true,
  PRIMARY KEY ("id"),
  UNIQUE ("match_id"),
  FOREIGN KEY ("match_id", "user1_id", "user2_id") REFERENCES "matches" ("id", "user1_id", "user2_id") ON DELETE CASCADE,
  CONSTRAINT "valid_message_count" CHECK ("message_count" >= 0)
);
CREATE INDEX "idx_conversations_last_message" ON "conversations" ("last_message_at" DESC);
CREATE TABLE "messages" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "conversation_id" uuid NOT NULL,
  "sender_id" uuid NOT NULL,
  "receiver_id" uuid NOT NULL,
  "original_text" text NOT NULL,
  "original_language" text NOT NULL,
  "translated_text" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "ai_insights" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "edited_at" timestamptz,
  "is_read" boolean NOT NULL DEFAULT false,
  "is_delivered" boolean NOT NULL DEFAULT false,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("conversation_id") REFERENCES "conversations" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("sender_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("receiver_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "valid_participants" CHECK ("sender_id" <> "receiver_id"),
  CONSTRAINT "messages_text_length" CHECK (("original_text" <> '' AND NOT ("original_text" LIKE '_________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________%')))
);
CREATE INDEX "idx_messages_conversation" ON "messages" ("conversation_id", "created_at");
CREATE INDEX "idx_messages_created" ON "messages" ("created_at" DESC);
CREATE INDEX "idx_messages_sender" ON "messages" ("sender_id");
CREATE INDEX "idx_messages_receiver" ON "messages" ("receiver_id");
CREATE TABLE "saved_phrases" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "message_id" uuid,
  "original_text" text NOT NULL,
  "translated_text" text NOT NULL,
  "language" text NOT NULL,
  "context" text,
  "cloudkit_record_id" text,
  "saved_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("message_id") REFERENCES "messages" ("id") ON DELETE SET NULL
);
CREATE INDEX "idx_saved_phrases_user" ON "saved_phrases" ("user_id");
CREATE INDEX "idx_saved_phrases_language" ON "saved_phrases" ("language");
CREATE TABLE "analytics_events" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "event_type" text NOT NULL,
  "event_data" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "device_info" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "profiles" ("id") ON DELETE CASCADE,
  CONSTRAINT "analytics_events_event_type_not_blank" CHECK ("event_type" <> '')
);
CREATE INDEX "idx_analytics_user" ON "analytics_events" ("user_id");
CREATE INDEX "idx_analytics_type" ON "analytics_events" ("event_type");
CREATE INDEX "idx_analytics_created" ON "analytics_events" ("created_at" DESC);
CREATE TABLE "translation_cache" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "text_hash" text NOT NULL,
  "from_language" text NOT NULL,
  "to_language" text NOT NULL,
  "translated_text" text NOT NULL,
  "provider" text NOT NULL DEFAULT 'openai',
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "usage_count" int8 NOT NULL DEFAULT 1,
  PRIMARY KEY ("id"),
  UNIQUE ("text_hash", "from_language", "to_language", "provider"),
  CONSTRAINT "translation_cache_hash" CHECK ("text_hash" ~ '^[0-9a-f]{64}$'),
  CONSTRAINT "translation_cache_usage" CHECK ("usage_count" >= 1)
);
CREATE INDEX "idx_translation_usage" ON "translation_cache" ("usage_count" DESC);
