CREATE TABLE "users" (
  "id" TEXT NOT NULL CHECK (length("id") = 36),
  "name" TEXT NOT NULL,
  "username" TEXT,
  "email" TEXT,
  "phone" TEXT,
  "picture" TEXT,
  "city" TEXT,
  "state" TEXT,
  "default_location" TEXT,
  "sms_opt_in" INTEGER NOT NULL DEFAULT 0 CHECK ("sms_opt_in" IN (0, 1)),
  "notify_sms" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_sms" IN (0, 1)),
  "notify_email" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_email" IN (0, 1)),
  "notify_push" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_push" IN (0, 1)),
  "notify_decision_started" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_decision_started" IN (0, 1)),
  "notify_decision_completed" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_decision_completed" IN (0, 1)),
  "notify_friend_requests" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_friend_requests" IN (0, 1)),
  "notify_group_invites" INTEGER NOT NULL DEFAULT 1 CHECK ("notify_group_invites" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  UNIQUE ("username"),
  FOREIGN KEY ("id") REFERENCES "auth_users" ("id") ON DELETE CASCADE,
  CONSTRAINT "users_name_not_blank" CHECK ("name" <> ''),
  CONSTRAINT "users_username_not_blank" CHECK ("username" <> '')
);
CREATE TABLE "profiles" (
  "id" TEXT NOT NULL CHECK (length("id") = 36),
  "name" TEXT NOT NULL,
  "username" TEXT,
  "picture" TEXT,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE TABLE "restaurants" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "google_place_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "address" TEXT,
  "cuisine" TEXT,
  "lat" REAL,
  "lng" REAL,
  "rating" REAL,
  "price_range" TEXT,
  "time_to_pick_up" INTEGER,
  "photos" TEXT CHECK ("photos" IS NULL OR (json_valid("photos") AND json_type("photos") = 'array')),
  "phone" TEXT,
  "website" TEXT,
  "hours" TEXT CHECK ("hours" IS NULL OR json_valid("hours")),
  "cached_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "last_updated" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
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
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "name" TEXT NOT NULL,
  "description" TEXT,
  "created_by" TEXT CHECK (length("created_by") = 36),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL,
  CONSTRAINT "groups_name_not_blank" CHECK ("name" <> '')
);
CREATE TABLE "group_members" (
  "group_id" TEXT NOT NULL CHECK (length("group_id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "role" TEXT NOT NULL DEFAULT 'member',
  "joined_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("group_id", "user_id"),
  FOREIGN KEY ("group_id") REFERENCES "groups" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "group_members_role" CHECK ("role" IN ('admin', 'member'))
);
CREATE INDEX "idx_group_members_user" ON "group_members" ("user_id");
CREATE TABLE "co_members" (
  "group_id" TEXT NOT NULL CHECK (length("group_id") = 36),
  "viewer_id" TEXT NOT NULL CHECK (length("viewer_id") = 36),
  "member_id" TEXT NOT NULL CHECK (length("member_id") = 36),
  PRIMARY KEY ("group_id", "viewer_id", "member_id"),
  FOREIGN KEY ("group_id", "viewer_id") REFERENCES "group_members" ("group_id", "user_id") ON DELETE CASCADE,
  FOREIGN KEY ("group_id", "member_id") REFERENCES "group_members" ("group_id", "user_id") ON DELETE CASCADE
);
CREATE INDEX "idx_co_members_viewer" ON "co_members" ("viewer_id", "member_id");
CREATE TABLE "collections" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "name" TEXT NOT NULL,
  "description" TEXT,
  "type" TEXT NOT NULL,
  "owner_id" TEXT NOT NULL CHECK (length("owner_id") = 36),
  "group_id" TEXT CHECK (length("group_id") = 36),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
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
  "collection_id" TEXT NOT NULL CHECK (length("collection_id") = 36),
  "restaurant_id" TEXT NOT NULL CHECK (length("restaurant_id") = 36),
  "position" INTEGER NOT NULL,
  "group_id" TEXT CHECK (length("group_id") = 36),
  "added_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("collection_id", "restaurant_id"),
  UNIQUE ("collection_id", "position"),
  FOREIGN KEY ("collection_id") REFERENCES "collections" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("collection_id", "group_id") REFERENCES "collections" ("id", "group_id") ON DELETE CASCADE,
  FOREIGN KEY ("restaurant_id") REFERENCES "restaurants" ("id") ON DELETE CASCADE,
  CONSTRAINT "collection_restaurants_position" CHECK ("position" >= 0)
);
CREATE TABLE "decisions" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "type" TEXT NOT NULL,
  "collection_id" TEXT NOT NULL CHECK (length("collection_id") = 36),
  "group_id" TEXT CHECK (length("group_id") = 36),
  "created_by" TEXT CHECK (length("created_by") = 36),
  "method" TEXT NOT NULL,
  "status" TEXT NOT NULL DEFAULT 'active',
  "deadline" TEXT,
  "visit_date" TEXT NOT NULL,
  "result_restaurant_id" TEXT CHECK (length("result_restaurant_id") = 36),
  "selected_at" TEXT,
  "reasoning" TEXT,
  "weights" TEXT CHECK ("weights" IS NULL OR json_valid("weights")),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
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
  "decision_id" TEXT NOT NULL CHECK (length("decision_id") = 36),
  "restaurant_id" TEXT NOT NULL CHECK (length("restaurant_id") = 36),
  PRIMARY KEY ("decision_id", "restaurant_id"),
  FOREIGN KEY ("decision_id") REFERENCES "decisions" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("restaurant_id") REFERENCES "restaurants" ("id") ON DELETE RESTRICT
);
CREATE TABLE "decision_participants" (
  "decision_id" TEXT NOT NULL CHECK (length("decision_id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  PRIMARY KEY ("decision_id", "user_id"),
  FOREIGN KEY ("decision_id") REFERENCES "decisions" ("id") ON DELETE CASCADE,
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
CREATE INDEX "idx_decision_participants_user" ON "decision_participants" ("user_id");
CREATE TABLE "votes" (
  "decision_id" TEXT NOT NULL CHECK (length("decision_id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "rankings" TEXT NOT NULL CHECK ("rankings" IS NULL OR (json_valid("rankings") AND json_type("rankings") = 'array')),
  "submitted_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("decision_id", "user_id"),
  FOREIGN KEY ("decision_id", "user_id") REFERENCES "decision_participants" ("decision_id", "user_id") ON DELETE CASCADE
);
CREATE TABLE "notifications" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "type" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "message" TEXT NOT NULL,
  "data" TEXT CHECK ("data" IS NULL OR json_valid("data")),
  "read" INTEGER NOT NULL DEFAULT 0 CHECK ("read" IN (0, 1)),
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY ("id"),
  FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
  CONSTRAINT "notifications_type" CHECK ("type" IN ('group_decision', 'friend_request', 'group_invitation', 'decision_result', 'admin_alert')),
  CONSTRAINT "notifications_title_not_blank" CHECK ("title" <> '')
);
CREATE INDEX "idx_notifications_user_unread" ON "notifications" ("user_id", "created_at" DESC);
CREATE TABLE "notification_outbox" (
  "id" TEXT NOT NULL DEFAULT (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))) CHECK (length("id") = 36),
  "notification_id" TEXT NOT NULL CHECK (length("notification_id") = 36),
  "user_id" TEXT NOT NULL CHECK (length("user_id") = 36),
  "channel" TEXT NOT NULL,
  "recipient" TEXT NOT NULL,
  "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  "sent_at" TEXT,
  PRIMARY KEY ("id"),
  FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE CASCADE,
  CONSTRAINT "notification_outbox_channel" CHECK ("channel" IN ('push', 'email', 'sms'))
);
CREATE INDEX "idx_notification_outbox_pending" ON "notification_outbox" ("created_at") WHERE "sent_at" IS NULL;
