-- The audit log: one row per operator mutation, written in the mutation's own transaction
-- (docs/audit.md). Append-only: the database refuses UPDATE, DELETE and TRUNCATE, like
-- published versions and receipts. An organization with history cannot be deleted (RESTRICT).
CREATE TABLE "audit_events" (
  "id" TEXT PRIMARY KEY,
  -- NULL only for account events (a password change), which belong to no organization.
  "organization_id" TEXT REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "project_id" TEXT,
  -- The actor as they were at the time: no foreign key, so the record outlives the account.
  "actor_id" TEXT,
  "actor_email" TEXT,
  "action" TEXT NOT NULL,
  "target" JSONB NOT NULL,
  "changes" JSONB NOT NULL DEFAULT '{}',
  "request_id" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE INDEX "audit_events_organization_id_created_at_id_idx" ON "audit_events"("organization_id", "created_at" DESC, "id" DESC);
CREATE INDEX "audit_events_organization_id_project_id_created_at_id_idx" ON "audit_events"("organization_id", "project_id", "created_at" DESC, "id" DESC);
CREATE INDEX "audit_events_organization_id_action_created_at_id_idx" ON "audit_events"("organization_id", "action", "created_at" DESC, "id" DESC);

CREATE TRIGGER "audit_events_append_only" BEFORE UPDATE OR DELETE ON "audit_events"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "audit_events_no_truncate" BEFORE TRUNCATE ON "audit_events"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
