-- Experience settings and translations (docs/consent.md, "Experience"): the draft's own row,
-- and a snapshot on each version. consent_versions keeps its immutability triggers, so the
-- snapshot can never change once published; versions published before this stay NULL.
CREATE TABLE "consent_experiences" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "settings" JSONB NOT NULL
);

ALTER TABLE "consent_versions" ADD COLUMN "experience" JSONB;

-- Receipts: the language the visitor saw and whether the browser sent Global Privacy Control.
ALTER TABLE "receipts" ADD COLUMN "locale" TEXT;
ALTER TABLE "receipts" ADD COLUMN "gpc" BOOLEAN;
