import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { ReadReplica } from './db/replica.js';
import type { RateLimits } from './rate-limit/index.js';
import type { ScannerNetwork } from './scanner/worker.js';

/** Long-lived things built once at start-up and shared by every request. */
export interface Services {
  config: Config;
  db: Database;
  /** The standby lists, exports and stats may read from (DATABASE_REPLICA_URL), through `readFromReplica`. */
  replica?: ReadReplica;
  rateLimits: RateLimits;
  logger: Logger;
  /** Injectable clock: tests move time instead of sleeping. */
  now: () => Date;
  /** Tests only (StartOptions): how the scanner resolves names and which loopback addresses play public ones. */
  scannerNetwork?: ScannerNetwork;
}
