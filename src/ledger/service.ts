import { Readable } from 'node:stream';
import { z } from 'zod';
import { leafHash, merkleTree, type SignedCheckpoint } from '../../verify/ledger.mjs';
import { changesOf, recordAudit } from '../audit/record.js';
import { AppError, notFound, validationFailed } from '../errors.js';
import { receiptWindows } from '../receipts/ids.js';
import { exportedReceipt, receiptOfRow, type ExportRequest, type ReceiptRow } from '../receipts/service.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';

/** The ledger export's first line names its format; consent-verify refuses any other version. */
export const LEDGER_EXPORT_VERSION = 1;
export const WELL_KNOWN_KEYS_PATH = '/.well-known/consent-ledger-keys.json';

interface CheckpointRow {
  project_id: string;
  sequence: number;
  previous: string | null;
  root: string;
  count: number;
  first_receipt_id: string;
  last_receipt_id: string;
  created_at: Date | string;
  key_id: string;
  signature: string;
}

const CHECKPOINT_COLUMNS = 'project_id, sequence, previous, root, count, first_receipt_id, last_receipt_id, created_at, key_id, signature';

const wireCheckpoint = (row: CheckpointRow): SignedCheckpoint => ({
  projectId: row.project_id,
  sequence: row.sequence,
  previous: row.previous,
  root: row.root,
  count: row.count,
  firstReceiptId: row.first_receipt_id,
  lastReceiptId: row.last_receipt_id,
  createdAt: new Date(row.created_at).toISOString(),
  keyId: row.key_id,
  signature: row.signature,
});

const listInput = z.object({
  limit: z.number().int().min(1, 'Must be 1 to 200').max(200, 'Must be 1 to 200').default(50),
  cursor: z.string().optional(),
});

/** Cursor: the sequence of a page's last checkpoint. Opaque to clients. */
const encodeCursor = (sequence: number) => Buffer.from(`s${sequence}`).toString('base64url');
function decodeCursor(cursor: string): number | null {
  const match = /^s(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : null;
}

/** A project's checkpoints, newest first, by keyset on the sequence. */
export async function listCheckpoints(services: Services, projectId: string, input: unknown) {
  const data = parseInput(listInput, input ?? {});
  const before = data.cursor === undefined ? undefined : decodeCursor(data.cursor);
  if (before === null) throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
  const rows = await services.db.query<CheckpointRow>(
    `SELECT ${CHECKPOINT_COLUMNS} FROM ledger_checkpoints WHERE project_id = $1 AND sequence < $2 ORDER BY sequence DESC LIMIT $3`,
    [projectId, before ?? 2 ** 31 - 1, data.limit + 1],
  );
  const page = rows.slice(0, data.limit).map(wireCheckpoint);
  return { checkpoints: page, nextCursor: rows.length > data.limit ? encodeCursor(page.at(-1)!.sequence) : null };
}

/**
 * The receipts one checkpoint sealed, in leaf order, as exported (what their leaves hash): from the ids the
 * checkpoint holds, or from `ledger_leaves` for a checkpoint an older release sealed (its ids are empty).
 */
async function sealedReceipts(services: Services, projectId: string, sequence: number, versionNumber: (id: string) => number) {
  const rows = await services.db.query<ReceiptRow>(
    `WITH leaves AS (
       SELECT s.id, s.created_at, s.n - 1 AS leaf_index
         FROM ledger_checkpoints AS c, unnest(c.receipt_ids, c.receipt_created_ats) WITH ORDINALITY AS s(id, created_at, n)
        WHERE c.project_id = $1 AND c.sequence = $2
       UNION ALL
       SELECT receipt_id, receipt_created_at, leaf_index FROM ledger_leaves WHERE project_id = $1 AND sequence = $2)
     SELECT r.id, r.version_id, r.consent_hash, r.choices, r.installation_id, r.sdk_version, r.created_at, r.locale, r.gpc,
            r.jurisdiction, r.action, r.gpp, r.tc_string, r.addtl_consent, r.source, r.subject_hash
       FROM leaves AS l JOIN receipts AS r ON r.project_id = $1 AND r.created_at = l.created_at AND r.id = l.id
      ORDER BY l.leaf_index`,
    [projectId, sequence],
  );
  return rows.map((row) => exportedReceipt(receiptOfRow(row, versionNumber(row.version_id))));
}

// The checkpoint that sealed a receipt, and its leaf: in `ledger_leaves` when an older release sealed it, else the
// first checkpoint, in order of its last receipt id, whose id range holds it and whose ids include it (ranges
// overlap only around receipts committed after a checkpoint sealed younger ones, so few are looked into).
const SEALED_AT_SQL = `
  SELECT sequence, leaf_index FROM ledger_leaves WHERE project_id = $1 AND receipt_id = $2
  UNION ALL
  (SELECT c.sequence, p.leaf_index
     FROM ledger_checkpoints AS c, LATERAL (SELECT array_position(c.receipt_ids, $2::text) - 1 AS leaf_index) AS p
    WHERE c.project_id = $1 AND c.last_receipt_id COLLATE "C" >= $2 AND c.first_receipt_id COLLATE "C" <= $2 AND p.leaf_index IS NOT NULL
    ORDER BY c.last_receipt_id COLLATE "C" LIMIT 1)
  LIMIT 1`;

async function versionNumbers(services: Services, projectId: string) {
  const versions = await services.db.query<{ id: string; number: number }>('SELECT id, number FROM consent_versions WHERE project_id = $1', [projectId]);
  const numberOf = new Map(versions.map((v) => [v.id, v.number]));
  return (id: string) => numberOf.get(id)!;
}

export const receiptNotSealed = () =>
  new AppError('receipt_not_sealed', 'The receipt is not sealed yet: receipts are sealed into a checkpoint within a minute of being recorded; try again shortly');

/**
 * What a third party needs to check one receipt without us: the receipt as exported, its leaf's inclusion
 * path (RFC 9162) and the signed checkpoint whose root it leads to. 404 for a receipt the project does not
 * have; 409 `receipt_not_sealed` for one recorded too recently to be in a checkpoint yet.
 */
export async function receiptProof(services: Services, projectId: string, receiptId: string) {
  // Receipt ids are uuids: anything else (including text PostgreSQL cannot hold) is simply not one of ours.
  if (!/^[0-9A-Za-z-]{1,64}$/.test(receiptId)) throw notFound('Receipt');
  // Bounded by the time the id carries (src/receipts/ids.ts): one partition of the receipts' key.
  const [window] = await receiptWindows(services.db, [receiptId]);
  const [exists] = window
    ? await services.db.query('SELECT 1 FROM receipts WHERE project_id = $1 AND created_at BETWEEN $2 AND $3 AND id = $4', [projectId, window.from, window.to, receiptId])
    : [];
  if (!exists) throw notFound('Receipt');
  const [leaf] = await services.db.query<{ sequence: number; leaf_index: number }>(SEALED_AT_SQL, [projectId, receiptId]);
  if (!leaf) throw receiptNotSealed();
  const [row] = await services.db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM ledger_checkpoints WHERE project_id = $1 AND sequence = $2`, [
    projectId,
    leaf.sequence,
  ]);
  const receipts = await sealedReceipts(services, projectId, leaf.sequence, await versionNumbers(services, projectId));
  const tree = merkleTree(receipts.map(leafHash));
  return {
    receipt: receipts[leaf.leaf_index]!,
    proof: {
      leafIndex: leaf.leaf_index,
      treeSize: tree.size,
      leafHash: leafHash(receipts[leaf.leaf_index]).toString('hex'),
      path: tree.path(leaf.leaf_index).map((hash) => hash.toString('hex')),
    },
    checkpoint: wireCheckpoint(row!),
  };
}

const CHECKPOINT_BATCH = 100;

/**
 * The ledger export (`format=ledger`): a header line, then per checkpoint (oldest first, created in
 * [from, to)) its receipts in leaf order, each with its inclusion path, followed by the signed checkpoint;
 * an `end` line with the totals. A pull stream holding one checkpoint's receipts at a time (at most
 * MAX_LEAVES), so memory stays flat however long the ledger is. docs/ledger.md describes every line.
 */
export function exportLedger(services: Services, request: ExportRequest): Readable {
  const { projectId } = request;
  return Readable.from(
    (async function* () {
      yield line({
        type: 'ledger',
        version: LEDGER_EXPORT_VERSION,
        projectId,
        from: request.from?.toISOString() ?? null,
        to: request.to.toISOString(),
        exportedAt: services.now().toISOString(),
        keys: services.config.publicBaseUrl + WELL_KNOWN_KEYS_PATH,
      });
      const versionNumber = await versionNumbers(services, projectId);
      let after = 0;
      let checkpoints = 0;
      let receipts = 0;
      for (;;) {
        const rows = await services.db.query<CheckpointRow>(
          `SELECT ${CHECKPOINT_COLUMNS} FROM ledger_checkpoints
            WHERE project_id = $1 AND sequence > $2 AND created_at >= $3 AND created_at < $4
            ORDER BY sequence LIMIT ${CHECKPOINT_BATCH}`,
          [projectId, after, request.from ?? new Date(0), request.to],
        );
        for (const row of rows) {
          const sealed = await sealedReceipts(services, projectId, row.sequence, versionNumber);
          const tree = merkleTree(sealed.map(leafHash));
          yield sealed
            .map((receipt, leafIndex) => line({ type: 'receipt', leafIndex, path: tree.path(leafIndex).map((h) => h.toString('hex')), receipt }))
            .join('');
          yield line({ type: 'checkpoint', checkpoint: wireCheckpoint(row) });
          checkpoints++;
          receipts += sealed.length;
        }
        if (rows.length < CHECKPOINT_BATCH) break;
        after = rows.at(-1)!.sequence;
      }
      yield line({ type: 'end', checkpoints, receipts });
    })(),
    { objectMode: false },
  );
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

export interface LedgerSettings {
  /** Send each checkpoint to the project webhook as `ledger.checkpoint`. */
  checkpointWebhook: boolean;
}

const settingsInput = z.object({ checkpointWebhook: z.boolean({ message: 'Must be true or false' }) }).strict();

export async function getLedgerSettings(services: Services, projectId: string): Promise<LedgerSettings> {
  const [head] = await services.db.query<{ checkpoint_webhook: boolean }>('SELECT checkpoint_webhook FROM ledger_heads WHERE project_id = $1', [projectId]);
  return { checkpointWebhook: head?.checkpoint_webhook ?? false };
}

/**
 * Opts the project in or out of `ledger.checkpoint` webhook events. Off by default: receivers written for the
 * contract get only `consent.updated`. Kept on the ledger head row, which sealing reads under its lock.
 */
export async function updateLedgerSettings(services: Services, projectId: string, input: unknown): Promise<LedgerSettings> {
  const data = parseInput(settingsInput, input ?? {});
  return services.db.prisma.$transaction(async (tx) => {
    const before = await tx.ledgerHead.findUnique({ where: { projectId }, select: { checkpointWebhook: true } });
    await tx.ledgerHead.upsert({
      where: { projectId },
      create: { projectId, checkpointWebhook: data.checkpointWebhook },
      update: { checkpointWebhook: data.checkpointWebhook },
    });
    const project = await tx.project.findUniqueOrThrow({ where: { id: projectId }, select: { organizationId: true } });
    await recordAudit(tx, {
      action: 'ledger.settings_updated',
      organizationId: project.organizationId,
      projectId,
      target: { type: 'project', id: projectId },
      changes: changesOf({ checkpointWebhook: before?.checkpointWebhook ?? false }, data, ['checkpointWebhook']),
    });
    return { checkpointWebhook: data.checkpointWebhook };
  });
}
