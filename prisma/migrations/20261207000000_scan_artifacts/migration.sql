-- What a scan keeps besides its observations (docs/scanner.md "Artifacts"): a screenshot of each page as the
-- visitor first saw it and a HAR file of each visit, as the EDPS Website Evidence Collector keeps them.
-- Written in the transaction that stores the finished report, which lists each one's sha256 (so the report's
-- hash covers them); capped in bytes per artifact and per scan by the worker; gone with their scan.
CREATE TABLE "scan_artifacts" (
  "scan_id" TEXT NOT NULL REFERENCES "scans"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  -- page-1-before.jpg, page-1-before.har, … (unique per scan: the route's :name)
  "name" TEXT NOT NULL,
  "content_type" TEXT NOT NULL,
  "bytes" BYTEA NOT NULL,
  -- lowercase hex SHA-256 of bytes (the route's ETag, listed in the report)
  "sha256" TEXT NOT NULL,
  "size" INTEGER NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY ("scan_id", "name")
);
