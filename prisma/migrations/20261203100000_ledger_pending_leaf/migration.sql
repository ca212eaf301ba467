-- Each waiting receipt's ledger leaf, hashed by the receipt writer from the receipt it acknowledged (issue 32:
-- the sealer then reads only this queue, not the receipts). NULL for receipts queued before this column, or by
-- an instance still running the previous release: the sealer hashes those from the stored receipt.
ALTER TABLE "ledger_pending" ADD COLUMN "leaf_hash" BYTEA;
