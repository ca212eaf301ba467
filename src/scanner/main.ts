// `npm run scanner`: a scanner-only process (docs/scaling.md "The scanner fleet"). It runs SCANNER_CONCURRENCY
// scan workers on the database's queue and nothing else: no HTTP API, no webhook delivery, no ledger sealing
// (the API instances do those). Any number of these on any number of machines share the queue fairly by
// organization (src/scanner/queue.ts); API instances with SCANNER_CONCURRENCY=0 only queue.
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { outageMonitor } from '../db/unavailable.js';
import { createLogger } from '../logger.js';
import { RateLimits } from '../rate-limit/index.js';
import type { Services } from '../services.js';
import { scannerWorker } from './worker.js';

/** Why this configuration cannot run a scanner-only process, or undefined when it can. */
function scannerProcessRefusal(config: Config): string | undefined {
  // The embedded database's files belong to the one process that opened them (the API instance): a second
  // process would corrupt them. That instance runs its scans itself.
  if (!config.databaseUrl) return 'npm run scanner needs DATABASE_URL (PostgreSQL): the embedded database belongs to the API instance, which runs scans itself (SCANNER_CONCURRENCY)';
  if (config.scanner.concurrency < 1) return 'npm run scanner needs SCANNER_CONCURRENCY of 1 or more: with 0 it would run nothing';
  if (!config.scanner.chromiumPath) return 'npm run scanner found no Chromium: set CHROMIUM_PATH, or put chromium on PATH';
  return undefined;
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
const refusal = scannerProcessRefusal(config);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}

const logger = createLogger(config.logLevel);
const db = await openDatabase(config);
// Every instance applies pending migrations under the runner's lock, so a worker started first finds its tables.
const applied = await migrate(db);
if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
const services: Services = { config, db, logger, rateLimits: await RateLimits.create(undefined, logger), now: () => new Date() };
const workers = [outageMonitor(services), scannerWorker(services)];
logger.info({ concurrency: config.scanner.concurrency, leaseSeconds: config.scanner.leaseMs / 1000 }, 'scanner running');
logger.flush();

// SIGTERM hands the scans in progress back to the queue (their attempt spent) before the process exits; a worker
// that is killed outright leaves them to be claimed again when their lease runs out.
const SHUTDOWN_DEADLINE_MS = 25_000;
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    logger.flush();
    setTimeout(() => {
      logger.error({ afterMs: SHUTDOWN_DEADLINE_MS }, 'shutdown deadline passed, exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    try {
      await Promise.all(workers.map((worker) => worker.stop()));
      await services.rateLimits.close();
      await db.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  });
}
