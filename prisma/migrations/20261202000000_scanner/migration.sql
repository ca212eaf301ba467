-- The site scanner (extensions.md section 7, docs/scanner.md): scans are the queue and the record at once.
-- A worker leases a queued scan with UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED), stamping
-- lease_owner and lease_until; a scan whose lease ran out (the instance died) is taken again, once.
CREATE TABLE "scans" (
  "id" TEXT PRIMARY KEY,
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  -- queued | running | done | failed (no CHECK: the set is the service's, see src/scanner/queue.ts)
  "status" TEXT NOT NULL DEFAULT 'queued',
  -- manual | schedule
  "trigger" TEXT NOT NULL DEFAULT 'manual',
  "urls" TEXT[] NOT NULL DEFAULT '{}',
  "follow_links" INTEGER NOT NULL DEFAULT 0,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "lease_owner" TEXT,
  "lease_until" TIMESTAMPTZ(3),
  "requested_by_id" TEXT,
  -- The live version when the scan ran (null: nothing published yet).
  "version_number" INTEGER,
  -- The full report (pages, findings, summary, hashes) and its summary alone, which lists read.
  "report" JSONB,
  "summary" JSONB,
  "report_hash" TEXT,
  "error" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "started_at" TIMESTAMPTZ(3),
  "finished_at" TIMESTAMPTZ(3)
);

CREATE INDEX "scans_project_id_created_at_id_idx" ON "scans"("project_id", "created_at" DESC, "id" DESC);
CREATE INDEX "scans_status_created_at_idx" ON "scans"("status", "created_at");
-- One scan per project at a time: a second queued or running scan is a unique violation.
CREATE UNIQUE INDEX "scans_one_active_per_project" ON "scans"("project_id") WHERE "status" IN ('queued', 'running');

CREATE TABLE "scan_schedules" (
  "project_id" TEXT PRIMARY KEY REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  -- daily | weekly (a schedule set to "off" is deleted)
  "schedule" TEXT NOT NULL,
  "urls" TEXT[] NOT NULL DEFAULT '{}',
  "follow_links" INTEGER NOT NULL DEFAULT 0,
  "next_run_at" TIMESTAMPTZ(3) NOT NULL,
  "created_by_id" TEXT,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE INDEX "scan_schedules_next_run_at_idx" ON "scan_schedules"("next_run_at");
