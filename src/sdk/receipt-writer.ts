import { Prisma } from '../generated/prisma/client.js';
import { isDatabaseUnavailable, serviceUnavailable } from '../db/unavailable.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import { metricsOf } from '../metrics/metrics.js';
import { receiptLeafHash } from '../ledger/leaf.js';
import { wakeWebhookWorker } from '../webhooks/worker.js';
import { rollupBuckets, type Decision } from '../stats/rollup.js';
import { isCheckViolation, isUniqueViolation, makeReceiptPartitions } from '../receipts/partitions.js';
import { bufferedUuidv7 } from '../receipts/ids.js';
import { sdkCache } from './cache.js';
import type { ReceiptAction, ReceiptSource } from './consent.js';
import { IdempotencyKeyTaken, rememberTaken, takenKeys, type Idempotency } from './idempotency.js';

type Tx = Prisma.TransactionClient;


/** A checked receipt, ready to store. */
export interface NewReceipt {
  id: string;
  projectId: string;
  versionId: string;
  versionNumber: number;
  consentHash: string;
  choices: Record<string, boolean>;
  installationId: string;
  sdkVersion: string | null;
  locale: string | null;
  gpc: boolean | null;
  /** Issue 16, each as the SDK sent it (null when it did not). */
  jurisdiction: string | null;
  action: ReceiptAction | null;
  gpp: string | null;
  /** Issue 39: the TC string and Google AC string (null when not sent). */
  tcString: string | null;
  addtlConsent: string | null;
  /** Issue 45: where it came from, as its SDK said (null when not sent). */
  source: ReceiptSource | null;
  /** The request's Idempotency-Key, taken in the receipt's own statement (null without one). */
  idempotency: Idempotency | null;
  /** Issue 47: the signed-in person's HMAC(project pepper, sub), or null (docs/subjects.md). */
  subjectHash: string | null;
  /** How it answered the version's optional purposes, for the analytics rollup. */
  decision: Decision;
  apiKeyId: string;
  createdAt: Date;
}

interface Pending {
  receipt: NewReceipt;
  done: () => void;
  failed: (error: unknown) => void;
  queuedAt: number;
}

export const MAX_BATCH = 256;
/**
 * Batches in flight at once: one, as a WAL writer does; the next batch gathers while it runs. Under HTTP load
 * receipts arrive one at a time, so every free slot wrote the first arrival at once: four slots kept batches at
 * about 5 receipts at 32 connections, and the database paid a statement per few. In quiet runs (git show 43a2011
 * -- bench/README.md) four → two → one took the database's CPU per receipt at 32 connections from 108-157 to 76-84 to
 * 60-75 µs, the service's from 97-132 to 83-96 to 79-107; its receipts per second rose by a quarter, then held
 * or rose by up to 15 %; p99 the same. One statement of up to 256 receipts at a time still allows more receipts a second
 * than the rest of the path (the service's CPU is the limit), and an idle writer writes a lone receipt at once.
 */
export const MAX_FLUSHES = 1;

/**
 * Group commit for consent receipts. Each receipt waits for the transaction
 * that stores it, so nothing is acknowledged before it is durable; receipts
 * that arrive while transactions are busy share the next one (one commit,
 * one fsync, one transaction set-up for many). When idle, a receipt is written
 * at once, so nobody waits for company.
 * Each transaction stores its receipts, their `consent.updated` outbox events,
 * their place in the ledger's queue (docs/ledger.md) and, for a project's first
 * receipt ever, the go-live notification.
 * The wait is bounded (extensions.md "Database unavailable"): at most
 * RECEIPT_QUEUE_LIMIT receipts wait for a transaction, none longer than
 * DATABASE_WAIT_MS; the rest are refused with 503 `service_unavailable` before
 * anything is written, so a slow database costs neither unbounded latency nor memory.
 */
export class ReceiptWriter {
  private queue: Pending[] = [];
  private flushing = 0;
  private scheduled = false;
  private expiry: NodeJS.Timeout | undefined;
  /** Receipts refused in the current overload, or null when none is going on (logged once each way). */
  private shed: number | null = null;
  /** Rollup shards held by running transactions (one per concurrent flush). */
  private busyShards = new Set<number>();
  /** Whether batches also update the analytics rollup; off only to measure its cost (bench/stats.ts). */
  rollup = true;
  /** Whether batches queue their receipts for the ledger; off only to measure its cost (bench/ledger.ts). */
  ledger = true;

  constructor(private readonly services: Services) {}

  /** Receipts waiting for a transaction (metrics). */
  get queueLength(): number {
    return this.queue.length;
  }

  write(receipt: NewReceipt): Promise<void> {
    if (this.queue.length >= this.services.config.receiptQueueLimit) {
      if (this.shed === null) this.services.logger.warn({ limit: this.services.config.receiptQueueLimit }, 'receipt queue full: refusing receipts');
      this.shed = (this.shed ?? 0) + 1;
      metricsOf(this.services)?.receiptsShed.inc();
      return Promise.reject(serviceUnavailable('Too many receipts are waiting for the database; try again shortly'));
    }
    return new Promise((done, failed) => {
      this.queue.push({ receipt, done, failed, queuedAt: performance.now() });
      this.schedule();
      this.expireLater();
    });
  }

  /** Refuses receipts that waited DATABASE_WAIT_MS without a transaction (none of them was written). */
  private expireLater(): void {
    if (this.expiry || !this.queue.length) return;
    const waitMs = this.services.config.databaseWaitMs;
    this.expiry = setTimeout(() => {
      this.expiry = undefined;
      const now = performance.now();
      let stale = 0;
      while (stale < this.queue.length && now - this.queue[stale]!.queuedAt >= waitMs) stale++;
      for (const p of this.queue.splice(0, stale)) p.failed(serviceUnavailable());
      if (stale) metricsOf(this.services)?.receiptsShed.inc(stale);
      this.expireLater();
    }, Math.max(1, waitMs - (performance.now() - this.queue[0]!.queuedAt)));
    this.expiry.unref();
  }

  private schedule(): void {
    if (this.scheduled || this.flushing >= MAX_FLUSHES || !this.queue.length) return;
    // Let receipts that arrive in the same tick join the batch.
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      while (this.flushing < MAX_FLUSHES && this.queue.length) void this.flush(this.nextBatch());
    });
  }

  /**
   * The next batch: up to MAX_BATCH waiting receipts, but never two with one Idempotency-Key (a statement must not
   * take a key twice). A repeat stays first in the queue for the next batch, whose statement then finds the key
   * taken and answers it with the first receipt (storeUntaken).
   */
  private nextBatch(): Pending[] {
    const batch = this.queue.splice(0, MAX_BATCH);
    let keys: Set<string> | undefined;
    let repeats: Pending[] | undefined;
    for (let i = 0; i < batch.length; i++) {
      const { idempotency, projectId } = batch[i]!.receipt;
      if (!idempotency) continue;
      const id = `${projectId}\0${idempotency.key}`;
      keys ??= new Set();
      if (!keys.has(id)) keys.add(id);
      else (repeats ??= []).push(...batch.splice(i--, 1));
    }
    if (repeats) this.queue.unshift(...repeats);
    return batch;
  }

  private async flush(batch: Pending[]): Promise<void> {
    this.flushing++;
    let shard = 0;
    while (this.busyShards.has(shard)) shard++;
    this.busyShards.add(shard);
    try {
      await this.store(batch.map((p) => p.receipt), shard);
      for (const p of batch) p.done();
    } catch (error) {
      // An outage fails the whole batch at once (one by one, each would wait for the database again).
      if (isDatabaseUnavailable(error)) for (const p of batch) p.failed(error);
      // A key another request took: those receipts are answered with its receipt, the rest written again.
      else if (isUniqueViolation(error) && batch.some((p) => p.receipt.idempotency)) await this.storeUntaken(batch, shard);
      else if (batch.length === 1) batch[0]!.failed(error);
      // One bad receipt must not fail its neighbours: retry them one by one.
      else await this.storeEach(batch, shard);
    } finally {
      this.busyShards.delete(shard);
      this.flushing--;
      if (this.shed !== null && this.queue.length <= this.services.config.receiptQueueLimit / 2) {
        this.services.logger.info({ refused: this.shed }, 'receipt queue accepting again');
        this.shed = null;
      }
      this.schedule();
    }
  }

  /**
   * After the batch failed on a taken Idempotency-Key (the statement wrote nothing): the receipts whose key is
   * stored are rejected with the receipt that took it (IdempotencyKeyTaken, answered as the first 201), the
   * others written again as one batch, and one by one if that fails too.
   */
  private async storeUntaken(batch: Pending[], shard: number): Promise<void> {
    let taken;
    try {
      taken = await takenKeys(
        this.services,
        batch.flatMap((p) => (p.receipt.idempotency ? [{ projectId: p.receipt.projectId, key: p.receipt.idempotency.key }] : [])),
      );
    } catch (lookupError) {
      for (const p of batch) p.failed(lookupError);
      return;
    }
    const rest: Pending[] = [];
    for (const p of batch) {
      const answer = p.receipt.idempotency && taken.get(`${p.receipt.projectId}\0${p.receipt.idempotency.key}`);
      if (!answer) rest.push(p);
      else {
        rememberTaken(this.services, p.receipt.projectId, p.receipt.idempotency!.key, answer);
        p.failed(new IdempotencyKeyTaken(answer));
      }
    }
    // Nothing taken: the key expired (deleted above) or the violation was not a key's; once more decides.
    if (!rest.length) return;
    try {
      await this.store(rest.map((p) => p.receipt), shard);
      for (const p of rest) p.done();
    } catch (again) {
      if (isDatabaseUnavailable(again) || rest.length === 1) for (const p of rest) p.failed(again);
      else await this.storeEach(rest, shard);
    }
  }

  /** Each receipt in a statement of its own; a taken key is answered as in storeUntaken. */
  private storeEach(batch: Pending[], shard: number): Promise<unknown> {
    return Promise.all(
      batch.map((p) =>
        this.store([p.receipt], shard).then(p.done, (error) =>
          p.receipt.idempotency && isUniqueViolation(error) ? this.storeUntaken([p], shard) : p.failed(error),
        ),
      ),
    );
  }

  private async store(receipts: NewReceipt[], shard: number): Promise<void> {
    try {
      await this.storeOnce(receipts, shard);
    } catch (error) {
      if (!isCheckViolation(error)) throw error;
      // A month with no partition yet (they are made months ahead by src/receipts/partitions.ts; this is a server
      // that was off for months, or a moved clock): make the batch's, and try once more. The transaction rolled
      // back, so nothing was written; a receipt a CHECK refuses fails the same way again.
      await makeReceiptPartitions(this.services, receipts.map((r) => r.createdAt));
      await this.storeOnce(receipts, shard);
    }
  }

  private async storeOnce(receipts: NewReceipt[], shard: number): Promise<void> {
    const cache = sdkCache(this.services);
    const projectIds = [...new Set(receipts.map((r) => r.projectId))].sort();
    const unknownLive = projectIds.filter((id) => !cache.knowsReceipts(id));
    const keyed = receipts.some((r) => r.idempotency);
    const { sql, params } = batchStatement(receipts, shard, { ledger: this.ledger, rollup: this.rollup, idempotency: keyed });
    let queued: number;
    if (unknownLive.length) {
      // Until this instance knows a project is live, its batch also asks whether this is the project's first
      // receipt and notifies its members: a transaction, the project row locked (see goLiveProjects).
      queued = await this.services.db.prisma.$transaction(async (tx) => {
        const firstReceiptOf = await this.goLiveProjects(tx, unknownLive);
        const [row] = await tx.$queryRawUnsafe<{ queued: number }[]>(sql, ...params);
        for (const projectId of firstReceiptOf) {
          const first = receipts.find((r) => r.projectId === projectId)!;
          await notifyGoLive(tx, projectId, first.createdAt);
        }
        return row!.queued;
      });
    } else {
      // The common case: one statement, committed on its own (a statement is atomic), prepared once per connection.
      // An interactive transaction cost four more round trips per batch (BEGIN, a webhook lookup, the outbox
      // insert, COMMIT) and Prisma's machinery around each: bench/sdk-consent-profile.ts (git show f4bc316 --
      // bench/README.md).
      const [row] = await this.services.db.query<{ queued: number }>(sql, params, { name: batchStatementName(this, keyed) });
      queued = row!.queued;
    }
    const metrics = metricsOf(this.services);
    if (metrics) {
      metrics.receiptsWritten.inc(receipts.length);
      metrics.receiptBatchSize.observe(receipts.length);
    }
    for (const id of projectIds) cache.rememberReceipts(id);
    for (const r of keyed ? receipts : []) {
      if (r.idempotency) rememberTaken(this.services, r.projectId, r.idempotency.key, { requestHash: r.idempotency.requestHash, receiptId: r.id, createdAt: r.createdAt });
    }
    // Committed: deliver now rather than at the worker's next poll.
    if (queued > 0) wakeWebhookWorker();
  }

  /**
   * Which of these projects get their first receipt in this transaction. The
   * project row is locked (NO KEY UPDATE, which receipts' foreign-key checks do
   * not wait for) so two transactions cannot both see "no receipts yet"; it is
   * only asked until this instance knows the project is live.
   */
  private async goLiveProjects(tx: Tx, projectIds: string[]): Promise<string[]> {
    const first: string[] = [];
    for (const projectId of projectIds) {
      await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId} FOR NO KEY UPDATE`;
      const [row] = await tx.$queryRaw<{ live: boolean }[]>`SELECT EXISTS (SELECT 1 FROM receipts WHERE project_id = ${projectId}) AS live`;
      if (!row!.live) first.push(projectId);
    }
    return first;
  }
}

/** The prepared statement's name: its text depends on the writer's two measurement switches and on keys. */
const batchStatementName = (writer: ReceiptWriter, keyed: boolean) => `store-receipts-${writer.ledger ? 'l' : ''}${writer.rollup ? 'r' : ''}${keyed ? 'i' : ''}`;

/**
 * The statement that stores a batch: its receipts; their place in the ledger's queue, one row per project with
 * each receipt's leaf hashed from what is acknowledged (committed means it will be sealed, src/ledger/seal.ts);
 * their `consent.updated` outbox events where the project has an enabled webhook (the event built from the same
 * row, so it says what was stored); and the batch summed into the analytics rollup (src/stats/rollup.ts).
 * Columns travel as arrays (one statement whatever the batch's size, so its plan is kept). It answers how many
 * events it queued.
 */
export function batchStatement(
  receipts: NewReceipt[],
  shard: number,
  parts: { ledger: boolean; rollup: boolean; idempotency?: boolean },
): { sql: string; params: unknown[] } {
  const column = <K extends keyof NewReceipt>(key: K) => receipts.map((r) => r[key]);
  const params: unknown[] = [
    column('id'),
    column('projectId'),
    column('versionId'),
    column('versionNumber'),
    column('consentHash'),
    receipts.map((r) => JSON.stringify(r.choices)),
    column('installationId'),
    column('sdkVersion'),
    column('apiKeyId'),
    receipts.map((r) => r.createdAt.toISOString()),
    column('locale'),
    column('gpc'),
    column('jurisdiction'),
    column('action'),
    column('gpp'),
    receipts.map(() => bufferedUuidv7()),
    column('tcString'),
    column('addtlConsent'),
    receipts.map((r) => (r.source ? JSON.stringify(r.source) : null)),
    column('subjectHash'),
    // Issue 45, only in a batch that carries a key: each receipt's Idempotency-Key and its body's hash (hex).
    ...(parts.idempotency
      ? [receipts.map((r) => r.idempotency?.key ?? null), receipts.map((r) => r.idempotency?.requestHash ?? null)]
      : []),
  ];
  const param = (value: unknown) => `$${params.push(value)}`;
  const ledger = parts.ledger
    ? `, queued AS (
        -- One queue row per project of the batch, not per receipt. The batch's leaves come as one bytea, 32 bytes
        -- per receipt in batch order (cheaper to send than an array), and are kept in the ids' order.
        INSERT INTO ledger_pending_batches (project_id, count, receipt_ids, receipt_created_ats, leaves)
        SELECT project_id, count(*), array_agg(id ORDER BY n), array_agg(created_at::timestamptz ORDER BY n),
               string_agg(substring(${param(Buffer.concat(receipts.map(receiptLeafHash)))}::bytea FROM n::int * 32 - 31 FOR 32), ''::bytea ORDER BY n)
          FROM input GROUP BY project_id)`
    : '';
  // Issue 45: the batch's Idempotency-Keys, taken by the statement that stores their receipts. A key already
  // stored fails the whole statement on the primary key (after the other statement commits, when they race), so
  // a key is never taken without its receipt nor a receipt stored twice for one key; the writer then answers
  // those receipts with the stored ones (storeUntaken). Only in batches that carry a key: the others' statement
  // is the same as before.
  const idempotency = parts.idempotency
    ? `, keys AS (
        INSERT INTO sdk_idempotency_keys (project_id, key, request_hash, receipt_id, created_at)
        SELECT project_id, idempotency_key, decode(request_hash, 'hex'), id, created_at::timestamptz FROM input WHERE idempotency_key IS NOT NULL)`
    : '';
  // From a one-row subquery: the function returns void, which a client cannot read as a column.
  const rollup = parts.rollup ? ` FROM (SELECT consent_stats_add(${param(shard)}::smallint, ${param(JSON.stringify(rollupBuckets(receipts)))}::json)) AS rollup` : '';
  const sql = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                           $10::text[], $11::text[], $12::boolean[], $13::text[], $14::text[], $15::text[], $16::text[],
                           $17::text[], $18::text[], $19::text[], $20::text[]${parts.idempotency ? ', $21::text[], $22::text[]' : ''})
        WITH ORDINALITY AS r(id, project_id, version_id, version_number, consent_hash, choices, installation_id, sdk_version, api_key_id,
             created_at, locale, gpc, jurisdiction, action, gpp, event_id, tc_string, addtl_consent, source, subject_hash${parts.idempotency ? ', idempotency_key, request_hash' : ''}, n)),
    stored AS (
      INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at, locale, gpc,
                            jurisdiction, action, gpp, tc_string, addtl_consent, source, subject_hash)
      SELECT id, project_id, version_id, consent_hash, choices::jsonb, installation_id, sdk_version, api_key_id, created_at::timestamptz, locale, gpc,
             jurisdiction, action, gpp, tc_string, addtl_consent, source::jsonb, subject_hash
        FROM input)${ledger}${idempotency},
    outbox AS (
      -- The webhook's data as src/webhooks/outbox.ts documents it; the optional fields only when the SDK sent them.
      INSERT INTO webhook_events (id, project_id, type, payload, created_at, next_attempt_at)
      SELECT i.event_id, i.project_id, 'consent.updated',
             jsonb_build_object('id', i.event_id, 'type', 'consent.updated', 'createdAt', i.created_at, 'data',
               jsonb_build_object('projectId', i.project_id, 'receiptId', i.id, 'versionId', i.version_id, 'versionNumber', i.version_number,
                                  'consentHash', i.consent_hash, 'choices', i.choices::jsonb, 'installationId', i.installation_id)
               || jsonb_strip_nulls(jsonb_build_object('locale', i.locale, 'gpc', i.gpc, 'jurisdiction', i.jurisdiction, 'action', i.action, 'gpp', i.gpp,
                                                       'subjectHash', i.subject_hash, -- issue 47
                                                       -- issue 39, as tcfOf (src/receipts/service.ts) shows it
                                                       'tcf', CASE WHEN i.tc_string IS NOT NULL THEN
                                                         jsonb_strip_nulls(jsonb_build_object('tcString', i.tc_string, 'addtlConsent', i.addtl_consent)) END,
                                                       'source', i.source::jsonb))),
             i.created_at::timestamptz, i.created_at::timestamptz
        FROM input AS i JOIN webhooks AS w ON w.project_id = i.project_id AND w.enabled
      RETURNING 1)
    SELECT (SELECT count(*) FROM outbox)::int AS queued${rollup}`;
  return { sql, params };
}

async function notifyGoLive(tx: Tx, projectId: string, createdAt: Date) {
  const project = await tx.project.findUniqueOrThrow({ where: { id: projectId }, select: { organizationId: true, name: true } });
  await notifyMembers(tx, {
    organizationId: project.organizationId,
    projectId,
    product: 'consent',
    type: 'consent.first_receipt',
    title: `${project.name} is live: first consent receipt recorded`,
    body: 'The SDK recorded the first visitor decision for this project.',
    link: `/projects/${projectId}/receipts`,
    createdAt,
  });
}

const writers = new WeakMap<Services, ReceiptWriter>();

export function receiptWriter(services: Services): ReceiptWriter {
  let writer = writers.get(services);
  if (!writer) {
    writer = new ReceiptWriter(services);
    writers.set(services, writer);
  }
  return writer;
}
