-- The last SDK request the service refused, per project and kind (docs/console.md, "Why the SDK step is not done"):
-- written from memory at most once a minute per project and kind (src/sdk/refusals.ts), so the go-live checklist
-- can say what the site sent. `kind` is the SDK error code: invalid_key, revoked_key or origin_not_allowed.
CREATE TABLE "sdk_refusals" (
    "project_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "origin" TEXT,
    "key_prefix" TEXT,
    "seen_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sdk_refusals_pkey" PRIMARY KEY ("project_id", "kind"),
    CONSTRAINT "sdk_refusals_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- An unknown key that starts with a project's key prefix (a truncated or mistyped key) is attributed to it.
CREATE INDEX "api_keys_prefix_idx" ON "api_keys"("prefix");
