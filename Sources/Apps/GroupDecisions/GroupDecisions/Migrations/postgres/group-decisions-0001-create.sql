CREATE TABLE "users" (
  "id" uuid NOT NULL,
  "name" text NOT NULL,
  "username" text,
  "email" text,
  "phone" text,
  "picture" text,
  "city" text,
  "state" text,
  "default_location" text,
  "sms_opt_in" boolean NOT NULL DEFAULT false,
  "notify_sms" boolean NOT NULL DEFAULT true,
  "notify_email" boolean NOT NULL DEFAULT true,
  "notify_push" boolean NOT NULL DEFAULT true,
  "notify_decision_started" boolean NOT NULL DEFAULT true,
  "notify_decision_completed" boolean NOT NULL DEFAULT true,
  "notify_friend_requests" boolean NOT NULL DEFAULT true,
  "notify_group_invites" boolean NOT NULL DEFAULT true,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("username"),
  FOREIGN KEY ("id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "users_name_not_blank" CHECK ("name" <> ''),
  CONSTRAINT "users_username_not_blank" CHECK ("username" <> '')
);
CREATE TABLE "profiles" (
  "id" uuid NOT NULL,
  "name" text NOT NULL,
  "username" text,
  "picture" text,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE TABLE "restaurants" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "google_place_id" text NOT NULL,
  "name" text NOT NULL,
  "address" text,
  "cuisine" text,
  "lat" float8,
  "lng" float8,
  "rating" numeric(2,1),
  "price_range" text,
  "time_to_pick_up" int8,
  "photos" text[],
  "phone" text,
  "website" text,
  "hours" jsonb,
  "cached_at" timestamptz NOT NULL DEFAULT now(),
  "last_updated" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("google_place_id"),
  CONSTRAINT "restaurants_name_not_blank" CHECK ("name" <> ''),
  CONSTRAINT "restaurants_google_place_id_not_blank" CHECK ("google_place_id" <> ''),
  CONSTRAINT "restaurants_rating_range" CHECK (("rating" >= 0.0 AND "rating" <= 5.0)),
  CONSTRAINT "restaurants_price_range" CHECK ("price_range" IN ('$', '$$', '$$$', '$$$$')),
  CONSTRAINT "restaurants_time_to_pick_up" CHECK ("time_to_pick_up" >= 0),
  CONSTRAINT "restaurants_coordinates" CHECK ((("lat" IS NULL AND "lng" IS NULL) OR (NOT ("lat" IS NULL) AND NOT ("lng" IS NULL) AND ("lat" >= -90.0 AND "lat" <= 90.0) AND ("lng" >= -180.0 AND "lng" <= 180.0))))
);
CREATE INDEX "idx_restaurants_cuisine" ON "restaurants" ("cuisine");
CREATE TABLE "groups" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "name" text NOT NULL,
  "description" text,
  "created_by" uuid,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL,
  CONSTRAINT "groups_name_not_blank" CHECK ("name" <> '')
);
CREATE TABLE "group_members" (
  "group_id" uuid NOT NULL,
  "user_id" uuid NOT NULL,
  "role" text NOT NULL DEFAULT 'member',
  "joined_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("group_id", "user_id"),
  FOREIGN KEY ("group_id") REFERENCES "groups" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "group_members_role" CHECK ("role" IN ('admin', 'member'))
);
CREATE INDEX "idx_group_members_user" ON "group_members" ("user_id");
CREATE TABLE "co_members" (
  "group_id" uuid NOT NULL,
  "viewer_id" uuid NOT NULL,
  "member_id" uuid NOT NULL,
  PRIMARY KEY ("group_id", "viewer_id", "member_id"),
  FOREIGN KEY ("group_id", "viewer_id") REFERENCES "group_members" ("group_id", "user_id") ON DELETE CASCADE,
  FOREIGN KEY ("group_id", "member_id") REFERENCES "group_members" ("group_id", "user_id") ON DELETE CASCADE
);
CREATE INDEX "idx_co_members_viewer" ON "co_members" ("viewer_id", "member_id");
CREATE TABLE "collections" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "name" text NOT NULL,
  "description" text,
  "type" text NOT NULL,
  "owner_id" uuid NOT NULL,
  "group_id" uuid,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  UNIQUE ("id", "owner_id"),
  UNIQUE ("id", "group_id"),
  FOREIGN KEY ("owner_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("group_id") REFERENCES "groups" ("id") ON DELETE CASCADE,
  CONSTRAINT "collections_name_not_blank" CHECK ("name" <> ''),
  CONSTRAINT "collections_type" CHECK ((("type" = 'personal' AND "group_id" IS NULL) OR ("type" = 'group' AND NOT ("group_id" IS NULL))))
);
CREATE INDEX "idx_collections_owner" ON "collections" ("owner_id");
CREATE INDEX "idx_collections_group" ON "collections" ("group_id");
CREATE TABLE "collection_restaurants" (
  "collection_id" uuid NOT NULL,
  "restaurant_id" uuid NOT NULL,
  "position" int8 NOT NULL,
  "group_id" uuid,
  "added_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("collection_id", "restaurant_id"),
  UNIQUE ("collection_id", "position"),
  FOREIGN KEY ("collection_id") REFERENCES "collections" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("collection_id", "group_id") REFERENCES "collections" ("id", "group_id") ON DELETE CASCADE,
  FOREIGN KEY ("restaurant_id") REFERENCES "restaurants" ("id") ON DELETE CASCADE,
  CONSTRAINT "collection_restaurants_position" CHECK ("position" >= 0)
);
CREATE TABLE "decisions" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "type" text NOT NULL,
  "collection_id" uuid NOT NULL,
  "group_id" uuid,
  "created_by" uuid,
  "method" text NOT NULL,
  "status" text NOT NULL DEFAULT 'active',
  "deadline" timestamptz,
  "visit_date" timestamptz NOT NULL,
  "result_restaurant_id" uuid,
  "selected_at" timestamptz,
  "reasoning" text,
  "weights" jsonb,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("collection_id") REFERENCES "collections" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("group_id") REFERENCES "groups" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL,
  FOREIGN KEY ("result_restaurant_id") REFERENCES "restaurants" ("id") ON DELETE RESTRICT,
  CONSTRAINT "decisions_type" CHECK ((("type" = 'personal' AND "group_id" IS NULL) OR ("type" = 'group' AND NOT ("group_id" IS NULL)))),
  CONSTRAINT "decisions_method" CHECK ("method" IN ('random', 'tiered', 'manual')),
  CONSTRAINT "decisions_status" CHECK ("status" IN ('active', 'completed', 'expired', 'closed')),
  CONSTRAINT "decisions_result" CHECK ((("status" = 'completed' AND NOT ("result_restaurant_id" IS NULL) AND NOT ("selected_at" IS NULL)) OR ("status" <> 'completed' AND "result_restaurant_id" IS NULL AND "selected_at" IS NULL))),
  CONSTRAINT "decisions_manual_weights" CHECK (("method" <> 'manual' OR "weights" IS NULL))
);
CREATE INDEX "idx_decisions_group" ON "decisions" ("group_id");
CREATE INDEX "idx_decisions_active_deadline" ON "decisions" ("deadline") WHERE "status" = 'active';
CREATE TABLE "decision_candidates" (
  "decision_id" uuid NOT NULL,
  "restaurant_id" uuid NOT NULL,
  PRIMARY KEY ("decision_id", "restaurant_id"),
  FOREIGN KEY ("decision_id") REFERENCES "decisions" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("restaurant_id") REFERENCES "restaurants" ("id") ON DELETE RESTRICT
);
CREATE TABLE "decision_participants" (
  "decision_id" uuid NOT NULL,
  "user_id" uuid NOT NULL,
  PRIMARY KEY ("decision_id", "user_id"),
  FOREIGN KEY ("decision_id") REFERENCES "decisions" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_decision_participants_user" ON "decision_participants" ("user_id");
CREATE TABLE "votes" (
  "decision_id" uuid NOT NULL,
  "user_id" uuid NOT NULL,
  "rankings" text[] NOT NULL,
  "submitted_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("decision_id", "user_id"),
  FOREIGN KEY ("decision_id", "user_id") REFERENCES "decision_participants" ("decision_id", "user_id") ON DELETE CASCADE
);
CREATE TABLE "notifications" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "user_id" uuid NOT NULL,
  "type" text NOT NULL,
  "title" text NOT NULL,
  "message" text NOT NULL,
  "data" jsonb,
  "read" boolean NOT NULL DEFAULT false,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "updated_at" timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "notifications_type" CHECK ("type" IN ('group_decision', 'friend_request', 'group_invitation', 'decision_result', 'admin_alert')),
  CONSTRAINT "notifications_title_not_blank" CHECK ("title" <> '')
);
CREATE INDEX "idx_notifications_user_unread" ON "notifications" ("user_id", "created_at" DESC);
CREATE TABLE "notification_outbox" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "notification_id" uuid NOT NULL,
  "user_id" uuid NOT NULL,
  "channel" text NOT NULL,
  "recipient" text NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  "sent_at" timestamptz,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE CASCADE,
  CONSTRAINT "notification_outbox_channel" CHECK ("channel" IN ('push', 'email', 'sms'))
);
CREATE INDEX "idx_notification_outbox_pending" ON "notification_outbox" ("created_at") WHERE "sent_at" IS NULL;
