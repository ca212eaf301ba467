// The write side of consent analytics: the receipt writer adds each batch to the daily rollup
// (consent_stats_daily) in the batch's own transaction, with one upsert statement.
import { Prisma } from '../generated/prisma/client.js';

/** How a receipt answered the optional purposes of its version (docs/analytics.md). */
export type Decision = 'acceptedAll' | 'rejectedAll' | 'customised';

/**
 * acceptedAll: every optional purpose granted (also when the version has none);
 * rejectedAll: every optional purpose denied; customised: the rest.
 * The migration's backfill SQL says the same in SQL.
 */
export function decisionOf(choices: Record<string, boolean>, purposes: ReadonlyMap<string, boolean>): Decision {
  let optional = 0;
  let granted = 0;
  for (const [key, required] of purposes) {
    if (required) continue;
    optional++;
    if (choices[key] === true) granted++;
  }
  if (granted === optional) return 'acceptedAll';
  return granted === 0 ? 'rejectedAll' : 'customised';
}

export interface CountedReceipt {
  projectId: string;
  versionId: string;
  createdAt: Date;
  choices: Record<string, boolean>;
  decision: Decision;
  gpc: boolean | null;
}

interface Bucket {
  projectId: string;
  day: string;
  versionId: string;
  receipts: number;
  acceptedAll: number;
  rejectedAll: number;
  customised: number;
  gpc: number;
  purposes: Record<string, number>;
}

/** The batch summed in memory per (project, UTC day, version), in primary-key order. */
export function rollupBuckets(receipts: readonly CountedReceipt[]): Bucket[] {
  const buckets = new Map<string, Bucket>();
  for (const r of receipts) {
    const day = r.createdAt.toISOString().slice(0, 10);
    const id = `${r.projectId}\u0000${day}\u0000${r.versionId}`;
    let bucket = buckets.get(id);
    if (!bucket) {
      bucket = { projectId: r.projectId, day, versionId: r.versionId, receipts: 0, acceptedAll: 0, rejectedAll: 0, customised: 0, gpc: 0, purposes: {} };
      buckets.set(id, bucket);
    }
    bucket.receipts++;
    bucket[r.decision]++;
    if (r.gpc === true) bucket.gpc++;
    for (const [key, granted] of Object.entries(r.choices)) bucket.purposes[key] = (bucket.purposes[key] ?? 0) + (granted ? 1 : 0);
  }
  // Rows are locked in key order, so two transactions touching the same rows cannot deadlock.
  return [...buckets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, bucket]) => bucket);
}

/**
 * The batch added to the rollup: one INSERT … ON CONFLICT DO UPDATE for the whole batch (the receipt
 * writer runs it in the same statement as the receipts' INSERT, so it costs no round trip).
 * `shard` is the writer's transaction slot, so its concurrent transactions never wait on
 * each other's rows (readers sum over shards).
 */
export function rollupUpsert(receipts: readonly CountedReceipt[], shard: number): Prisma.Sql {
  const buckets = rollupBuckets(receipts);
  const column = <K extends keyof Bucket>(key: K) => buckets.map((b) => b[key]);
  return Prisma.sql`
    INSERT INTO consent_stats_daily AS s (project_id, day, version_id, shard, receipts, accepted_all, rejected_all, customised, gpc, purposes)
    SELECT project_id, day::date, version_id, ${shard}::smallint, receipts, accepted_all, rejected_all, customised, gpc, purposes::jsonb
    FROM unnest(${column('projectId')}::text[], ${column('day')}::text[], ${column('versionId')}::text[], ${column('receipts')}::int[],
                ${column('acceptedAll')}::int[], ${column('rejectedAll')}::int[], ${column('customised')}::int[],
                ${column('gpc')}::int[], ${buckets.map((b) => JSON.stringify(b.purposes))}::text[])
      AS b(project_id, day, version_id, receipts, accepted_all, rejected_all, customised, gpc, purposes)
    ON CONFLICT (project_id, day, version_id, shard) DO UPDATE SET
      receipts = s.receipts + EXCLUDED.receipts,
      accepted_all = s.accepted_all + EXCLUDED.accepted_all,
      rejected_all = s.rejected_all + EXCLUDED.rejected_all,
      customised = s.customised + EXCLUDED.customised,
      gpc = s.gpc + EXCLUDED.gpc,
      purposes = (
        SELECT COALESCE(jsonb_object_agg(key, total), '{}') FROM (
          SELECT key, sum(value::bigint) AS total
          FROM (SELECT * FROM jsonb_each_text(s.purposes) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.purposes)) e
          GROUP BY key
        ) t
      )`;
}
