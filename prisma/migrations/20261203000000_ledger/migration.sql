-- The receipts ledger (extensions.md section 8, docs/ledger.md). Every table is keyed by project first, with no
-- sequence shared between projects, so it can be partitioned by time and distributed by project (issue 33).

-- Receipts committed but not yet sealed: one row per receipt, written in the receipt's own transaction by the
-- receipt writer, deleted in the transaction that seals it. Receipts themselves are never updated, so "not yet
-- sealed" cannot be a column of theirs. No foreign keys: this is on the consent POST's path.
CREATE TABLE "ledger_pending" (
  "project_id" TEXT NOT NULL,
  -- Byte order (as the sealer reads it: uuidv7 ids in time order), so the key's index serves its ORDER BY.
  "receipt_id" TEXT COLLATE "C" NOT NULL,
  "receipt_created_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("project_id", "receipt_id")
);

-- One row per project with a ledger: the last checkpoint's sequence and hash. A sealer claims a project by
-- locking this row (FOR UPDATE SKIP LOCKED), so two instances never seal one project at once.
-- checkpoint_webhook: the operator asked for `ledger.checkpoint` events (off by default: the contract's
-- webhook receivers get only the events they know).
CREATE TABLE "ledger_heads" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "sequence" INTEGER NOT NULL DEFAULT 0,
  "checkpoint_hash" TEXT,
  "checkpoint_webhook" BOOLEAN NOT NULL DEFAULT false
);

-- Signed checkpoints, chained per project by `previous` (the previous checkpoint's hash).
CREATE TABLE "ledger_checkpoints" (
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "sequence" INTEGER NOT NULL,
  "previous" TEXT,
  "root" TEXT NOT NULL,
  "count" INTEGER NOT NULL,
  "first_receipt_id" TEXT NOT NULL,
  "last_receipt_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  "hash" TEXT NOT NULL,
  "key_id" TEXT NOT NULL,
  "signature" TEXT NOT NULL,
  PRIMARY KEY ("project_id", "sequence")
);
CREATE INDEX "ledger_checkpoints_project_id_created_at_idx" ON "ledger_checkpoints"("project_id", "created_at");

-- Which checkpoint sealed each receipt, at which leaf. The primary key is what makes "sealed twice" impossible.
CREATE TABLE "ledger_leaves" (
  "project_id" TEXT NOT NULL,
  "receipt_id" TEXT NOT NULL,
  "sequence" INTEGER NOT NULL,
  "leaf_index" INTEGER NOT NULL,
  "receipt_created_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("project_id", "receipt_id")
);
CREATE UNIQUE INDEX "ledger_leaves_project_id_sequence_leaf_index_key" ON "ledger_leaves"("project_id", "sequence", "leaf_index");

-- Every public key that has signed a checkpoint, so rotation never unpublishes one.
CREATE TABLE "ledger_keys" (
  "id" TEXT PRIMARY KEY,
  "public_key" JSONB NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- Sealed is sealed: checkpoints, their leaves and published keys are never changed or removed.
CREATE TRIGGER "ledger_checkpoints_append_only" BEFORE UPDATE OR DELETE ON "ledger_checkpoints"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_checkpoints_no_truncate" BEFORE TRUNCATE ON "ledger_checkpoints"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_leaves_append_only" BEFORE UPDATE OR DELETE ON "ledger_leaves"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_leaves_no_truncate" BEFORE TRUNCATE ON "ledger_leaves"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_keys_append_only" BEFORE UPDATE OR DELETE ON "ledger_keys"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();

-- Receipts recorded before the ledger existed wait to be sealed like new ones (oldest first, in checkpoints of
-- at most 10,000 receipts).
INSERT INTO "ledger_pending" ("project_id", "receipt_id", "receipt_created_at")
SELECT "project_id", "id", "created_at" FROM "receipts";
