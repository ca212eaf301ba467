// The scanner's operator side: start a scan (queued for a worker), read scans, set the schedule
// (extensions.md section 7, docs/scanner.md). The browser work happens in src/scanner/worker.ts.
import { uuidv7 } from 'uuidv7';
import { z } from 'zod';
import { recordAudit } from '../audit/record.js';
import { isUniqueViolation } from '../db/errors.js';
import { AppError, conflict, notFound, rateLimited, validationFailed } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { decodePageCursor, encodePageCursor } from '../graph/connection.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { chromiumMissing } from './chromium.js';
import type { Finding, ScanSummary } from './findings.js';
import type { ScanReport } from './run.js';

type Db = Services['db']['prisma'];

export const SCAN_LIMITS = { urls: 20, followLinks: 50, urlLength: 2048 } as const;
export const SCAN_PAGE_DEFAULT = 20;
export const SCAN_PAGE_MAX = 100;
export const SCHEDULES = ['off', 'daily', 'weekly'] as const;
const DAY_MS = 86_400_000;

const pageUrl = z
  .string()
  .max(SCAN_LIMITS.urlLength, `At most ${SCAN_LIMITS.urlLength} characters`)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'Must be an absolute http or https URL without credentials')
  // Stored as the URL parser writes it: percent-encoded, so no control character reaches the database.
  .transform((value) => new URL(value).href);

const scanTarget = {
  urls: z
    .array(pageUrl)
    .min(1, 'At least one URL')
    .max(SCAN_LIMITS.urls, `At most ${SCAN_LIMITS.urls} URLs`),
  followLinks: z
    .number()
    .int('Must be an integer')
    .min(0, `From 0 to ${SCAN_LIMITS.followLinks}`)
    .max(SCAN_LIMITS.followLinks, `From 0 to ${SCAN_LIMITS.followLinks}`)
    .default(0),
};
const startScanInput = z.object(scanTarget).strict();
const scheduleInput = z.discriminatedUnion('schedule', [
  z.object({ schedule: z.literal('off'), urls: scanTarget.urls.optional(), followLinks: scanTarget.followLinks.optional() }).strict(),
  z.object({ schedule: z.literal('daily'), ...scanTarget }).strict(),
  z.object({ schedule: z.literal('weekly'), ...scanTarget }).strict(),
]);

/** GraphQL sends an omitted optional input field as null: drop those, so defaults and "optional" apply. */
const withoutNulls = (input: unknown) =>
  input && typeof input === 'object' && !Array.isArray(input) ? Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null)) : input;

export const scannerUnavailable = (message: string) => new AppError('scanner_unavailable', message);

const SCAN_FIELDS = {
  id: true,
  projectId: true,
  status: true,
  trigger: true,
  urls: true,
  followLinks: true,
  attempts: true,
  versionNumber: true,
  reportHash: true,
  summary: true,
  error: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
} as const;

export interface ScanRow {
  id: string;
  projectId: string;
  status: string;
  trigger: string;
  urls: string[];
  followLinks: number;
  attempts: number;
  versionNumber: number | null;
  reportHash: string | null;
  summary: unknown;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Only when one scan is read. */
  report?: unknown;
}

export const reportOf = (scan: ScanRow) => (scan.report ?? null) as ScanReport | null;
export const findingsOfScan = (scan: ScanRow): Finding[] => reportOf(scan)?.findings ?? [];
export const summaryOfScan = (scan: ScanRow) => (scan.summary ?? null) as ScanSummary | null;

const wakers = new WeakMap<Services, () => void>();
/** A server's scanner worker registers here, so a scan started on that server starts without waiting for the next poll. */
export const onScanQueued = (services: Services, listener: (() => void) | undefined) =>
  void (listener ? wakers.set(services, listener) : wakers.delete(services));

/** POST /scans: validated, then queued unless Chromium is missing here, the project has a scan going, or the organization's daily quota is used. */
export async function startScan(services: Services, projectId: string, input: unknown) {
  const data = parseInput(startScanInput, withoutNulls(input));
  const { scanner } = services.config;
  if (scanner.concurrency > 0 && !scanner.chromiumPath) throw scannerUnavailable(chromiumMissing());
  const now = services.now();
  try {
    const scan = await services.db.prisma.$transaction(async (tx) => {
      // The organization's row lock orders concurrent starts, so the quota and the one-at-a-time rule hold.
      const [project] = await tx.$queryRaw<{ organizationId: string }[]>`
        SELECT o.id AS "organizationId" FROM projects AS p JOIN organizations AS o ON o.id = p.organization_id
        WHERE p.id = ${projectId} FOR UPDATE OF o`;
      if (!project) throw notFound('Project');
      await assertQuota(tx, services, project.organizationId, now);
      if (await tx.scan.findFirst({ where: { projectId, status: { in: ['queued', 'running'] } }, select: { id: true } })) {
        throw conflict('A scan of this project is already queued or running');
      }
      const created = await tx.scan.create({
        data: { id: uuidv7(), projectId, urls: data.urls, followLinks: data.followLinks, trigger: 'manual', createdAt: now },
        select: SCAN_FIELDS,
      });
      await recordAudit(tx, {
        action: 'scan.started',
        projectId,
        target: { type: 'scan', id: created.id },
        changes: { urls: { before: null, after: data.urls }, followLinks: { before: null, after: data.followLinks } },
      });
      return created;
    });
    wakers.get(services)?.();
    return scan;
  } catch (error) {
    // The partial unique index is the last word when a scheduled scan was queued at the same moment.
    if (isUniqueViolation(error)) throw conflict('A scan of this project is already queued or running');
    throw error;
  }
}

/** Scans of the organization's projects in the last 24 hours, scheduled ones included. */
export async function scansInLastDay(tx: Prisma.TransactionClient | Db, organizationId: string, now: Date) {
  const since = new Date(now.getTime() - DAY_MS);
  const rows = await tx.scan.findMany({
    where: { project: { organizationId }, createdAt: { gt: since } },
    select: { createdAt: true },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map((row) => row.createdAt);
}

async function assertQuota(tx: Prisma.TransactionClient, services: Services, organizationId: string, now: Date) {
  const limit = services.config.scanner.dailyScansPerOrg;
  const recent = await scansInLastDay(tx, organizationId, now);
  if (recent.length < limit) return;
  const freeAt = recent[recent.length - limit]!.getTime() + DAY_MS;
  const retryAfter = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
  throw rateLimited({ limit, remaining: 0, retryAfter, reset: Math.ceil(freeAt / 1000) });
}

/** GET /scans: newest first by keyset cursor over (created_at, id), without the reports. */
export async function listScans(db: Db, projectId: string, input: { limit?: number | null; cursor?: string | null }) {
  const limit = input.limit ?? SCAN_PAGE_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > SCAN_PAGE_MAX) {
    throw validationFailed([{ path: ['limit'], message: `Must be from 1 to ${SCAN_PAGE_MAX}` }]);
  }
  const after = input.cursor == null ? null : decodePageCursor(input.cursor);
  if (input.cursor != null && !after) throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
  const rows = await readScans(db, projectId, { after, take: limit + 1 });
  const scans = rows.slice(0, limit);
  const last = scans.at(-1);
  return { scans, nextCursor: rows.length > limit && last ? encodePageCursor(last.createdAt, last.id) : null };
}

export function readScans(db: Db, projectId: string, page: { after: { at: Date; id: string } | null; take: number }): Promise<ScanRow[]> {
  return db.scan.findMany({
    where: {
      projectId,
      ...(page.after && { createdAt: { lte: page.after.at }, OR: [{ createdAt: { lt: page.after.at } }, { id: { lt: page.after.id } }] }),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: page.take,
    select: SCAN_FIELDS,
  });
}

/** GET /scans/:scanId: the scan with its report. */
/** Scans by id with their reports, as `scan` reads one (node(id) and nodes(ids), src/graph/nodes.ts; authorised there). */
export function readScansById(db: Db, ids: string[]): Promise<ScanRow[]> {
  return db.scan.findMany({ where: { id: { in: ids } }, select: { ...SCAN_FIELDS, report: true } });
}

export async function getScan(db: Db, projectId: string, scanId: string): Promise<ScanRow> {
  // Scan ids are UUIDs: anything else (a NUL byte included, which PostgreSQL cannot compare) is simply not found.
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(scanId)) throw notFound('Scan');
  const scan = await db.scan.findFirst({ where: { id: scanId, projectId }, select: { ...SCAN_FIELDS, report: true } });
  if (!scan) throw notFound('Scan');
  return scan;
}

/** A stored screenshot or HAR file of a scan (artifacts.ts); `bytes` only when one is read by name. */
export interface ScanArtifactRow {
  scanId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  bytes?: Uint8Array;
}

export const SCAN_ARTIFACT_FIELDS = { scanId: true, name: true, contentType: true, size: true, sha256: true } as const;

/** The artifacts of scans, by name (without their bytes): `Scan.artifacts` through a per-request loader. */
export function readScanArtifacts(db: Db, scanIds: string[]): Promise<ScanArtifactRow[]> {
  return db.scanArtifact.findMany({ where: { scanId: { in: scanIds } }, select: SCAN_ARTIFACT_FIELDS, orderBy: [{ scanId: 'asc' }, { createdAt: 'asc' }, { name: 'asc' }] });
}

/** Artifacts with their bytes, by scan and name; a name no scan can have (`page-<n>-<visit>.jpg|har`) is not looked up. */
export async function readScanArtifactsByName(db: Db, keys: readonly { scanId: string; name: string }[]): Promise<ScanArtifactRow[]> {
  const wanted = keys.filter((key) => /^[a-z0-9][a-z0-9.-]{0,63}$/.test(key.name));
  if (!wanted.length) return [];
  return db.scanArtifact.findMany({ where: { OR: wanted.map(({ scanId, name }) => ({ scanId, name })) }, select: { ...SCAN_ARTIFACT_FIELDS, bytes: true } });
}

export interface ScheduleView {
  schedule: (typeof SCHEDULES)[number];
  urls: string[];
  followLinks: number;
  nextRunAt: Date | null;
}

const OFF: ScheduleView = { schedule: 'off', urls: [], followLinks: 0, nextRunAt: null };

export async function getScanSchedule(db: Db, projectId: string): Promise<ScheduleView> {
  const row = await db.scanSchedule.findUnique({ where: { projectId } });
  return row ? { schedule: row.schedule as ScheduleView['schedule'], urls: row.urls, followLinks: row.followLinks, nextRunAt: row.nextRunAt } : OFF;
}

export const intervalMs = (schedule: string) => (schedule === 'weekly' ? 7 : 1) * DAY_MS;

/** PUT /scans/schedule: daily or weekly from now on (the first run one interval from now), or off. */
export async function setScanSchedule(services: Services, projectId: string, input: unknown): Promise<ScheduleView> {
  const data = parseInput(scheduleInput, withoutNulls(input));
  const now = services.now();
  return services.db.prisma.$transaction(async (tx) => {
    const before = await getScanSchedule(tx as unknown as Db, projectId);
    let after: ScheduleView;
    if (data.schedule === 'off') {
      await tx.scanSchedule.deleteMany({ where: { projectId } });
      after = OFF;
    } else {
      const nextRunAt = new Date(now.getTime() + intervalMs(data.schedule));
      const fields = { schedule: data.schedule, urls: data.urls, followLinks: data.followLinks, nextRunAt, updatedAt: now };
      await tx.scanSchedule.upsert({ where: { projectId }, create: { projectId, ...fields }, update: fields });
      after = { schedule: data.schedule, urls: data.urls, followLinks: data.followLinks, nextRunAt };
    }
    await recordAudit(tx, {
      action: 'scan.schedule_updated',
      projectId,
      target: { type: 'scan_schedule', id: projectId },
      changes: { schedule: { before: before.schedule, after: after.schedule }, urls: { before: before.urls, after: after.urls }, followLinks: { before: before.followLinks, after: after.followLinks } },
    });
    return after;
  });
}
