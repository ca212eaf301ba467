import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { CSV_CAST } from '../csv.js';
import { z } from 'zod';
import { validationFailed } from '../errors.js';
import type { Database } from '../db/database.js';
import { readFromReplica } from '../db/replica.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import type { ReceiptSource } from '../sdk/consent.js';

/** A receipt as operators read it (list and export). */
export interface ReceiptView {
  id: string;
  versionId: string;
  versionNumber: number;
  consentHash: string;
  choices: unknown;
  installationId: string;
  sdkVersion: string | null;
  createdAt: Date;
  /** extensions.md section 3; null when the SDK did not send them (left out of the wire shapes then). */
  locale: string | null;
  gpc: boolean | null;
  /** Issue 16: the location code the SDK acted on, the visitor's action, the GPP string; null when not sent. */
  jurisdiction: string | null;
  action: string | null;
  gpp: string | null;
  /** Issue 39: the IAB TC string and Google AC string; null when not sent (docs/tcf.md). */
  tcString: string | null;
  addtlConsent: string | null;
  /** Issue 45: where it came from, as its SDK said; null when not sent. */
  source: ReceiptSource | null;
  /** Issue 47: HMAC(project pepper, sub) of the signed-in person it was made for; null when none (docs/subjects.md). */
  subjectHash: string | null;
}

const timestamp = z.iso.datetime({ offset: true, message: 'Must be an ISO 8601 timestamp' }).transform((value) => new Date(value));

const listInput = z.object({
  limit: z.number().int().min(1, 'Must be 1 to 200').max(200, 'Must be 1 to 200').default(50),
  cursor: z.string().optional(),
  from: timestamp.optional(),
  to: timestamp.optional(),
  installationId: z.string().max(64).optional(),
});

/** Keyset position: the last receipt of a page, as (createdAt, id). Opaque to clients. */
interface Position {
  createdAt: Date;
  id: string;
}

const encodeCursor = (p: Position) => Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');

function decodeCursor(cursor: string): Position | null {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const date = new Date(createdAt as string);
    if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(date.getTime())) return null;
    return { createdAt: date, id };
  } catch {
    return null;
  }
}

/** The columns of a receipt as lists and the graph show it, with its version's number (`receiptView` maps them). */
export const receiptViewSelect = {
  id: true,
  versionId: true,
  consentHash: true,
  choices: true,
  installationId: true,
  sdkVersion: true,
  createdAt: true,
  locale: true,
  gpc: true,
  jurisdiction: true,
  action: true,
  gpp: true,
  tcString: true,
  addtlConsent: true,
  source: true,
  subjectHash: true,
  version: { select: { number: true } },
} as const;

export const receiptView = <Row extends { version: { number: number }; source: unknown }>({ version, source, ...row }: Row) => ({
  ...row,
  source: sourceOf(source),
  versionNumber: version.number,
});

/**
 * A stored source in the documented key order (JSONB keeps its own order): sdk, sdkVersion, platform, then
 * appId and appVersion when sent.
 */
type WithNullApp = Omit<ReceiptSource, 'appId' | 'appVersion'> & { appId?: string | null; appVersion?: string | null };

export function sourceOf(stored: unknown): ReceiptSource | null {
  if (stored === null || stored === undefined) return null;
  // Absent app fields are null when the source comes back through GraphQL.
  const { sdk, sdkVersion, platform, appId, appVersion } = (typeof stored === 'string' ? JSON.parse(stored) : stored) as WithNullApp;
  return { sdk, sdkVersion, platform, ...(appId != null && { appId }), ...(appVersion != null && { appVersion }) };
}

/**
 * A page of receipts, newest first, by keyset on (createdAt, id): receipts
 * recorded while paging never shift later pages, so nothing repeats and nothing
 * that existed when paging began is skipped. `from` is inclusive, `to` exclusive.
 */
export async function listReceipts(services: Services, projectId: string, input: unknown) {
  const data = parseInput(listInput, input ?? {});
  const after = data.cursor === undefined ? undefined : decodeCursor(data.cursor);
  if (after === null) throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
  const read = (db: Database) =>
    db.prisma.receipt.findMany({
      where: {
        projectId,
        ...(data.installationId !== undefined && { installationId: data.installationId }),
        // `lte` repeats what the OR says so the cursor bounds the index scan: the OR alone is a filter, read
        // from the newest receipt down to the cursor (a page deep in a large project took 15x the first).
        createdAt: { gte: data.from, lt: data.to, ...(after && { lte: after.createdAt }) },
        ...(after && { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: data.limit + 1,
      select: receiptViewSelect,
    });
  // A page that ends before the replica's horizon (a cursor's or `to`'s) may come from the replica: it holds
  // every receipt of that range. The first page (up to now) comes from the primary, so a receipt just recorded
  // is listed, and paging never skips one that existed when paging began (docs/scaling.md, "Read replicas").
  const newest = after?.createdAt ?? data.to;
  const rows = newest ? await readFromReplica(services, read, { through: newest }) : await read(services.db);
  const page: ReceiptView[] = rows.slice(0, data.limit).map(receiptView);
  const last = page.at(-1);
  return { receipts: page, nextCursor: rows.length > data.limit && last ? encodeCursor(last) : null };
}

// `ledger`: receipts with their checkpoints and inclusion paths (src/ledger/service.ts, docs/ledger.md).
export const EXPORT_FORMATS = ['csv', 'ndjson', 'ledger'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const exportInput = z.object({
  format: z.enum(EXPORT_FORMATS, { message: 'Must be csv, ndjson or ledger' }).default('csv'),
  from: timestamp.optional(),
  to: timestamp.optional(),
});

/** What an export will stream: decided (and authorised) by the GraphQL operation, streamed by the REST layer. */
export interface ExportRequest {
  projectId: string;
  format: ExportFormat;
  from: Date | null;
  to: Date;
  filename: string;
}

export function planExport(services: Services, projectId: string, input: unknown): ExportRequest {
  const data = parseInput(exportInput, input ?? {});
  // Without `to`, the export covers everything recorded up to the moment it starts (inclusive),
  // and receipts recorded while it streams are not chased.
  const to = data.to ?? new Date(services.now().getTime() + 1);
  const stamp = to.toISOString().slice(0, 10);
  return { projectId, format: data.format, from: data.from ?? null, to, filename: data.format === 'ledger' ? `ledger-${projectId}-${stamp}.ndjson` : `receipts-${projectId}-${stamp}.${data.format}` };
}

export const EXPORT_BATCH = 2_000;
// locale and gpc (extensions.md section 3), then jurisdiction, action and gpp (issue 16) come last,
// so the contract's columns keep their places.
export const EXPORT_COLUMNS = [
  'id',
  'versionId',
  'versionNumber',
  'consentHash',
  'choices',
  'installationId',
  'sdkVersion',
  'createdAt',
  'locale',
  'gpc',
  'jurisdiction',
  'action',
  'gpp',
  'tcString',
  'addtlConsent',
  // Issue 47: the signed-in person's subject hash (empty when none).
  'subjectHash',
  // Issue 45: the receipt's source, one column per field (empty when the SDK sent none).
  'sourceSdk',
  'sourceSdkVersion',
  'sourcePlatform',
  'sourceAppId',
  'sourceAppVersion',
] as const;

/** A receipts row as SQL returns it (the export and the ledger read receipts this way). */
export interface ReceiptRow {
  id: string;
  version_id: string;
  consent_hash: string;
  choices: unknown;
  installation_id: string;
  sdk_version: string | null;
  created_at: Date | string;
  locale: string | null;
  gpc: boolean | null;
  jurisdiction: string | null;
  action: string | null;
  gpp: string | null;
  tc_string: string | null;
  addtl_consent: string | null;
  source: unknown;
  subject_hash: string | null;
}

export function receiptOfRow(row: ReceiptRow, versionNumber: number): ReceiptView {
  return {
    id: row.id,
    versionId: row.version_id,
    versionNumber,
    consentHash: row.consent_hash,
    choices: typeof row.choices === 'string' ? JSON.parse(row.choices) : row.choices,
    installationId: row.installation_id,
    sdkVersion: row.sdk_version,
    createdAt: new Date(row.created_at),
    locale: row.locale,
    gpc: row.gpc,
    jurisdiction: row.jurisdiction,
    action: row.action,
    gpp: row.gpp,
    tcString: row.tc_string,
    addtlConsent: row.addtl_consent,
    source: sourceOf(row.source),
    subjectHash: row.subject_hash,
  };
}

/**
 * The receipts of an export, oldest first, read in batches by keyset. It is a
 * pull stream: the next batch is read only when the client has taken the last,
 * so memory stays flat however many receipts there are.
 */
async function* exportBatches(services: Services, request: ExportRequest): AsyncGenerator<ReceiptView[]> {
  const versions = await services.db.query<{ id: string; number: number }>('SELECT id, number FROM consent_versions WHERE project_id = $1', [
    request.projectId,
  ]);
  const numberOf = new Map(versions.map((v) => [v.id, v.number]));
  let after: Position = { createdAt: request.from ?? new Date(0), id: '' };
  // Oldest first: the replica serves the part of the range it is known to hold (before its horizon), the
  // primary the rest, so the export is the primary's whatever the replica's lag (docs/scaling.md).
  let onPrimary = !services.replica;
  for (;;) {
    const horizon = onPrimary ? null : services.replica!.horizon();
    const fromReplica = horizon !== null && after.createdAt.getTime() < horizon.getTime();
    const upTo = fromReplica && horizon.getTime() < request.to.getTime() ? horizon : request.to;
    const params = [request.projectId, upTo, after.createdAt, after.id];
    // Each batch chooses again: a replica that goes away mid-export costs one batch read twice.
    const rows = fromReplica ? await readFromReplica(services, (db) => readBatch(db, params), { through: upTo }) : await readBatch(services.db, params);
    if (!fromReplica) onPrimary = true; // the horizon moves with the clock: chasing it would be many small batches
    const batch = rows.map((row) => receiptOfRow(row, numberOf.get(row.version_id)!));
    if (batch.length) yield batch;
    if (rows.length < EXPORT_BATCH) {
      if (upTo === request.to) return;
      onPrimary = true; // the replica's part is done; the newer rest comes from the primary
    }
    const last = batch.at(-1);
    if (last) after = { createdAt: last.createdAt, id: last.id };
  }
}

// The row comparison is an index condition of the key, so each partition before the position costs one probe
// that finds nothing. (Repeating it as `created_at >= $3` would prune those, but let the planner walk the
// created_at index of a large project's month instead, reading every project's receipts: 8x slower.)
const BATCH_SQL = `SELECT id, version_id, consent_hash, choices, installation_id, sdk_version, created_at, locale, gpc, jurisdiction, action, gpp,
       tc_string, addtl_consent, source, subject_hash
  FROM receipts
 WHERE project_id = $1 AND created_at < $2 AND (created_at, id) > ($3, $4)
 ORDER BY created_at, id
 LIMIT ${EXPORT_BATCH}`;

/**
 * One keyset batch. On PostgreSQL the batch runs with sorting disabled, so it always walks the
 * (project_id, created_at, id) key from the cursor: right after a bulk load, before statistics
 * exist, the planner would otherwise sort the whole project for every batch.
 */
function readBatch(db: Database, params: unknown[]): Promise<ReceiptRow[]> {
  if (db.kind !== 'postgres') return db.query<ReceiptRow>(BATCH_SQL, params);
  return db.withConnection(async (conn) => {
    await conn.exec('BEGIN READ ONLY; SET LOCAL enable_sort = off');
    try {
      return await conn.query<ReceiptRow>(BATCH_SQL, params);
    } finally {
      await conn.exec('COMMIT');
    }
  });
}

type Optional = 'locale' | 'gpc' | 'jurisdiction' | 'action' | 'gpp' | 'tcString' | 'addtlConsent' | 'source' | 'subjectHash';

/** `tcf: { tcString, addtlConsent? }` for a receipt that has a TC string; nothing otherwise (docs/tcf.md). */
export const tcfOf = ({ tcString, addtlConsent }: { tcString: string | null; addtlConsent: string | null }) =>
  tcString === null ? {} : { tcf: { tcString, ...(addtlConsent !== null && { addtlConsent }) } };

/**
 * A receipt on the wire: locale, gpc, jurisdiction, action, gpp, tcf and source only when recorded, so receipts of
 * contract clients keep the contract's shape.
 */
export const wireReceipt = <R extends Pick<ReceiptView, Optional>>({ locale, gpc, jurisdiction, action, gpp, tcString, addtlConsent, source, subjectHash, ...receipt }: R) => ({
  ...receipt,
  ...(locale !== null && { locale }),
  ...(gpc !== null && { gpc }),
  ...(jurisdiction !== null && { jurisdiction }),
  ...(action !== null && { action }),
  ...(gpp !== null && { gpp }),
  ...tcfOf({ tcString, addtlConsent }),
  ...(source != null && { source: sourceOf(source) }),
  ...(subjectHash !== null && { subjectHash }),
});

/**
 * A receipt as the ndjson export writes it: also the JSON whose canonical form is its ledger leaf
 * (docs/ledger.md), so the export and the ledger can never disagree about what a receipt says.
 */
export const exportedReceipt = (receipt: ReceiptView) => ({ ...wireReceipt(receipt), createdAt: receipt.createdAt.toISOString() });
const wire = exportedReceipt;

/** The export as a byte stream (CSV through csv-stringify, or one JSON object per line). */
export function exportReceipts(services: Services, request: ExportRequest): Readable {
  const batches = exportBatches(services, request);
  if (request.format === 'ndjson') {
    return Readable.from(
      (async function* () {
        for await (const batch of batches) yield batch.map((receipt) => `${JSON.stringify(wire(receipt))}\n`).join('');
      })(),
      { objectMode: false },
    );
  }
  const records = Readable.from(
    (async function* () {
      for await (const batch of batches) {
        for (const receipt of batch) yield {
            ...wire(receipt),
            choices: JSON.stringify(receipt.choices),
            locale: receipt.locale ?? '',
            gpc: receipt.gpc ?? '',
            jurisdiction: receipt.jurisdiction ?? '',
            action: receipt.action ?? '',
            gpp: receipt.gpp ?? '',
            tcString: receipt.tcString ?? '',
            addtlConsent: receipt.addtlConsent ?? '',
            source: undefined,
            sourceSdk: receipt.source?.sdk ?? '',
            sourceSdkVersion: receipt.source?.sdkVersion ?? '',
            sourcePlatform: receipt.source?.platform ?? '',
            sourceAppId: receipt.source?.appId ?? '',
            sourceAppVersion: receipt.source?.appVersion ?? '',
            subjectHash: receipt.subjectHash ?? '',
          };
      }
    })(),
  );
  // Visitor-supplied text (sdkVersion) reaches operators' spreadsheets: cells are neutralised (src/csv.ts).
  const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], cast: CSV_CAST });
  records.on('error', (error) => csv.destroy(error));
  return records.pipe(csv);
}
