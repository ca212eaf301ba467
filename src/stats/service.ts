// The read side of consent analytics (extensions.md §5, docs/analytics.md): buckets of the
// daily rollup, never the receipts themselves, so a year of days is a few hundred rows.
import { z } from 'zod';
import { validationFailed } from '../errors.js';
import { readFromReplica } from '../db/replica.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { SOURCE_PLATFORMS, type ReceiptAction } from '../sdk/consent.js';

export const STATS_INTERVALS = ['day', 'week', 'month'] as const;
export type StatsInterval = (typeof STATS_INTERVALS)[number];
/** Longest range, in days (five years with their leap days). */
export const MAX_STATS_DAYS = 5 * 365 + 2;
export const DEFAULT_STATS_DAYS = 30;

/** Platforms analytics split by (issue 45): a receipt's source platform, `unknown` for receipts without a source. */
export const STATS_PLATFORMS = [...SOURCE_PLATFORMS, 'unknown'] as const;
export type StatsPlatform = (typeof STATS_PLATFORMS)[number];
/** The rollup's platform column holds '' for receipts without a source. */
const platformColumn = (platform: StatsPlatform) => (platform === 'unknown' ? '' : platform);

const DAY_MS = 86_400_000;
const day = z.iso.date({ message: 'Must be a date, YYYY-MM-DD (UTC)' });

const statsInput = z
  .object({
    from: day.optional(),
    to: day.optional(),
    interval: z.enum(STATS_INTERVALS, { message: `Must be one of ${STATS_INTERVALS.join(', ')}` }).default('day'),
    versionId: z.string().min(1).max(64).optional(),
    platform: z.enum(STATS_PLATFORMS, { message: `Must be one of ${STATS_PLATFORMS.join(', ')}` }).optional(),
  })
  .transform((input, ctx) => {
    // Defaults: `to` today (UTC), `from` DEFAULT_STATS_DAYS days up to and including `to`.
    const to = input.to ?? new Date().toISOString().slice(0, 10);
    const from = input.from ?? isoDay(Date.parse(to) - (DEFAULT_STATS_DAYS - 1) * DAY_MS);
    const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
    if (days < 1) ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must not be after to' });
    if (days > MAX_STATS_DAYS) ctx.addIssue({ code: 'custom', path: ['to'], message: `The range is at most ${MAX_STATS_DAYS} days (5 years)` });
    return { ...input, from, to };
  });
export type StatsInput = z.output<typeof statsInput>;

/** Receipts whose SDK reported each action (issue 16; receipts without one are not counted here). */
export type ActionCounts = Record<ReceiptAction, number>;

export interface StatsCounts {
  receipts: number;
  acceptedAll: number;
  rejectedAll: number;
  customised: number;
  gpc: number;
  /** Purpose key → receipts that granted it. */
  purposes: Record<string, number>;
  actions: ActionCounts;
  /** Location code → receipts whose SDK reported it. */
  jurisdictions: Record<string, number>;
  /** Source platform (web, ios, android, other; unknown: no source) → receipts (issue 45). */
  platforms: Record<string, number>;
}
export interface StatsBucket extends StatsCounts {
  /** First UTC day of the bucket, YYYY-MM-DD (weeks start on Monday). */
  start: string;
}
export interface ConsentStats {
  from: string;
  to: string;
  interval: StatsInterval;
  buckets: StatsBucket[];
  totals: StatsCounts;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Checks the operator's input (400 validation_failed on anything wrong) once for all projects. */
export function parseStatsInput(input: unknown): StatsInput {
  return parseInput(statsInput, input ?? {});
}

/** Every bucket start from the bucket of `from` to the bucket of `to`, so empty buckets show as zeros. */
function bucketStarts(from: string, to: string, interval: StatsInterval): string[] {
  const truncate = (value: string) => {
    const date = new Date(`${value}T00:00:00Z`);
    if (interval === 'week') date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
    if (interval === 'month') date.setUTCDate(1);
    return date;
  };
  const starts: string[] = [];
  const last = truncate(to).getTime();
  for (const date = truncate(from); date.getTime() <= last; ) {
    starts.push(date.toISOString().slice(0, 10));
    if (interval === 'day') date.setUTCDate(date.getUTCDate() + 1);
    else if (interval === 'week') date.setUTCDate(date.getUTCDate() + 7);
    else date.setUTCMonth(date.getUTCMonth() + 1);
  }
  return starts;
}

const emptyCounts = (): StatsCounts => ({
  receipts: 0,
  acceptedAll: 0,
  rejectedAll: 0,
  customised: 0,
  gpc: 0,
  purposes: {},
  actions: { accept_all: 0, reject_all: 0, custom: 0, opt_out: 0, gpc: 0 },
  jurisdictions: {},
  platforms: {},
});

/** Adds `from` into `into`, key by key (purpose and jurisdiction maps). */
function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const key in from) into[key] = (into[key] ?? 0) + Number(from[key]);
}

const asObject = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, number>;

/**
 * Stats of many projects (the operator graph batches them) in one statement. A versionId
 * that is not a version of a project is a validation error for that project alone.
 */
export async function consentStatsOf(services: Services, projectIds: readonly string[], input: StatsInput): Promise<(ConsentStats | Error)[]> {
  const { from, to, interval, versionId, platform } = input;
  let versionProject: string | undefined;
  if (versionId !== undefined) {
    const [version] = await services.db.query<{ project_id: string }>('SELECT project_id FROM consent_versions WHERE id = $1', [versionId]);
    versionProject = version?.project_id;
  }
  // One statement reads the rows (at most days × versions × 4 shards per project) and they are summed here:
  // summing `purposes` in SQL (jsonb_each, then a sort by key) took ~100x longer than the counts.
  // date_trunc on a timestamp without time zone: the session's time zone never moves a bucket.
  // The rollup may come from the read replica, behind the primary by at most DATABASE_REPLICA_MAX_LAG_MS
  // (docs/scaling.md, "Read replicas"); the version check above stays on the primary (a version just published).
  const rows = await readFromReplica(services, (db) => db.query<{
    project_id: string;
    start: string;
    receipts: number;
    accepted_all: number;
    rejected_all: number;
    customised: number;
    gpc: number;
    purposes: Record<string, number>;
    action_accept_all: number;
    action_reject_all: number;
    action_custom: number;
    action_opt_out: number;
    action_gpc: number;
    jurisdictions: Record<string, number>;
    platform: string;
  }>(
    `SELECT project_id, to_char(date_trunc($5, day::timestamp), 'YYYY-MM-DD') AS start,
            receipts, accepted_all, rejected_all, customised, gpc, purposes,
            action_accept_all, action_reject_all, action_custom, action_opt_out, action_gpc, jurisdictions, platform
     FROM consent_stats_daily
     WHERE project_id = ANY($1::text[]) AND day BETWEEN $2::date AND $3::date AND ($4::text IS NULL OR version_id = $4)
       AND ($6::text IS NULL OR platform = $6)`,
    [projectIds, from, to, versionId ?? null, interval, platform === undefined ? null : platformColumn(platform)],
  ));
  const starts = bucketStarts(from, to, interval);
  const byProject = new Map<string, Map<string, StatsBucket>>();
  for (const row of rows) {
    let buckets = byProject.get(row.project_id);
    if (!buckets) byProject.set(row.project_id, (buckets = new Map(starts.map((s) => [s, { start: s, ...emptyCounts() }]))));
    const b = buckets.get(row.start)!;
    b.receipts += Number(row.receipts);
    b.acceptedAll += Number(row.accepted_all);
    b.rejectedAll += Number(row.rejected_all);
    b.customised += Number(row.customised);
    b.gpc += Number(row.gpc);
    b.actions.accept_all += Number(row.action_accept_all);
    b.actions.reject_all += Number(row.action_reject_all);
    b.actions.custom += Number(row.action_custom);
    b.actions.opt_out += Number(row.action_opt_out);
    b.actions.gpc += Number(row.action_gpc);
    addCounts(b.purposes, asObject(row.purposes));
    addCounts(b.jurisdictions, asObject(row.jurisdictions));
    const platformName = row.platform || 'unknown';
    b.platforms[platformName] = (b.platforms[platformName] ?? 0) + Number(row.receipts);
  }

  return projectIds.map((projectId) => {
    if (versionId !== undefined && versionProject !== projectId) {
      return validationFailed([{ path: ['versionId'], message: 'Not a version of this project' }]);
    }
    const buckets = [...(byProject.get(projectId)?.values() ?? starts.map((start) => ({ start, ...emptyCounts() })))];
    const totals = emptyCounts();
    for (const b of buckets) {
      totals.receipts += b.receipts;
      totals.acceptedAll += b.acceptedAll;
      totals.rejectedAll += b.rejectedAll;
      totals.customised += b.customised;
      totals.gpc += b.gpc;
      addCounts(totals.purposes, b.purposes);
      addCounts(totals.actions, b.actions);
      addCounts(totals.jurisdictions, b.jurisdictions);
      addCounts(totals.platforms, b.platforms);
    }
    for (const counts of [...buckets, totals]) {
      counts.purposes = byKey(counts.purposes);
      counts.jurisdictions = byKey(counts.jurisdictions);
      counts.platforms = byKey(counts.platforms);
    }
    return { from, to, interval, buckets, totals };
  });
}

/** Keys in code-unit order, so answers are stable whatever order the database returned them. */
const byKey = (purposes: Record<string, number>) =>
  Object.fromEntries(Object.entries(purposes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** GET /receipts/stats of one project. */
export async function consentStats(services: Services, projectId: string, input: unknown): Promise<ConsentStats> {
  const [stats] = await consentStatsOf(services, [projectId], parseStatsInput(input));
  if (stats instanceof Error) throw stats;
  return stats!;
}
