import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';

/** extensions.md "Database unavailable": what a refused caller is told to wait, in seconds. */
export const RETRY_AFTER_SECONDS = 5;
/** How often an outage is probed for its end. */
const PROBE_MS = 500;

export const UNAVAILABLE_MESSAGE = 'The database is unavailable; try again shortly';
export const serviceUnavailable = (message = UNAVAILABLE_MESSAGE) => new AppError('service_unavailable', message);

// Node socket errors: the server is down, unreachable, or went away mid-conversation.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// PostgreSQL: admin shutdown, crash shutdown, cannot connect now, too many connections (class 08 below).
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
// Prisma: can't reach, timed out, server closed the connection, pool timeout, transaction could not start or expired.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024', 'P2028']);
// What @prisma/adapter-pg reports as `driverAdapterError.cause.kind` for the same failures.
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// Errors that carry no code: node-postgres (pool wait over connectionTimeoutMillis, a cut connection) and PGlite.
const MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|PGlite is closed)/;

/**
 * Whether an error means "the database cannot answer now" rather than "this
 * request is wrong" or "our code is broken": those become 503 with Retry-After,
 * never 500. Follows the wrappers (GraphQL's originalError, Prisma's driver
 * adapter error, `cause`) to the driver's own error.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 6) return false;
  const e = error as {
    code?: unknown;
    message?: unknown;
    kind?: unknown;
    cause?: unknown;
    originalError?: unknown;
    errors?: unknown;
    meta?: { driverAdapterError?: { cause?: unknown } };
  };
  if (typeof e.code === 'string') {
    if (SOCKET_CODES.has(e.code) || SQLSTATES.has(e.code) || PRISMA_CODES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
  const inner = [e.originalError, e.cause, e.meta?.driverAdapterError?.cause, ...(Array.isArray(e.errors) ? e.errors : [])];
  return inner.some((next) => next !== error && isDatabaseUnavailable(next, depth + 1));
}

/**
 * Notices outages so they are logged once each, not once per refused request:
 * the first unavailability error logs `database unavailable`, a probe then asks
 * `SELECT 1` every half second, and its first answer logs `database available
 * again` with how long it lasted and how many requests were refused. Background
 * work (the webhook worker) waits on `whenAvailable()` instead of polling.
 */
export class OutageMonitor implements Worker {
  readonly name = 'database-outages';
  private since: number | undefined;
  private refused = 0;
  private probe: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly services: Services) {}

  get down(): boolean {
    return this.since !== undefined;
  }

  /** Returns whether `error` is database unavailability, and counts it towards the current outage. */
  report(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    this.refused++;
    if (this.since === undefined && !this.stopped) {
      this.since = Date.now();
      this.refused = 1;
      this.services.logger.error({ err: describe(error) }, 'database unavailable');
      this.probeSoon();
    }
    return true;
  }

  /** Resolves at once when the database is not known to be down, else when the probe sees it back (or on stop). */
  whenAvailable(): Promise<void> {
    if (!this.down || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.probe);
    this.release();
  }

  private probeSoon(): void {
    this.probe = setTimeout(async () => {
      try {
        await bounded(this.services.db.query('SELECT 1'), this.services.config.databaseWaitMs);
      } catch {
        if (!this.stopped) this.probeSoon();
        return;
      }
      this.services.logger.info({ downMs: Date.now() - this.since!, refused: this.refused }, 'database available again');
      this.since = undefined;
      this.release();
    }, PROBE_MS);
    this.probe.unref();
  }

  private release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/** The driver's own words, without Prisma's multi-line invocation text. */
function describe(error: unknown): { message: string; code?: string } {
  const e = error as { code?: string; message?: string; originalError?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: string; code?: string } } } };
  if (e?.originalError) return describe(e.originalError);
  const cause = e?.meta?.driverAdapterError?.cause;
  const message = String(e?.message ?? error).trim().split('\n').pop()!;
  return { message, code: cause?.code ?? cause?.kind ?? e?.code };
}

/** `promise`, or a connection-timeout error (an unavailability) after `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout exceeded when trying to connect')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const monitors = new WeakMap<Services, OutageMonitor>();

/** The outage monitor of one running service (started with the other workers, stopped on close). */
export function outageMonitor(services: Services): OutageMonitor {
  let monitor = monitors.get(services);
  if (!monitor) {
    monitor = new OutageMonitor(services);
    monitors.set(services, monitor);
  }
  return monitor;
}
