-- IAB TCF v2.3 (extensions.md section 11, docs/tcf.md).

-- Every Global Vendor List version the service has held, as the IAB published it (fetched or imported). Never
-- deleted: a published consent version pins one, and receipts are checked against it.
CREATE TABLE "tcf_vendor_lists" (
  "version" INTEGER NOT NULL PRIMARY KEY,
  "tcf_policy_version" INTEGER NOT NULL,
  "last_updated" TIMESTAMPTZ(3) NOT NULL,
  "content" JSONB NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

-- The IAB's purposes-<lang>.json files, one per language and vendor list version they were published with.
CREATE TABLE "tcf_translations" (
  "language" TEXT NOT NULL,
  "vendor_list_version" INTEGER NOT NULL,
  "content" JSONB NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY ("language", "vendor_list_version")
);

-- Google's Additional Consent providers list, one row per distinct content (its SHA-256); the newest seen is live.
CREATE TABLE "tcf_ac_provider_lists" (
  "sha256" TEXT NOT NULL PRIMARY KEY,
  "providers" JSONB NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

-- When each remote file is next due (its Cache-Control max-age, at least TCF_GVL_MIN_REFRESH_S) and which instance
-- holds the lease to fetch it: one instance at a time, however many run (src/tcf/refresh.ts).
CREATE TABLE "tcf_fetch_state" (
  "resource" TEXT NOT NULL PRIMARY KEY,
  "next_fetch_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "lease_until" TIMESTAMPTZ(3),
  "fetched_at" TIMESTAMPTZ(3),
  "last_error" TEXT
);

-- The TC string and Google AC string a TCF banner produced, as the SDK sent them (checked against the version);
-- NULL for every other receipt. Nullable columns on the partitioned parent: every partition gains them, nothing is rewritten.
ALTER TABLE "receipts" ADD COLUMN "tc_string" TEXT, ADD COLUMN "addtl_consent" TEXT;
