-- The whole data model of prisma/schema.prisma, written by hand because
-- `prisma migrate` cannot run on these machines. Ids are UUIDv7 text made by the client.

CREATE TYPE "Role" AS ENUM ('OWNER', 'ADMIN', 'VIEWER');

CREATE TABLE "users" (
  "id" TEXT PRIMARY KEY,
  "email" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "password_hash" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

CREATE TABLE "sessions" (
  "id" TEXT PRIMARY KEY,
  "token_hash" TEXT NOT NULL,
  "user_id" TEXT NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "expires_at" TIMESTAMPTZ(3) NOT NULL
);
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");

CREATE TABLE "organizations" (
  "id" TEXT PRIMARY KEY,
  "name" TEXT NOT NULL,
  "slug" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "organizations_slug_key" ON "organizations"("slug");

CREATE TABLE "memberships" (
  "id" TEXT PRIMARY KEY,
  "organization_id" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "user_id" TEXT NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "role" "Role" NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "memberships_organization_id_user_id_key" ON "memberships"("organization_id", "user_id");
CREATE INDEX "memberships_user_id_idx" ON "memberships"("user_id");

CREATE TABLE "projects" (
  "id" TEXT PRIMARY KEY,
  "organization_id" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "name" TEXT NOT NULL,
  "slug" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "enforce_origins" BOOLEAN NOT NULL DEFAULT true,
  "allowed_origins" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[]
);
CREATE UNIQUE INDEX "projects_organization_id_slug_key" ON "projects"("organization_id", "slug");

CREATE TABLE "categories" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "name" TEXT NOT NULL,
  "sort_order" INTEGER NOT NULL DEFAULT 0,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "categories_project_id_idx" ON "categories"("project_id");

CREATE TABLE "purposes" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "key" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "description" TEXT NOT NULL DEFAULT '',
  "required" BOOLEAN NOT NULL DEFAULT false,
  "category_id" TEXT NOT NULL REFERENCES "categories"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "sort_order" INTEGER NOT NULL DEFAULT 0,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "purposes_project_id_key_key" ON "purposes"("project_id", "key");
CREATE INDEX "purposes_category_id_idx" ON "purposes"("category_id");

CREATE TABLE "notices" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "title" TEXT NOT NULL DEFAULT '',
  "description" TEXT NOT NULL DEFAULT '',
  "accept_label" TEXT NOT NULL DEFAULT '',
  "reject_label" TEXT NOT NULL DEFAULT '',
  "manage_label" TEXT NOT NULL DEFAULT '',
  "company_name" TEXT NOT NULL DEFAULT '',
  "logo_url" TEXT NOT NULL DEFAULT '',
  "primary_color" TEXT NOT NULL DEFAULT ''
);

CREATE TABLE "consent_versions" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "number" INTEGER NOT NULL,
  "config" JSONB NOT NULL,
  "content_hash" TEXT NOT NULL,
  "consent_hash" TEXT NOT NULL,
  "published_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "published_by_id" TEXT NOT NULL REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "consent_versions_project_id_number_key" ON "consent_versions"("project_id", "number");

CREATE TABLE "api_keys" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "name" TEXT NOT NULL DEFAULT '',
  "prefix" TEXT NOT NULL,
  "secret_hash" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "last_used_at" TIMESTAMPTZ(3),
  "revoked_at" TIMESTAMPTZ(3)
);
CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "api_keys"("secret_hash");
CREATE INDEX "api_keys_project_id_idx" ON "api_keys"("project_id");

CREATE TABLE "receipts" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "version_id" TEXT NOT NULL REFERENCES "consent_versions"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "consent_hash" TEXT NOT NULL,
  "choices" JSONB NOT NULL,
  "installation_id" TEXT NOT NULL,
  "sdk_version" TEXT,
  "api_key_id" TEXT NOT NULL REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "receipts_project_id_created_at_id_idx" ON "receipts"("project_id", "created_at" DESC, "id" DESC);
CREATE INDEX "receipts_project_id_installation_id_created_at_idx" ON "receipts"("project_id", "installation_id", "created_at" DESC);
CREATE INDEX "receipts_version_id_created_at_idx" ON "receipts"("version_id", "created_at");

CREATE TABLE "webhooks" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "url" TEXT NOT NULL,
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  "secret" TEXT NOT NULL,
  "secret_prefix" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE "webhook_events" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "type" TEXT NOT NULL,
  "payload" JSONB NOT NULL,
  "status" TEXT NOT NULL DEFAULT 'pending',
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "locked_until" TIMESTAMPTZ(3),
  "last_error" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "completed_at" TIMESTAMPTZ(3)
);
CREATE INDEX "webhook_events_status_next_attempt_at_idx" ON "webhook_events"("status", "next_attempt_at");
CREATE INDEX "webhook_events_project_id_created_at_idx" ON "webhook_events"("project_id", "created_at" DESC);

CREATE TABLE "webhook_deliveries" (
  "id" TEXT PRIMARY KEY,
  "event_id" TEXT REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "project_id" TEXT NOT NULL,
  "event_type" TEXT NOT NULL,
  "attempt" INTEGER NOT NULL,
  "status" TEXT NOT NULL,
  "response_status" INTEGER,
  "duration_ms" INTEGER NOT NULL,
  "error" TEXT,
  "next_retry_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "webhook_deliveries_project_id_created_at_id_idx" ON "webhook_deliveries"("project_id", "created_at" DESC, "id" DESC);
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

CREATE TABLE "notifications" (
  "id" TEXT PRIMARY KEY,
  "user_id" TEXT NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "organization_id" TEXT REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "project_id" TEXT,
  "product" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "body" TEXT NOT NULL DEFAULT '',
  "link" TEXT,
  "read_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "notifications_user_id_created_at_id_idx" ON "notifications"("user_id", "created_at" DESC, "id" DESC);
CREATE INDEX "notifications_user_id_product_created_at_id_idx" ON "notifications"("user_id", "product", "created_at" DESC, "id" DESC);
-- Unread count and the unread filter stay index-only however large the inbox grows.
CREATE INDEX "notifications_unread_idx" ON "notifications"("user_id", "created_at" DESC, "id" DESC) WHERE "read_at" IS NULL;

CREATE TABLE "subscriptions" (
  "organization_id" TEXT PRIMARY KEY REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "plan_id" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "interval" TEXT,
  "trial_ends_at" TIMESTAMPTZ(3),
  "current_period_end" TIMESTAMPTZ(3),
  "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
  "trial_used" BOOLEAN NOT NULL DEFAULT false,
  "trial_ending_notified_at" TIMESTAMPTZ(3),
  "provider" TEXT,
  "provider_customer_id" TEXT,
  "provider_subscription_id" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "subscriptions_status_trial_ends_at_idx" ON "subscriptions"("status", "trial_ends_at");

CREATE TABLE "checkout_sessions" (
  "id" TEXT PRIMARY KEY,
  "organization_id" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "provider" TEXT NOT NULL,
  "plan_id" TEXT NOT NULL,
  "interval" TEXT NOT NULL,
  "status" TEXT NOT NULL DEFAULT 'open',
  "provider_ref" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "completed_at" TIMESTAMPTZ(3)
);
CREATE INDEX "checkout_sessions_organization_id_idx" ON "checkout_sessions"("organization_id");

CREATE TABLE "billing_events" (
  "id" TEXT PRIMARY KEY,
  "provider" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- Published versions and receipts are evidence: the database itself refuses to change them.
CREATE FUNCTION "refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are immutable: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "consent_versions_immutable" BEFORE UPDATE OR DELETE ON "consent_versions"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "consent_versions_no_truncate" BEFORE TRUNCATE ON "consent_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "receipts_append_only" BEFORE UPDATE OR DELETE ON "receipts"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "receipts_no_truncate" BEFORE TRUNCATE ON "receipts"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
