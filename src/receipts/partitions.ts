// Monthly partitions of `receipts` (docs/scaling.md, "Partitions made ahead, and a safety net"): a worker makes
// this month's and the next two ahead of need, since making one briefly locks the whole table; a receipt whose
// month has none (a server off for months, a clock moved) makes its own through the receipt writer.
import { outageMonitor } from '../db/unavailable.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';

/** Months made ahead of the current one. */
export const MONTHS_AHEAD = 2;
const HOUR_MS = 3_600_000;

/**
 * Makes the partitions of the UTC months holding these times where missing (the legacy partition holds every
 * month before partitioning). `receipts_make_partition()` (the migration) does it under an advisory lock, so
 * instances and the writer take turns. Returns the partitions made.
 */
export async function makeReceiptPartitions(services: Services, times: readonly Date[]): Promise<string[]> {
  const rows = await services.db.query<{ made: string | null }>(
    'SELECT receipts_make_partition(at) AS made FROM unnest($1::timestamptz[]) AS at ORDER BY at',
    [[...new Set(times.map((time) => time.toISOString()))]],
  );
  const made = rows.flatMap((row) => (row.made ? [row.made] : []));
  if (made.length) services.logger.info({ partitions: made }, 'receipt partitions made');
  return made;
}

/** This month and the next MONTHS_AHEAD, by the service's clock. */
export function monthsAhead(now: Date): Date[] {
  return Array.from({ length: MONTHS_AHEAD + 1 }, (_, n) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + n, 1)));
}

/**
 * SQLSTATE 23514, as the insert of a receipt whose month has no partition fails (`no partition of relation
 * "receipts" found for row`). A CHECK violation has it too: the writer tells them apart by making the batch's
 * partitions and trying once more, which does not depend on the server's message language.
 */
export const isCheckViolation = (error: unknown) => hasSqlState(error, '23514');

/** A unique violation (the receipt writer's taken Idempotency-Key, src/sdk/idempotency.ts), from either driver. */
export const isUniqueViolation = (error: unknown) => hasSqlState(error, '23505');

/** The error, or one it wraps (Prisma's driver adapter error, a cause), carries this SQLSTATE. */
function hasSqlState(error: unknown, state: string, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 6) return false;
  const e = error as { code?: unknown; originalCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: unknown } } };
  // Prisma's driver adapter error names the database's code `originalCode` (in meta.driverAdapterError.cause).
  if (e.code === state || e.originalCode === state) return true;
  return [e.cause, e.meta?.driverAdapterError?.cause].some((inner) => inner !== error && hasSqlState(inner, state, depth + 1));
}

/** The partition worker: at start-up, then hourly. */
export function receiptPartitionWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  const run = () => {
    running ??= makeReceiptPartitions(services, monthsAhead(services.now()))
      .catch((error) => outageMonitor(services).report(error) || services.logger.error({ err: error }, 'making receipt partitions failed'))
      .finally(() => (running = undefined));
  };
  run();
  const timer = setInterval(run, HOUR_MS);
  timer.unref();
  return {
    name: 'receipt-partitions',
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
