// The scan queue lives in the `scans` table (docs/scanner.md "Queue"). Hand-written, not pg-boss or
// graphile-worker: those need their own schema, LISTEN/NOTIFY or advisory locks and a `pg` connection, which
// the embedded database (PGlite, one connection, in-process) does not offer them; the lease below is the same
// UPDATE ... FOR UPDATE SKIP LOCKED that the webhook outbox uses, and works on both databases.
//
// - A worker claims a queued scan, or a running one whose lease ran out (its instance died), with one statement
//   that stamps its lease; SKIP LOCKED lets several instances claim at once without taking one twice.
// - Fair between tenants: an organization with a scan running has no other taken (one at a time per
//   organization, whatever the number of workers), and among the others the one served longest ago (or never
//   in the last day) goes first, its oldest scan first: round-robin by organization, so one organization's
//   twenty queued scans do not hold the scanner for everyone else. The daily quota bounds what each can queue.
// - While it runs the worker renews the lease (SCANNER_LEASE_SECONDS, every third of it); a scan whose lease is
//   lost stops. A worker that dies stops renewing: its scan is claimable again when the lease runs out.
// - A scan is tried at most MAX_ATTEMPTS times (the first and one retry), counted in its row: a crash, a lost
//   instance or a shutdown all spend the attempt, so no restart hands a scan that hangs back forever. A scan
//   that spends its wall-clock budget is failed at once.
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { intervalMs } from './service.js';

export const MAX_ATTEMPTS = 2;

export interface ClaimedScan {
  id: string;
  projectId: string;
  trigger: string;
  urls: string[];
  followLinks: number;
  attempts: number;
  startedAt: Date;
}

const CLAIM_SQL = `
  UPDATE scans SET status = 'running', attempts = attempts + 1, lease_owner = $1, lease_until = $3,
    started_at = COALESCE(started_at, $2), error = NULL
  WHERE id = (
    SELECT s.id FROM scans s
    JOIN projects p ON p.id = s.project_id
    JOIN organizations o ON o.id = p.organization_id
    WHERE (s.status = 'queued' OR (s.status = 'running' AND s.lease_until < $2)) AND s.attempts < $4
      AND NOT EXISTS (
        SELECT 1 FROM scans r JOIN projects rp ON rp.id = r.project_id
        WHERE rp.organization_id = p.organization_id AND r.status = 'running' AND r.lease_until >= $2)
    ORDER BY (
        SELECT max(l.started_at) FROM scans l JOIN projects lp ON lp.id = l.project_id
        WHERE lp.organization_id = p.organization_id AND l.started_at > $2::timestamptz - interval '1 day'
      ) ASC NULLS FIRST, s.created_at, s.id
    LIMIT 1
    -- The organization's row too: two instances claiming at once never start two scans of one organization.
    FOR UPDATE OF s SKIP LOCKED
    FOR NO KEY UPDATE OF o SKIP LOCKED)
  RETURNING id, project_id AS "projectId", trigger, urls, follow_links AS "followLinks", attempts, started_at AS "startedAt"`;

/** Leases the next scan to `owner`, or answers null when none is waiting. */
export async function claimScan(services: Services, owner: string): Promise<ClaimedScan | null> {
  const now = services.now();
  const [scan] = await services.db.query<ClaimedScan>(CLAIM_SQL, [owner, now, new Date(now.getTime() + services.config.scanner.leaseMs), MAX_ATTEMPTS]);
  return scan ? { ...scan, startedAt: new Date(scan.startedAt) } : null;
}

/** Scans whose last allowed run died with them (lease expired, no attempt left) are failed. */
export async function failAbandoned(services: Services): Promise<number> {
  const now = services.now();
  const rows = await services.db.query(
    `UPDATE scans SET status = 'failed', finished_at = $1, lease_owner = NULL, lease_until = NULL,
       error = 'The scan stopped twice without finishing (the instance running it went away); it was not tried again'
     WHERE status = 'running' AND lease_until < $1 AND attempts >= $2 RETURNING id`,
    [now, MAX_ATTEMPTS],
  );
  return rows.length;
}

/** Extends the lease; false when it is no longer ours. */
export async function renewLease(services: Services, scanId: string, owner: string): Promise<boolean> {
  const until = new Date(services.now().getTime() + services.config.scanner.leaseMs);
  const rows = await services.db.query(`UPDATE scans SET lease_until = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`, [scanId, owner, until]);
  return rows.length > 0;
}

/**
 * Gives a scan back at shutdown. The attempt stays spent: a scan whose page hangs the scanner must not come back
 * after every restart; on its last attempt it is failed instead.
 */
export async function releaseScan(services: Services, scanId: string, owner: string): Promise<void> {
  await services.db.query(
    `UPDATE scans SET status = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'queued' END,
       error = CASE WHEN attempts >= $3 THEN 'The scan was stopped twice without finishing (the instance running it shut down); it was not tried again' END,
       finished_at = CASE WHEN attempts >= $3 THEN $4::timestamptz END,
       lease_owner = NULL, lease_until = NULL
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [scanId, owner, MAX_ATTEMPTS, services.now()],
  );
}

/** A run that must not be tried again (it spent its budget): failed with the reason. */
export async function failScan(services: Services, scan: ClaimedScan, owner: string, reason: string): Promise<void> {
  await services.db.query(
    `UPDATE scans SET status = 'failed', error = $3, lease_owner = NULL, lease_until = NULL, finished_at = $4
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [scan.id, owner, reason.slice(0, 1000), services.now()],
  );
}

/** A run that failed here: queued again while an attempt is left, else failed with the reason. */
export async function failOrRetry(services: Services, scan: ClaimedScan, owner: string, reason: string): Promise<'queued' | 'failed'> {
  const retry = scan.attempts < MAX_ATTEMPTS;
  await services.db.query(
    `UPDATE scans SET status = $3, error = $4, lease_owner = NULL, lease_until = NULL, finished_at = $5
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [scan.id, owner, retry ? 'queued' : 'failed', reason.slice(0, 1000), retry ? null : services.now()],
  );
  return retry ? 'queued' : 'failed';
}

/**
 * Queues the scans of schedules that are due, moving each schedule on by its interval in the same
 * transaction (SKIP LOCKED: two instances never queue one schedule twice). A project with a scan going, or an
 * organization over its daily quota, skips that run.
 */
export async function queueDueSchedules(services: Services, newId: () => string, withinQuota: (tx: Prisma.TransactionClient, projectId: string) => Promise<boolean>): Promise<number> {
  const now = services.now();
  // A plain read first: most polls find nothing due and then open no transaction (an interactive Prisma
  // transaction on a closed embedded database also left a rejection nobody could catch).
  const anyDue = await services.db.query('SELECT 1 FROM scan_schedules WHERE next_run_at <= $1 LIMIT 1', [now]);
  if (!anyDue.length) return 0;
  return services.db.prisma.$transaction(async (tx) => {
    const due = await tx.$queryRaw<{ projectId: string; schedule: string; urls: string[]; followLinks: number }[]>`
      SELECT project_id AS "projectId", schedule, urls, follow_links AS "followLinks" FROM scan_schedules
      WHERE next_run_at <= ${now} ORDER BY next_run_at LIMIT 20 FOR UPDATE SKIP LOCKED`;
    let queued = 0;
    for (const schedule of due) {
      const next = new Date(now.getTime() + intervalMs(schedule.schedule));
      await tx.$executeRaw`UPDATE scan_schedules SET next_run_at = ${next} WHERE project_id = ${schedule.projectId}`;
      if (!(await withinQuota(tx, schedule.projectId))) continue;
      queued += await tx.$executeRaw`
        INSERT INTO scans (id, project_id, status, trigger, urls, follow_links, created_at)
        VALUES (${newId()}, ${schedule.projectId}, 'queued', 'schedule', ${schedule.urls}, ${schedule.followLinks}, ${now})
        ON CONFLICT (project_id) WHERE status IN ('queued', 'running') DO NOTHING`;
    }
    return queued;
  });
}
