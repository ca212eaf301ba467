import { uuidv7 } from 'uuidv7';
import { outageMonitor } from '../db/unavailable.js';
import { metricsOf } from '../metrics/metrics.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { DEFAULT_TIMEOUT_MS, sendWebhook, type SendResult } from './send.js';

/**
 * Delivers the webhook outbox (webhook_events) written by the receipt writer (src/sdk/receipt-writer.ts) and projectWebhookEvent.
 *
 * Claiming: `SELECT ... FOR UPDATE SKIP LOCKED` picks due events no other
 * instance is touching and stamps a lease (`locked_until`) in the same
 * statement, so several service instances on one database never send the same
 * attempt at once, and an instance that dies (kill -9) only holds its events
 * until the lease runs out. The lease outlives the request timeout, and the
 * outcome is recorded only while the lease is still ours.
 *
 * Schedule (decisions.md "Webhook"): first attempt as soon as the worker sees
 * the event (a nudge right after the receipt commits, or the next poll);
 * retry n waits min(2^(n-1) × WEBHOOK_RETRY_BASE_MS, 1 h) ±20 %, until 24 h
 * after the event; then the event is `failed` and the project's admins get one
 * `consent.webhook_failing` notification per failing streak.
 */

export interface DeliveryOptions {
  /** Per-request deadline (default 10 s). */
  timeoutMs: number;
  /** How many events one claim may take. */
  batchSize: number;
}

export interface WorkerOptions extends DeliveryOptions {
  /** How often the outbox is polled when nobody nudges the worker. */
  pollMs: number;
  /** Deliveries in flight at once per instance. */
  concurrency: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { timeoutMs: DEFAULT_TIMEOUT_MS, batchSize: 100, pollMs: 1000, concurrency: 64 };

const HOUR_MS = 3_600_000;
export const MAX_RETRY_DELAY_MS = HOUR_MS;
export const GIVE_UP_AFTER_MS = 24 * HOUR_MS;
/** How long finished attempts gather before they are written together. */
const GATHER_MS = 5;
/** A lease outlives the request deadline by this much, so recording the outcome never races a re-claim. */
const LEASE_MARGIN_MS = 5000;

/** Delay before retry `n` (1 = the retry after the first failed attempt), with ±20 % jitter. */
export function retryDelayMs(retry: number, baseMs: number, random: () => number = Math.random): number {
  const delay = Math.min(2 ** (retry - 1) * baseMs, MAX_RETRY_DELAY_MS);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

interface ClaimedEvent {
  id: string;
  projectId: string;
  type: string;
  payload: { id: string; type: string; createdAt: string; data: unknown };
  attempts: number;
  createdAt: Date;
  lockedUntil: Date;
  url: string;
  secret: string;
  failingSince: Date | null;
}

// Hot path in plain SQL on the driver (no ORM round trip): PGlite runs on the event loop, so
// every statement saved is time the HTTP side gets back. The claim has no ORDER BY on purpose:
// with a backlog, sorting every due row on each claim costs more than the claim itself, while
// this form stops after `limit` rows (the enabled check is a per-row lookup for the same reason).
// Due events are taken roughly in storage order; every one is taken while the backlog drains.
const CLAIM_SQL = `
  UPDATE webhook_events AS e SET locked_until = $2
  FROM webhooks AS w
  WHERE w.project_id = e.project_id
    AND e.id IN (
      SELECT due.id FROM webhook_events AS due
      WHERE due.status = 'pending' AND due.next_attempt_at <= $1
        AND (due.locked_until IS NULL OR due.locked_until <= $1)
        AND (SELECT hook.enabled FROM webhooks AS hook WHERE hook.project_id = due.project_id)
      LIMIT $3
      FOR UPDATE OF due SKIP LOCKED)
  RETURNING e.id, e.project_id AS "projectId", e.type, e.payload, e.attempts, e.created_at AS "createdAt",
    e.locked_until AS "lockedUntil", w.url, w.secret, w.failing_since AS "failingSince"`;

/** Takes up to `limit` due events of enabled webhooks and leases them to this caller. */
function claimDueEvents(services: Services, limit: number, timeoutMs: number): Promise<ClaimedEvent[]> {
  const now = services.now();
  const lease = new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS);
  return services.db.query<ClaimedEvent>(CLAIM_SQL, [now, lease, limit]);
}

/** The raw body: the stored payload with its top-level keys in the documented order. */
function bodyOf(event: ClaimedEvent): string {
  const { id, type, createdAt, data } = event.payload;
  return JSON.stringify({ id, type, createdAt, data });
}

type Outcome = 'succeeded' | 'retrying' | 'failed' | 'lease_lost';

interface Attempt {
  event: ClaimedEvent;
  sent: SendResult;
  outcome: Exclude<Outcome, 'lease_lost'>;
  at: Date;
  nextAttemptAt: Date | null;
}

/** What an attempt means for its event: done, retry later, or given up (24 h after the event). */
function judge(services: Services, event: ClaimedEvent, sent: SendResult): Attempt {
  const at = services.now();
  if (sent.ok) return { event, sent, at, outcome: 'succeeded', nextAttemptAt: null };
  const next = new Date(at.getTime() + retryDelayMs(event.attempts + 1, services.config.webhookRetryBaseMs));
  if (next.getTime() <= event.createdAt.getTime() + GIVE_UP_AFTER_MS) return { event, sent, at, outcome: 'retrying', nextAttemptAt: next };
  return { event, sent, at, outcome: 'failed', nextAttemptAt: null };
}

/**
 * Moves events on and logs their attempts in one statement, only for events
 * whose lease is still ours; returns the ids it recorded.
 */
const RECORD_SQL = `
  WITH attempt AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS a(
      event_id text, lease timestamptz, status text, attempt int, next_attempt_at timestamptz,
      completed_at timestamptz, delivery_id text, project_id text, event_type text, delivery_status text,
      response_status int, duration_ms int, error text, created_at timestamptz)
  ), moved AS (
    UPDATE webhook_events AS e
    SET status = a.status, attempts = a.attempt, locked_until = NULL, last_error = a.error,
        next_attempt_at = COALESCE(a.next_attempt_at, e.next_attempt_at), completed_at = a.completed_at
    FROM attempt AS a
    WHERE e.id = a.event_id AND e.status = 'pending' AND e.locked_until = a.lease
    RETURNING e.id
  )
  INSERT INTO webhook_deliveries
    (id, event_id, project_id, event_type, attempt, status, response_status, duration_ms, error, next_retry_at, created_at)
  SELECT a.delivery_id, a.event_id, a.project_id, a.event_type, a.attempt, a.delivery_status, a.response_status,
    a.duration_ms, a.error, a.next_attempt_at, a.created_at
  FROM attempt AS a JOIN moved ON moved.id = a.event_id
  RETURNING event_id AS "eventId"`;

const recordParameter = (attempts: Attempt[]) =>
  JSON.stringify(
    attempts.map(({ event, sent, outcome, at, nextAttemptAt }) => ({
      event_id: event.id,
      lease: event.lockedUntil.toISOString(),
      status: outcome === 'retrying' ? 'pending' : outcome,
      attempt: event.attempts + 1,
      next_attempt_at: nextAttemptAt?.toISOString() ?? null,
      completed_at: outcome === 'retrying' ? null : at.toISOString(),
      delivery_id: uuidv7(),
      project_id: event.projectId,
      event_type: event.type,
      delivery_status: sent.ok ? 'succeeded' : 'failed',
      response_status: sent.responseStatus,
      duration_ms: sent.durationMs,
      error: sent.error,
      created_at: at.toISOString(),
    })),
  );

/** The first permanent failure starts a failing streak; a success ends it. */
const changesStreak = ({ outcome, event }: Attempt) => outcome === 'failed' || (outcome === 'succeeded' && event.failingSince !== null);

/** Records an attempt that starts or ends a failing streak, with its notification, in one transaction. */
function recordStreakChange(services: Services, attempt: Attempt): Promise<Outcome> {
  const { event, outcome, at } = attempt;
  return services.db.prisma.$transaction(async (tx) => {
    const recorded = await tx.$queryRawUnsafe<unknown[]>(RECORD_SQL, recordParameter([attempt]));
    if (!recorded.length) return leaseLost(services, event);
    if (outcome === 'succeeded') {
      await tx.$executeRaw`UPDATE webhooks SET failing_since = NULL WHERE project_id = ${event.projectId}`;
      return outcome;
    }
    // The first permanent failure of a streak tells the project's admins, once.
    const started = await tx.$executeRaw`
      UPDATE webhooks SET failing_since = ${at} WHERE project_id = ${event.projectId} AND failing_since IS NULL`;
    if (started) await notifyFailing(tx, event, attempt.sent.error, at);
    return outcome;
  });
}

/**
 * Group commit for attempts: attempts that finish within a few milliseconds of
 * each other, or while a write runs, go in one statement, so a busy worker
 * writes a few statements per second instead of one per delivery (PGlite runs
 * SQL on the event loop, so every statement saved goes back to HTTP).
 *
 * Through a database outage the log keeps the attempts it could not write and
 * writes them as soon as the database is back (the worker claims nothing
 * before that): a 2xx the receiver gave while the database was down is
 * recorded, not forgotten and resent. What remains at-least-once: the process
 * ending (or the outage outlasting the lease, when another instance re-claims
 * the event first) before the record is written (docs/webhooks.md).
 */
class AttemptLog {
  private queue: { attempt: Attempt; done: (outcome: Outcome) => void; fail: (error: unknown) => void }[] = [];
  private writing: Promise<void> | undefined;
  /** A write met an outage: attempts wait in memory for the database. */
  private held = false;
  private stopped = false;
  private stopping!: () => void;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopping = resolve));

  constructor(private readonly services: Services) {}

  record(attempt: Attempt): Promise<Outcome> {
    if (changesStreak(attempt)) return this.throughOutages(() => recordStreakChange(this.services, attempt));
    return new Promise((done, fail) => {
      this.queue.push({ attempt, done, fail });
      this.writing ??= this.write().finally(() => {
        this.writing = undefined;
        this.held = false;
      });
    });
  }

  /** After an outage: resolves once the attempts it held have been written (or given up on); at once otherwise. */
  async written(): Promise<void> {
    while (this.held && this.writing) await this.writing;
  }

  /** Stops waiting for the database: attempts still unwritten fail (the lease brings them back). */
  stop(): void {
    this.stopped = true;
    this.stopping();
  }

  /** Runs a write, and again after each outage it meets, until it succeeds or the log stops. */
  private async throughOutages<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (this.stopped || !outageMonitor(this.services).report(error)) throw error;
        this.held = true;
        await Promise.race([outageMonitor(this.services).whenAvailable(), this.stopSignal]);
      }
    }
  }

  private async write(): Promise<void> {
    // A few milliseconds of gathering turn a stream of single attempts into one statement per batch.
    await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    while (this.queue.length) {
      const batch = this.queue.splice(0, 500);
      try {
        const rows = await this.throughOutages(() =>
          this.services.db.query<{ eventId: string }>(RECORD_SQL, [recordParameter(batch.map((b) => b.attempt))]),
        );
        const recorded = new Set(rows.map((row) => row.eventId));
        for (const { attempt, done } of batch) {
          done(recorded.has(attempt.event.id) ? attempt.outcome : leaseLost(this.services, attempt.event));
        }
      } catch (error) {
        for (const { fail } of batch) fail(error);
      }
    }
  }
}

/** Sends one claimed event with the webhook's current secret and records the attempt. */
async function deliverClaimed(services: Services, log: AttemptLog, event: ClaimedEvent, options: DeliveryOptions): Promise<Outcome> {
  const metrics = metricsOf(services);
  const stopTimer = metrics?.webhookLatency.startTimer();
  const sent = await sendWebhook(
    { url: event.url, secret: event.secret, eventId: event.id, eventType: event.type, body: bodyOf(event) },
    { timeoutMs: options.timeoutMs, allowLoopback: !services.config.production },
  );
  stopTimer?.();
  const outcome = await log.record(judge(services, event, sent));
  metrics?.webhookDeliveries.inc({ outcome });
  return outcome;
}

function leaseLost(services: Services, event: ClaimedEvent): Outcome {
  services.logger.warn({ eventId: event.id }, 'webhook lease expired before the attempt was recorded; it will be retried');
  return 'lease_lost';
}

type Tx = Parameters<Parameters<Services['db']['prisma']['$transaction']>[0]>[0];

async function notifyFailing(tx: Tx, event: ClaimedEvent, lastError: string | null, now: Date) {
  const project = await tx.project.findUniqueOrThrow({ where: { id: event.projectId }, select: { organizationId: true, name: true } });
  await notifyMembers(tx, {
    organizationId: project.organizationId,
    projectId: event.projectId,
    product: 'consent',
    type: 'consent.webhook_failing',
    title: `Webhook deliveries for ${project.name} are failing`,
    body: `An event could not be delivered to ${event.url} within 24 hours (last error: ${lastError}). Later events are still attempted; see the webhook's delivery log.`,
    minRole: 'ADMIN',
    createdAt: now,
  });
}

/**
 * Claims one batch of due events and delivers it, waiting for every attempt
 * to be recorded. The worker runs this continuously; tests call it directly
 * with a moved clock instead of sleeping.
 */
export async function runDue(services: Services, options: Partial<DeliveryOptions> = {}): Promise<Outcome[]> {
  const settings = { ...DEFAULT_WORKER_OPTIONS, ...options };
  const claimed = await claimDueEvents(services, settings.batchSize, settings.timeoutMs);
  const log = new AttemptLog(services);
  return Promise.all(claimed.map((event) => deliverClaimed(services, log, event, settings)));
}

const running = new Set<WebhookWorker>();
const byServices = new WeakMap<Services, WebhookWorker>();

/**
 * Nudges every webhook worker of this process: call it after a transaction
 * that enqueued events commits, so the first attempt does not wait for the
 * next poll. Cheap: at most one claim query runs per worker at a time.
 */
export function wakeWebhookWorker(): void {
  for (const worker of running) worker.wake();
}

/** The worker running for a server's services (tests stop it to drive runDue themselves). */
export const webhookWorkerOf = (services: Services) => byServices.get(services);

/** The outbox delivery loop: polls, takes nudges, keeps up to `concurrency` deliveries in flight. */
export class WebhookWorker implements Worker {
  readonly name = 'webhooks';
  private readonly options: WorkerOptions;
  private readonly log: AttemptLog;
  private readonly inFlight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  /** The last claim filled all the room there was: more may be due as soon as a slot frees. */
  private backlog = false;
  private stopped = false;

  constructor(
    private readonly services: Services,
    options: Partial<WorkerOptions> = {},
  ) {
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
    this.log = new AttemptLog(services);
  }

  start(): this {
    running.add(this);
    byServices.set(this.services, this);
    this.wake();
    return this;
  }

  wake(): void {
    if (!this.stopped) void this.pump();
  }

  /** Stops claiming, then waits for in-flight deliveries (each bounded by the timeout) to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.log.stop();
    clearTimeout(this.timer);
    running.delete(this);
    if (byServices.get(this.services) === this) byServices.delete(this.services);
    await this.pumping;
    await Promise.allSettled([...this.inFlight]);
  }

  private pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = this.claimWhileRoom().finally(() => {
      this.pumping = undefined;
      if (this.stopped) return;
      if (this.again) return void this.pump(); // nudged while the last claim was finishing
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.wake(), this.options.pollMs);
    });
    return this.pumping;
  }

  private async claimWhileRoom(): Promise<void> {
    try {
      // Through an outage: claim nothing (no event spends an attempt), and once the database is
      // back write the attempts that finished meanwhile before claiming, so none is sent twice.
      await outageMonitor(this.services).whenAvailable();
      await this.log.written();
      if (this.stopped) return;
      do {
        this.again = false;
        const room = Math.min(this.options.concurrency - this.inFlight.size, this.options.batchSize);
        if (room <= 0) {
          this.backlog = true;
          return;
        }
        const claimed = await claimDueEvents(this.services, room, this.options.timeoutMs);
        this.backlog = claimed.length === room;
        for (const event of claimed) this.track(deliverClaimed(this.services, this.log, event, this.options));
        if (this.backlog) this.again = true;
      } while (this.again && !this.stopped);
    } catch (error) {
      this.again = false;
      // An outage is logged once by the monitor, and the next pump waits for its end; leases expire on their own.
      if (outageMonitor(this.services).report(error)) this.again = !this.stopped;
      else this.services.logger.error({ err: error }, 'webhook worker: claiming failed');
    }
  }

  private track(delivery: Promise<unknown>): void {
    const tracked = delivery
      .catch((error) => this.services.logger.error({ err: error }, 'webhook worker: recording an attempt failed'))
      .finally(() => {
        this.inFlight.delete(tracked);
        // With a backlog, refill once half the slots are free: one claim per batch, not per delivery.
        if (this.backlog && this.inFlight.size <= this.options.concurrency / 2) this.wake();
      });
    this.inFlight.add(tracked);
  }
}

export const startWebhookWorker = (services: Services, options?: Partial<WorkerOptions>) => new WebhookWorker(services, options).start();
