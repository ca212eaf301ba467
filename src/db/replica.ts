// Read replica (docs/scaling.md, "Read replicas"): lists, exports and stats may read from a PostgreSQL
// streaming standby (DATABASE_REPLICA_URL); everything else, and every read the replica cannot serve
// right now, goes to the primary. Falling back is never an error.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { openDatabase, type Database } from './database.js';
import { bounded } from './unavailable.js';

/** How often the replica's position is compared with the primary's. */
export const REPLICA_CHECK_MS = 1000;
/**
 * A receipt's createdAt is taken when the service accepts it, and it commits up to DATABASE_WAIT_MS later
 * (the receipt writer's queue), plus its transaction and clock skew between hosts: the replica serves
 * receipts created up to this long (plus DATABASE_WAIT_MS) before the moment it is known to be complete.
 */
const COMMIT_MARGIN_MS = 1000;

export type ReplicaReason = 'starting' | 'in_use' | 'lagging' | 'unreachable' | 'not_a_standby' | 'failed_query';

interface Sample {
  /** The primary's flushed WAL position, in bytes. */
  lsn: bigint;
  /** The primary's clock when it was read. */
  at: Date;
}

/**
 * The standby and what is known about it. Every REPLICA_CHECK_MS it reads the primary's flushed WAL position
 * (with the primary's clock), then the standby's replayed position: the standby holds every commit of the
 * newest sample whose position it has replayed, so it is complete up to that sample's time (`completeAt`),
 * and its lag is how long ago that was. This needs no commit timestamps, so an idle primary is not
 * mistaken for lag, and a paused or disconnected standby is. Requests only read the cached verdict.
 */
export class ReadReplica implements Worker {
  readonly name = 'read-replica';
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private stopped = false;
  /** Why reads go where they go; logged when it changes, never per request. */
  reason: ReplicaReason = 'starting';
  /** The last measured lag, ms (null when unknown: starting, unreachable). */
  lagMs: number | null = null;
  /** Everything the primary committed before this (primary clock) is on the standby. */
  completeAt: Date | null = null;
  private checkedAt = 0;
  /** Reads served by each, and the times reads were sent back to the primary (metrics). */
  readonly reads = { replica: 0, primary: 0 };
  readonly fallbacks: Record<string, number> = {};

  private constructor(
    readonly db: Database,
    private readonly primary: Database,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  static async open(config: Config, primary: Database, logger: Logger): Promise<ReadReplica> {
    // Opening a pg pool connects lazily: an unreachable standby fails its checks, never the start.
    const db = await openDatabase({ databaseUrl: config.databaseReplicaUrl, dataDir: '', databaseWaitMs: config.databaseWaitMs });
    return new ReadReplica(db, primary, config, logger);
  }

  /** Starts the periodic check (one now, so a healthy standby is in use within a round trip). */
  start(): this {
    const tick = () => {
      void this.check().finally(() => {
        if (this.stopped) return;
        this.timer = setTimeout(tick, REPLICA_CHECK_MS);
        this.timer.unref();
      });
    };
    tick();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.db.close();
  }

  /** Whether a read may go to the standby: it is in use, checked recently, and (`through`) holds every receipt created before then. */
  serves(through?: Date): boolean {
    if (through !== undefined) {
      const horizon = this.horizon();
      // Strictly before: a receipt created at the horizon itself may not have reached the standby.
      return horizon !== null && through.getTime() < horizon.getTime();
    }
    // A check that stopped happening (a blocked event loop) must not keep an old verdict alive.
    return this.reason === 'in_use' && performance.now() - this.checkedAt <= Math.max(this.config.databaseReplicaMaxLagMs, 3 * REPLICA_CHECK_MS);
  }

  /** Every receipt created before this is on the standby (null while it is not in use). */
  horizon(): Date | null {
    if (!this.serves() || !this.completeAt) return null;
    return new Date(this.completeAt.getTime() - this.config.databaseWaitMs - COMMIT_MARGIN_MS);
  }

  /** A read failed on the standby: the next reads go to the primary until a check finds it healthy again. */
  failed(error: unknown): void {
    this.transition('failed_query', { err: (error as Error)?.message });
  }

  /** Measures the lag once (the worker calls it every REPLICA_CHECK_MS; tests may call it to hurry). */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      let primary: Sample;
      try {
        const [row] = await this.primary.query<{ lsn: string; at: Date }>(
          `SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '0/0')::text AS lsn, clock_timestamp() AS at`,
        );
        primary = { lsn: BigInt(row!.lsn.split('.')[0]!), at: new Date(row!.at) };
      } catch {
        return; // the primary is unavailable: the outage monitor says so, and reads fail there anyway
      }
      this.samples.push(primary);
      // Samples older than the bound can only prove a lag the bound refuses anyway.
      const oldest = primary.at.getTime() - this.config.databaseReplicaMaxLagMs - REPLICA_CHECK_MS;
      while (this.samples.length > 1 && this.samples[0]!.at.getTime() < oldest) this.samples.shift();

      let standby: { standby: boolean; lsn: string | null } | undefined;
      try {
        [standby] = await bounded(
          this.db.query<{ standby: boolean; lsn: string | null }>(
            `SELECT pg_is_in_recovery() AS standby, pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS lsn`,
          ),
          Math.max(this.config.databaseReplicaMaxLagMs, REPLICA_CHECK_MS),
        );
      } catch (error) {
        this.lagMs = null;
        this.transition('unreachable', { err: (error as Error)?.message });
        return;
      }
      this.checkedAt = performance.now();
      if (!standby?.standby || standby.lsn === null) {
        // Promoted, or pointed at a primary: it may hold writes the primary never saw. Not for reads.
        this.lagMs = null;
        this.transition('not_a_standby');
        return;
      }
      const replayed = BigInt(standby.lsn.split('.')[0]!);
      const complete = [...this.samples].reverse().find((sample) => sample.lsn <= replayed);
      this.completeAt = complete?.at ?? null;
      // No sample replayed: behind by more than the oldest one kept, which is past the bound.
      this.lagMs = primary.at.getTime() - (complete ?? this.samples[0]!).at.getTime();
      const lagging = !complete || this.lagMs > this.config.databaseReplicaMaxLagMs;
      this.transition(lagging ? 'lagging' : 'in_use', { lagMs: this.lagMs });
    } finally {
      this.checking = false;
    }
  }

  private transition(reason: ReplicaReason, details: Record<string, unknown> = {}): void {
    if (reason === this.reason) return;
    const from = this.reason;
    this.reason = reason;
    if (reason === 'in_use') {
      this.logger.info({ from, ...details }, 'read replica in use');
    } else {
      this.fallbacks[reason] = (this.fallbacks[reason] ?? 0) + 1;
      this.logger.warn({ reason, maxLagMs: this.config.databaseReplicaMaxLagMs, ...details }, 'read replica not used: reads go to the primary');
    }
  }
}

/**
 * Runs a read on the standby when it can serve it, else (or when it fails there) on the primary.
 * `through`: the read must see every receipt created before this time (a page or export ending then);
 * without it the read accepts a standby behind by up to DATABASE_REPLICA_MAX_LAG_MS (stats).
 * A read that streams must call this per batch, so a standby that goes away mid-stream costs one retry.
 */
export async function readFromReplica<T>(services: Services, read: (db: Database) => Promise<T>, options: { through?: Date } = {}): Promise<T> {
  const replica = services.replica;
  if (!replica?.serves(options.through)) {
    if (replica) replica.reads.primary++;
    return read(services.db);
  }
  try {
    const result = await read(replica.db);
    replica.reads.replica++;
    return result;
  } catch (error) {
    replica.failed(error);
    replica.reads.primary++;
    return read(services.db);
  }
}
