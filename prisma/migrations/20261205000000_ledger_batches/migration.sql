-- The ledger's rows per receipt become rows per batch (issue 32: the consent POST keeps 90 % of its throughput
-- with sealing on). Before, each receipt cost three more tuples than the receipt itself: a queue row written with
-- it, a leaf row and the queue row's delete when sealed, each with its index entries and WAL, and the queue's
-- dead rows to vacuum. Now the writer queues one row per transaction and project, and a checkpoint holds the ids
-- of the receipts it sealed, in leaf order.

-- One row per receipt writer transaction and project: its receipts' ids, times and leaf hashes (32 bytes each, in
-- the same order), written in the receipts' transaction and deleted in the sealing one. `count` lets the sealer
-- choose whole batches without reading their arrays. No foreign keys: this is on the consent POST's path.
CREATE TABLE "ledger_pending_batches" (
  "project_id" TEXT NOT NULL,
  "id" BIGSERIAL NOT NULL,
  "count" INTEGER NOT NULL,
  "receipt_ids" TEXT[] NOT NULL,
  "receipt_created_ats" TIMESTAMPTZ(3)[] NOT NULL,
  "leaves" BYTEA NOT NULL,
  PRIMARY KEY ("project_id", "id")
);

-- The receipts a checkpoint sealed, in leaf order. Empty for checkpoints sealed before this migration (or by an
-- instance still running the previous release during a rolling upgrade): theirs stay in `ledger_leaves`, which
-- is kept, append-only, and still read. A constant default adds the columns without rewriting the table.
ALTER TABLE "ledger_checkpoints" ADD COLUMN "receipt_ids" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "ledger_checkpoints" ADD COLUMN "receipt_created_ats" TIMESTAMPTZ(3)[] NOT NULL DEFAULT '{}';

-- A receipt's checkpoint is found from its id: the first checkpoint, in order of its last receipt id, whose id
-- range holds it and whose ids include it (ranges overlap only around a receipt committed after a checkpoint
-- sealed younger ones). Byte order, as uuidv7 ids sort by time.
CREATE INDEX "ledger_checkpoints_last_receipt_id_idx" ON "ledger_checkpoints" ("project_id", "last_receipt_id" COLLATE "C");

-- `ledger_pending` (one row per receipt) stays for what an older release queued: the sealer reads both.
