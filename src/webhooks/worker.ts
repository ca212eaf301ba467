import { uuidv7 } from 'uuidv7';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { DEFAULT_TIMEOUT_MS, sendWebhook, type SendResult } from './send.js';

/**
 * Delivers the webhook outbox (webhook_events) written by enqueueConsentUpdated.
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

/** Takes up to `limit` due events of enabled webhooks and leases them to this caller. */
async function claimDueEvents(services: Services, limit: number, timeoutMs: number): Promise<ClaimedEvent[]> {
  const now = services.now();
  const lease = new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS);
  return services.db.prisma.$queryRaw<ClaimedEvent[]>`
    UPDATE webhook_events AS e SET locked_until = ${lease}
    FROM webhooks AS w
    WHERE w.project_id = e.project_id
      AND e.id IN (
        SELECT due.id FROM webhook_events AS due
        JOIN webhooks AS hook ON hook.project_id = due.project_id AND hook.enabled
        WHERE due.status = 'pending' AND due.next_attempt_at <= ${now}
          AND (due.locked_until IS NULL OR due.locked_until <= ${now})
        ORDER BY due.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF due SKIP LOCKED)
    RETURNING e.id, e.project_id AS "projectId", e.type, e.payload, e.attempts, e.created_at AS "createdAt",
      e.locked_until AS "lockedUntil", w.url, w.secret, w.failing_since AS "failingSince"`;
}

/** The raw body: the stored payload with its top-level keys in the documented order. */
function bodyOf(event: ClaimedEvent): string {
  const { id, type, createdAt, data } = event.payload;
  return JSON.stringify({ id, type, createdAt, data });
}

type Outcome = 'succeeded' | 'retrying' | 'failed' | 'lease_lost';

/** Sends one claimed event with the webhook's current secret and records the attempt. */
async function deliverClaimed(services: Services, event: ClaimedEvent, options: DeliveryOptions): Promise<Outcome> {
  const sent = await sendWebhook(
    { url: event.url, secret: event.secret, eventId: event.id, eventType: event.type, body: bodyOf(event) },
    { timeoutMs: options.timeoutMs, publicOnly: services.config.production },
  );
  return recordAttempt(services, event, sent);
}

async function recordAttempt(services: Services, event: ClaimedEvent, sent: SendResult): Promise<Outcome> {
  const now = services.now();
  const attempt = event.attempts + 1;
  let outcome: Outcome = 'succeeded';
  let nextAttemptAt: Date | null = null;
  if (!sent.ok) {
    const next = new Date(now.getTime() + retryDelayMs(attempt, services.config.webhookRetryBaseMs));
    const giveUpAt = event.createdAt.getTime() + GIVE_UP_AFTER_MS;
    if (next.getTime() <= giveUpAt) [outcome, nextAttemptAt] = ['retrying', next];
    else outcome = 'failed';
  }
  const eventStatus = outcome === 'retrying' ? 'pending' : outcome;
  const completedAt = outcome === 'retrying' ? null : now;

  // One statement moves the event on and logs the attempt, only while the lease is still ours.
  const record = (db: Pick<Services['db']['prisma'], '$executeRaw'>) => db.$executeRaw`
    WITH moved AS (
      UPDATE webhook_events
      SET status = ${eventStatus}, attempts = ${attempt}, locked_until = NULL, last_error = ${sent.error}::text,
          next_attempt_at = COALESCE(${nextAttemptAt}::timestamptz, next_attempt_at), completed_at = ${completedAt}::timestamptz
      WHERE id = ${event.id} AND status = 'pending' AND locked_until = ${event.lockedUntil}
      RETURNING id)
    INSERT INTO webhook_deliveries
      (id, event_id, project_id, event_type, attempt, status, response_status, duration_ms, error, next_retry_at, created_at)
    SELECT ${uuidv7()}, id, ${event.projectId}, ${event.type}, ${attempt}, ${sent.ok ? 'succeeded' : 'failed'},
      ${sent.responseStatus}::int, ${sent.durationMs}, ${sent.error}::text, ${nextAttemptAt}::timestamptz, ${now}
    FROM moved`;

  const streakChanges = outcome === 'failed' || (outcome === 'succeeded' && event.failingSince !== null);
  if (!streakChanges) return (await record(services.db.prisma)) ? outcome : leaseLost(services, event);

  return services.db.prisma.$transaction(async (tx) => {
    if (!(await record(tx))) return leaseLost(services, event);
    if (outcome === 'succeeded') {
      await tx.$executeRaw`UPDATE webhooks SET failing_since = NULL WHERE project_id = ${event.projectId}`;
      return outcome;
    }
    // The first permanent failure of a streak tells the project's admins, once.
    const started = await tx.$executeRaw`
      UPDATE webhooks SET failing_since = ${now} WHERE project_id = ${event.projectId} AND failing_since IS NULL`;
    if (started) await notifyFailing(tx, event, sent.error, now);
    return outcome;
  });
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
  return Promise.all(claimed.map((event) => deliverClaimed(services, event, settings)));
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
      do {
        this.again = false;
        const room = Math.min(this.options.concurrency - this.inFlight.size, this.options.batchSize);
        if (room <= 0) {
          this.backlog = true;
          return;
        }
        const claimed = await claimDueEvents(this.services, room, this.options.timeoutMs);
        this.backlog = claimed.length === room;
        for (const event of claimed) this.track(deliverClaimed(this.services, event, this.options));
        if (this.backlog) this.again = true;
      } while (this.again && !this.stopped);
    } catch (error) {
      this.again = false;
      // The database may be briefly unavailable; the next poll tries again and leases expire on their own.
      this.services.logger.error({ err: error }, 'webhook worker: claiming failed');
    }
  }

  private track(delivery: Promise<unknown>): void {
    const tracked = delivery
      .catch((error) => this.services.logger.error({ err: error }, 'webhook worker: recording an attempt failed'))
      .finally(() => {
        this.inFlight.delete(tracked);
        if (this.backlog) this.wake();
      });
    this.inFlight.add(tracked);
  }
}

export const startWebhookWorker = (services: Services, options?: Partial<WorkerOptions>) => new WebhookWorker(services, options).start();
