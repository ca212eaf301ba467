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

interface Waiting {
  receipt_id: string;
  /** As text: handed back to the database as it came, no Date made per receipt. */
  receipt_created_at: string;
  /** Hashed by the receipt writer; null when an older release queued it. */
  leaf_hash: Buffer | null;
}

// The waiting receipts of a project, oldest id first ("C" collation: byte order, as the verifier sorts them).
const WAITING_SQL = `
  SELECT receipt_id, receipt_created_at::text AS receipt_created_at, leaf_hash FROM ledger_pending
   WHERE project_id = $1 ORDER BY receipt_id COLLATE "C" LIMIT $2`;

/** The leaves of receipts queued without one (before the writer hashed them): hashed from the stored receipt. */
async function storedLeaves(tx: Connection, projectId: string, waiting: Waiting[]): Promise<Map<string, Buffer>> {
  const rows = await tx.query<ReceiptRow & { version_number: number }>(
    `SELECT r.id, r.version_id, v.number AS version_number, r.consent_hash, r.choices, r.installation_id, r.sdk_version, r.created_at,
            r.locale, r.gpc, r.jurisdiction, r.action, r.gpp
       FROM unnest($2::text[], $3::timestamptz[]) AS w(id, created_at)
       JOIN receipts AS r ON r.project_id = $1 AND r.id = w.id AND r.created_at = w.created_at
       JOIN consent_versions AS v ON v.id = r.version_id`,
    [projectId, waiting.map((w) => w.receipt_id), waiting.map((w) => w.receipt_created_at)],
  );
  return new Map(rows.map((row) => [row.id, receiptLeafHash(receiptOfRow(row, row.version_number))]));
}

/**
 * Seals one project's waiting receipts (ledger_pending, written in each receipt's own transaction with the
 * receipt's leaf hash) into the next checkpoint, all in one transaction:
 *   1. claim the project by locking its ledger head row, FOR UPDATE SKIP LOCKED: another instance sealing the
 *      same project is skipped, not waited for, and a crash releases the lock with the transaction;
 *   2. read up to MAX_LEAVES waiting receipts' leaves, ordered by id (uuidv7: by time, then at random), from the
 *      queue alone (only rows queued by an older release are hashed from the receipts table);
 *   3. build the Merkle tree, sign the checkpoint, store it with one ledger_leaves row per receipt
 *      (primary key (project, receipt): a receipt cannot be sealed twice), delete their waiting rows, move the
 *      head, and queue the `ledger.checkpoint` webhook event (when the project asked for it).
 * Either all of it commits or none of it: a receipt is waiting or sealed, never both, never neither.
 * Returns the checkpoint, null when nothing was waiting, 'busy' when another sealer holds the project.
 */
export async function sealProject(services: Services, projectId: string): Promise<SignedCheckpoint | null | 'busy'> {
  const signer = ledgerSigner(services);
  await services.db.query('INSERT INTO ledger_heads (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING', [projectId]);
  const sealed = await services.db.transaction(async (tx) => {
    const [head] = await tx.query<{ sequence: number; checkpoint_hash: string | null; checkpoint_webhook: boolean }>(
      'SELECT sequence, checkpoint_hash, checkpoint_webhook FROM ledger_heads WHERE project_id = $1 FOR UPDATE SKIP LOCKED',
      [projectId],
    );
    if (!head) return 'busy' as const;
    const waiting = await tx.query<Waiting>(WAITING_SQL, [projectId, MAX_LEAVES]);
    if (!waiting.length) return null;
    const unhashed = waiting.filter((w) => w.leaf_hash === null);
    const stored = unhashed.length ? await storedLeaves(tx, projectId, unhashed) : new Map<string, Buffer>();
    const leaves = waiting.map((w) => {
      // (The embedded engine gives bytea as a Uint8Array.)
      const leaf = w.leaf_hash ? Buffer.from(w.leaf_hash) : stored.get(w.receipt_id);
      // A receipt and its queue row are written in one transaction: a queued receipt without its row cannot
      // be hashed, and sealing must stop rather than skip it.
      if (!leaf) throw new Error(`ledger: waiting receipt ${w.receipt_id} of project ${projectId} not found`);
      return leaf;
    });

    const body = {
      projectId,
      sequence: head.sequence + 1,
      previous: head.checkpoint_hash,
      root: merkleRoot(leaves).toString('hex'),
      count: waiting.length,
      firstReceiptId: waiting[0]!.receipt_id,
      lastReceiptId: waiting.at(-1)!.receipt_id,
      createdAt: services.now().toISOString(),
    };
    const checkpoint: SignedCheckpoint = { ...body, keyId: signer.keyId, signature: signer.sign(checkpointMessage(body)) };
    const hash = checkpointHash(body);
    const ids = waiting.map((w) => w.receipt_id);
    await tx.query(
      `INSERT INTO ledger_checkpoints (project_id, sequence, previous, root, count, first_receipt_id, last_receipt_id, created_at, hash, key_id, signature)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [projectId, body.sequence, body.previous, body.root, body.count, body.firstReceiptId, body.lastReceiptId, body.createdAt, hash, checkpoint.keyId, checkpoint.signature],
    );
    // One statement records the leaves, removes them from the queue and moves the head.
    await tx.query(
      `WITH leaves AS (
         INSERT INTO ledger_leaves (project_id, receipt_id, sequence, leaf_index, receipt_created_at)
         SELECT $1, id, $2, ordinality - 1, created_at
           FROM unnest($3::text[], $4::timestamptz[]) WITH ORDINALITY AS l(id, created_at, ordinality)),
       done AS (DELETE FROM ledger_pending WHERE project_id = $1 AND receipt_id = ANY($3::text[]))
       UPDATE ledger_heads SET sequence = $2, checkpoint_hash = $5 WHERE project_id = $1`,
      [projectId, body.sequence, ids, waiting.map((w) => w.receipt_created_at), hash],
    );
    // Operators who keep roots outside our reach take them from their webhook, when they asked (docs/ledger.md).
    if (!head.checkpoint_webhook) return { checkpoint, queued: false };
    const event = projectWebhookEvent(projectId, 'ledger.checkpoint', checkpoint, new Date(body.createdAt));
    const queued = await tx.query(event.sql, event.params);
    return { checkpoint, queued: queued.length > 0 };
  });
  if (sealed === null || sealed === 'busy') return sealed;
  if (sealed.queued) wakeWebhookWorker();
  return sealed.checkpoint;
}

/** Seals every project with waiting receipts; returns the checkpoints made. Tests call it instead of waiting. */
export async function sealDue(services: Services): Promise<SignedCheckpoint[]> {
  const projects = await services.db.query<{ project_id: string }>('SELECT DISTINCT project_id FROM ledger_pending');
  const made: SignedCheckpoint[] = [];
  for (const { project_id: projectId } of projects) {
    try {
      for (;;) {
        const checkpoint = await sealProject(services, projectId);
        if (checkpoint === null || checkpoint === 'busy') break;
        made.push(checkpoint);
        if (checkpoint.count < MAX_LEAVES) break;
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
