// The write side of consent analytics: the receipt writer adds each batch to the daily rollup
// (consent_stats_daily) in the batch's own transaction, in the same statement as the receipts.
import type { ReceiptAction } from '../sdk/consent.js';

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
  action: ReceiptAction | null;
  jurisdiction: string | null;
  /** Issue 45: the platform counts by it (receipts without a source in the '' platform). */
  source: { platform: string } | null;
}

/** One row of the upsert, named as the columns of `consent_stats_add`'s record (the migration). */
interface Bucket {
  project_id: string;
  day: string;
  version_id: string;
  platform: string;
  receipts: number;
  accepted_all: number;
  rejected_all: number;
  customised: number;
  gpc: number;
  accept_all: number;
  reject_all: number;
  custom: number;
  opt_out: number;
  gpc_action: number;
  purposes: Record<string, number>;
  jurisdictions: Record<string, number>;
}

const DECISION_COLUMN = { acceptedAll: 'accepted_all', rejectedAll: 'rejected_all', customised: 'customised' } as const;
const ACTION_COLUMN = { accept_all: 'accept_all', reject_all: 'reject_all', custom: 'custom', opt_out: 'opt_out', gpc: 'gpc_action' } as const;
const DAY_MS = 86_400_000;

/** The batch summed in memory per (project, UTC day, version, platform), in primary-key order. */
export function rollupBuckets(receipts: readonly CountedReceipt[]): Bucket[] {
  const buckets = new Map<string, Bucket>();
  for (const r of receipts) {
    // The UTC day as a number: a batch is almost always one day, so the date text is made once per bucket.
    const dayNumber = Math.floor(r.createdAt.getTime() / DAY_MS);
    const platform = r.source?.platform ?? '';
    const id = `${r.projectId}\u0000${dayNumber}\u0000${r.versionId}\u0000${platform}`;
    let bucket = buckets.get(id);
    if (!bucket) {
      bucket = {
        project_id: r.projectId,
        day: new Date(dayNumber * DAY_MS).toISOString().slice(0, 10),
        version_id: r.versionId,
        platform,
        receipts: 0,
        accepted_all: 0,
        rejected_all: 0,
        customised: 0,
        gpc: 0,
        accept_all: 0,
        reject_all: 0,
        custom: 0,
        opt_out: 0,
        gpc_action: 0,
        purposes: {},
        jurisdictions: {},
      };
      buckets.set(id, bucket);
    }
    bucket.receipts++;
    bucket[DECISION_COLUMN[r.decision]]++;
    if (r.gpc === true) bucket.gpc++;
    if (r.action !== null) bucket[ACTION_COLUMN[r.action]]++;
    if (r.jurisdiction !== null) bucket.jurisdictions[r.jurisdiction] = (bucket.jurisdictions[r.jurisdiction] ?? 0) + 1;
    for (const key in r.choices) bucket.purposes[key] = (bucket.purposes[key] ?? 0) + (r.choices[key] ? 1 : 0);
  }
  // Rows are locked in key order, so two transactions touching the same rows cannot deadlock.
  const order = (b: Bucket) => `${b.project_id}\u0000${b.day}\u0000${b.version_id}\u0000${b.platform}`;
  return [...buckets.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}
