import { checkpointHash, checkpointMessage, merkleRoot, type SignedCheckpoint } from '../../verify/ledger.mjs';
import type { Connection } from '../db/database.js';
import { isDatabaseUnavailable, outageMonitor } from '../db/unavailable.js';
import type { Services } from '../services.js';
import { projectWebhookEvent } from '../webhooks/outbox.js';
import { wakeWebhookWorker } from '../webhooks/worker.js';
import type { Worker } from '../workers.js';
import { ledgerSigner } from './keys.js';
import { receiptOfRow, type ReceiptRow } from '../receipts/service.js';
import { receiptLeafHash } from './leaf.js';

/** Receipts in one checkpoint at most: bounds a proof's work and an export's memory (more wait for the next). */
export const MAX_LEAVES = 10_000;

/** A receipt waiting to be sealed, from either queue. */
interface Waiting {
  id: string;
  /** As the database wrote it (text): handed back as it came, no Date made per receipt. */
  createdAt: string;
  /** Hashed by the receipt writer; undefined for a per-receipt row an older release queued without one. */
  leaf: Buffer | undefined;
}

// Rows an older release queued, one per receipt (the migrations' backfill, a rolling upgrade), oldest id first.
const LEGACY_WAITING_SQL = `
  SELECT receipt_id, receipt_created_at::text AS receipt_created_at, leaf_hash FROM ledger_pending
   WHERE project_id = $1 ORDER BY receipt_id COLLATE "C" LIMIT $2`;

/** The leaves of receipts queued without one (before the writer hashed them): hashed from the stored receipt. */
async function storedLeaves(tx: Connection, projectId: string, waiting: Waiting[]): Promise<Map<string, Buffer>> {
  const rows = await tx.query<ReceiptRow & { version_number: number }>(
    `SELECT r.id, r.version_id, v.number AS version_number, r.consent_hash, r.choices, r.installation_id, r.sdk_version, r.created_at,
            r.locale, r.gpc, r.jurisdiction, r.action, r.gpp, r.tc_string, r.addtl_consent, r.source, r.subject_hash
       FROM unnest($2::text[], $3::timestamptz[]) AS w(id, created_at)
       JOIN receipts AS r ON r.project_id = $1 AND r.id = w.id AND r.created_at = w.created_at
       JOIN consent_versions AS v ON v.id = r.version_id`,
    [projectId, waiting.map((w) => w.id), waiting.map((w) => w.createdAt)],
  );
  return new Map(rows.map((row) => [row.id, receiptLeafHash(receiptOfRow(row, row.version_number))]));
}

/** Up to `capacity` receipts of the writer's batches, whole batches oldest first; `more` when some were left. */
async function waitingBatches(tx: Connection, projectId: string, capacity: number) {
  // Sizes first (no arrays read), so a long backlog costs only the batches that fit.
  const sizes = await tx.query<{ id: string; count: number }>(
    'SELECT id::text AS id, count FROM ledger_pending_batches WHERE project_id = $1 ORDER BY id LIMIT $2',
    [projectId, capacity + 1],
  );
  const chosen: string[] = [];
  let total = 0;
  for (const batch of sizes) {
    if (total + batch.count > capacity) break;
    total += batch.count;
    chosen.push(batch.id);
  }
  const rows = chosen.length
    ? await tx.query<{ receipt_ids: string[]; receipt_created_ats: string[]; leaves: Uint8Array }>(
        `SELECT receipt_ids, receipt_created_ats::text[] AS receipt_created_ats, leaves FROM ledger_pending_batches
          WHERE project_id = $1 AND id = ANY($2::bigint[])`,
        [projectId, chosen],
      )
    : [];
  const waiting: Waiting[] = [];
  for (const row of rows) {
    // (The embedded engine gives bytea as a Uint8Array.)
    const leaves = Buffer.from(row.leaves);
    row.receipt_ids.forEach((id, i) => waiting.push({ id, createdAt: row.receipt_created_ats[i]!, leaf: leaves.subarray(i * 32, i * 32 + 32) }));
  }
  return { waiting, batchIds: chosen, more: chosen.length < sizes.length };
}

/**
 * Seals one project's waiting receipts (the writer's batches in ledger_pending_batches, written in the receipts'
 * own transaction with their leaf hashes; per-receipt rows of older releases in ledger_pending) into the next
 * checkpoint, all in one transaction:
 *   1. claim the project by locking its ledger head row, FOR UPDATE SKIP LOCKED: another instance sealing the
 *      same project is skipped, not waited for, and a crash releases the lock with the transaction;
 *   2. read up to MAX_LEAVES waiting receipts' leaves (whole batches, oldest first) from the queues alone (only
 *      rows an older release queued without a leaf are hashed from the receipts table) and order them by id
 *      (uuidv7: by time, then at random; byte order, as the verifier reads them);
 *   3. build the Merkle tree, sign the checkpoint, store it with its receipts' ids in leaf order, delete the
 *      batches it sealed, move the head, and queue the `ledger.checkpoint` webhook event (when the project asked).
 * Either all of it commits or none of it: a receipt is waiting or sealed, never both, never neither (it is queued
 * once, in the transaction that stores it, and leaves the queue in the one that seals it).
 * Returns the checkpoint and whether receipts beyond MAX_LEAVES still wait; null when nothing was waiting,
 * 'busy' when another sealer holds the project, 'retired' when a newer key took over from this instance's.
 */
export async function sealProject(
  services: Services,
  projectId: string,
): Promise<{ checkpoint: SignedCheckpoint; more: boolean } | null | 'busy' | 'retired'> {
  const signer = ledgerSigner(services);
  await services.db.query('INSERT INTO ledger_heads (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING', [projectId]);
  const sealed = await services.db.transaction(async (tx) => {
    const [head] = await tx.query<{ sequence: number; checkpoint_hash: string | null; checkpoint_webhook: boolean }>(
      'SELECT sequence, checkpoint_hash, checkpoint_webhook FROM ledger_heads WHERE project_id = $1 FOR UPDATE SKIP LOCKED',
      [projectId],
    );
    if (!head) return 'busy' as const;
    // The key's validity, held (FOR KEY SHARE) while signing: a newer key recorded meanwhile waits for this
    // transaction, then begins after this checkpoint (src/ledger/keys.ts). A retired key signs nothing.
    const [key] = await tx.query<{ not_before: Date | string | null; not_after: Date | string | null }>(
      'SELECT not_before, not_after FROM ledger_keys WHERE id = $1 FOR KEY SHARE',
      [signer.keyId],
    );
    if (!key || key.not_before === null || key.not_after !== null) return 'retired' as const;
    const legacyRows = await tx.query<{ receipt_id: string; receipt_created_at: string; leaf_hash: Uint8Array | null }>(LEGACY_WAITING_SQL, [
      projectId,
      MAX_LEAVES,
    ]);
    const legacy: Waiting[] = legacyRows.map((row) => ({
      id: row.receipt_id,
      createdAt: row.receipt_created_at,
      leaf: row.leaf_hash ? Buffer.from(row.leaf_hash) : undefined,
    }));
    const batches = await waitingBatches(tx, projectId, MAX_LEAVES - legacy.length);
    const waiting = [...legacy, ...batches.waiting].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (!waiting.length) return null;
    const unhashed = legacy.filter((w) => !w.leaf);
    const stored = unhashed.length ? await storedLeaves(tx, projectId, unhashed) : new Map<string, Buffer>();
    const leaves = waiting.map((w) => {
      const leaf = w.leaf ?? stored.get(w.id);
      // A receipt and its queue row are written in one transaction: a queued receipt without its row cannot
      // be hashed, and sealing must stop rather than skip it.
      if (!leaf) throw new Error(`ledger: waiting receipt ${w.id} of project ${projectId} not found`);
      return leaf;
    });

    const body = {
      projectId,
      sequence: head.sequence + 1,
      previous: head.checkpoint_hash,
      root: merkleRoot(leaves).toString('hex'),
      count: waiting.length,
      firstReceiptId: waiting[0]!.id,
      lastReceiptId: waiting.at(-1)!.id,
      // Never before the key's validity began (a clock behind the instance that began it).
      createdAt: new Date(Math.max(services.now().getTime(), new Date(key.not_before).getTime())).toISOString(),
    };
    const checkpoint: SignedCheckpoint = { ...body, keyId: signer.keyId, signature: signer.sign(checkpointMessage(body)) };
    const hash = checkpointHash(body);
    // One statement stores the checkpoint with its receipts, removes them from the queues and moves the head.
    await tx.query(
      `WITH stored AS (
         INSERT INTO ledger_checkpoints (project_id, sequence, previous, root, count, first_receipt_id, last_receipt_id, created_at, hash, key_id,
                                         signature, receipt_ids, receipt_created_ats)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text[], $13::timestamptz[])),
       batches AS (DELETE FROM ledger_pending_batches WHERE project_id = $1 AND id = ANY($14::bigint[])),
       legacy AS (DELETE FROM ledger_pending WHERE project_id = $1 AND receipt_id = ANY($15::text[]))
       UPDATE ledger_heads SET sequence = $2, checkpoint_hash = $9 WHERE project_id = $1`,
      [
        projectId,
        body.sequence,
        body.previous,
        body.root,
        body.count,
        body.firstReceiptId,
        body.lastReceiptId,
        body.createdAt,
        hash,
        checkpoint.keyId,
        checkpoint.signature,
        waiting.map((w) => w.id),
        waiting.map((w) => w.createdAt),
        batches.batchIds,
        legacy.map((w) => w.id),
      ],
    );
    const more = batches.more || legacy.length === MAX_LEAVES;
    // Operators who keep roots outside our reach take them from their webhook, when they asked (docs/ledger.md).
    if (!head.checkpoint_webhook) return { checkpoint, more, queued: false };
    const event = projectWebhookEvent(projectId, 'ledger.checkpoint', checkpoint, new Date(body.createdAt));
    const queued = await tx.query(event.sql, event.params);
    return { checkpoint, more, queued: queued.length > 0 };
  });
  if (sealed === null || sealed === 'busy' || sealed === 'retired') return sealed;
  if (sealed.queued) wakeWebhookWorker();
  return { checkpoint: sealed.checkpoint, more: sealed.more };
}

/** Seals every project with waiting receipts; returns the checkpoints made. Tests call it instead of waiting. */
export async function sealDue(services: Services): Promise<SignedCheckpoint[]> {
  const projects = await services.db.query<{ project_id: string }>(
    'SELECT project_id FROM ledger_pending_batches UNION SELECT project_id FROM ledger_pending',
  );
  const made: SignedCheckpoint[] = [];
  for (const { project_id: projectId } of projects) {
    try {
      for (;;) {
        const sealed = await sealProject(services, projectId);
        if (sealed === 'retired') {
          services.logger.error(
            { keyId: ledgerSigner(services).keyId },
            'ledger: this instance signs with a retired key (a newer one took over): it seals nothing until it is given the current key',
          );
          return made;
        }
        if (sealed === null || sealed === 'busy') break;
        made.push(sealed.checkpoint);
        if (!sealed.more) break;
      }
    } catch (error) {
      // One project's failure must not hold back every other tenant's sealing; an outage ends the round.
      if (isDatabaseUnavailable(error)) throw error;
      services.logger.error({ err: error, projectId }, 'ledger: sealing a project failed');
    }
  }
  return made;
}

const workers = new WeakMap<Services, Worker>();

/** The sealing worker of a server's services (the bench stops it to measure the consent POST without it). */
export const sealWorkerOf = (services: Services) => workers.get(services);

/** Seals every LEDGER_SEAL_INTERVAL_MS (default 5 s), so a receipt is sealed well within a minute of its commit. */
export function ledgerSealWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  // Through an outage a round fails (logged once by the outage monitor) and the next one tries again.
  const timer = setInterval(() => {
    if (stopped) return;
    running ??= sealDue(services)
      .catch((error) => {
        if (!outageMonitor(services).report(error)) services.logger.error({ err: error }, 'ledger: sealing failed');
      })
      .finally(() => (running = undefined));
  }, services.config.ledger.sealIntervalMs);
  timer.unref();
  const worker: Worker = {
    name: 'ledger-seal',
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
  workers.set(services, worker);
  return worker;
}
