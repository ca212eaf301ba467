-- Issue 47 (extensions.md section 14): one decision for a signed-in person, on every device (docs/subjects.md).
-- The service never stores who the person is: only HMAC-SHA256(project pepper, sub), the "subject hash".

-- One row per project that made a subject secret. The secret signs the operator's HS256 subject tokens, so it is
-- kept in clear (as webhook secrets are: the service has no encryption at rest of its own); the previous one is
-- honoured until previous_valid_until. The pepper is made with the first secret and never rotated, so a person's
-- hash stays the same across rotations.
CREATE TABLE "subject_secrets" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects" ("id") ON DELETE CASCADE,
  "pepper" BYTEA NOT NULL,
  "secret" TEXT NOT NULL,
  "secret_prefix" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  "previous_secret" TEXT,
  "previous_valid_until" TIMESTAMPTZ(3)
);

-- Which installation is signed in as which subject (identify() links, forget() and erasure unlink).
CREATE TABLE "subject_links" (
  "project_id" TEXT NOT NULL REFERENCES "projects" ("id") ON DELETE CASCADE,
  "installation_id" TEXT NOT NULL,
  "subject_hash" TEXT NOT NULL,
  "linked_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("project_id", "installation_id")
);
CREATE INDEX "subject_links_subject" ON "subject_links" ("project_id", "subject_hash");

-- The subject's decision when a device's own (made before sign-in) was newer than every receipt made for the
-- subject: set on identify, so the other devices follow it without a new receipt. Receipts made while identified
-- carry the hash themselves (receipts.subject_hash).
CREATE TABLE "subjects" (
  "project_id" TEXT NOT NULL REFERENCES "projects" ("id") ON DELETE CASCADE,
  "subject_hash" TEXT NOT NULL,
  "decision_receipt_id" TEXT,
  "decision_created_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("project_id", "subject_hash")
);

ALTER TABLE "receipts" ADD COLUMN "subject_hash" TEXT;
-- /decision for a signed-in installation: the subject's newest receipt, one probe per month partition as
-- receipts_decision gives the installation's.
CREATE INDEX "receipts_subject" ON "receipts" ("project_id", "subject_hash", "created_at" DESC) WHERE "subject_hash" IS NOT NULL;

-- A project's first secret tells every instance's SDK cache that receipts may now be linked (src/sdk/cache.ts).
CREATE TRIGGER "subject_secrets_notify_sdk_cache" AFTER INSERT ON "subject_secrets"
  FOR EACH ROW EXECUTE FUNCTION "notify_sdk_cache"();
