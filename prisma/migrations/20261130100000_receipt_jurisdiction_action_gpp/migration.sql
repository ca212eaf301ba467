-- Issue 16 (extensions.md section 6, /work wire shapes "POST /api/sdk/v1/consent"): what the SDK says it acted
-- on, each optional and only as sent: the location code (`DE`, `US-CA`), the visitor's action
-- (accept_all, reject_all, custom, opt_out, gpc) and the GPP string. Nullable columns: adding them rewrites
-- nothing, and receipts recorded before (or by contract clients) keep NULL.
ALTER TABLE "receipts" ADD COLUMN "jurisdiction" TEXT, ADD COLUMN "action" TEXT, ADD COLUMN "gpp" TEXT;
