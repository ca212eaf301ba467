import { sessionPurgeWorker } from './auth/sessions.js';
import { billingScheduleWorker } from './billing/schedule.js';
import { outageMonitor } from './db/unavailable.js';
import { scannerWorker } from './scanner/worker.js';
import { ledgerSealWorker } from './ledger/seal.js';
import { receiptPartitionWorker } from './receipts/partitions.js';
import { tcfRefreshWorker } from './tcf/refresh.js';
import { startSdkCacheListener } from './sdk/cache.js';
import { idempotencyPurgeWorker } from './sdk/idempotency.js';
import type { Services } from './services.js';
import { startWebhookWorker } from './webhooks/worker.js';

/** A background job inside the service (webhook delivery, billing schedules, session and idempotency-key purges, ledger sealing, receipt partitions). */
export interface Worker {
  name: string;
  /** Stops taking new work and finishes (or hands back) what it holds. */
  stop(): Promise<void>;
}

/** Starts every background worker; domains add theirs here. */
export function startWorkers(services: Services): Worker[] {
  return [
    outageMonitor(services),
    receiptPartitionWorker(services),
    billingScheduleWorker(services),
    startSdkCacheListener(services),
    startWebhookWorker(services),
    sessionPurgeWorker(services),
    idempotencyPurgeWorker(services),
    scannerWorker(services),
    ledgerSealWorker(services),
    tcfRefreshWorker(services),
    // Measures the standby's lag every second; stopping closes its pool.
    ...(services.replica ? [services.replica.start()] : []),
  ];
}
