// Per-request DataLoaders of the nested operator graph: whatever number of projects a
// query walks, each nested list costs a fixed number of SQL statements (one batch per field).
import DataLoader from 'dataloader';
import { consentConfigurations } from '../consent/configuration.js';
import { listPublishEvidenceOf } from '../evidence/package.js';
import type { Context } from '../context.js';
import { apiKeySelect } from '../keys/service.js';
import type { ReceiptWindow } from '../receipts/ids.js';
import { receiptView, receiptViewSelect, type ReceiptView } from '../receipts/service.js';
import { readScanArtifacts, readScanArtifactsByName, type ScanArtifactRow } from '../scanner/service.js';
import { toConnection, type PageAfter, type PageArgs } from './connection.js';

interface PageKey extends PageArgs {
  parentId: string;
}

/**
 * A page of children per parent, for many parents in one statement: a LATERAL subquery per
 * parent walks the (parent, time, id) index with its own `after` and limit, then the rows are
 * read whole by id (and time: receipts are partitioned by it). Table and column names are
 * constants of this file, never input.
 */
interface PageSource<Row> {
  table: string;
  parentColumn: string;
  timeColumn: string;
  descending: boolean;
  read(found: PageAfter[]): Promise<Row[]>;
  key(row: Row): PageAfter;
}

function pageLoader<Row extends { id: string }>(ctx: Context, source: PageSource<Row>) {
  const order = source.descending ? 'DESC' : 'ASC';
  const past = source.descending ? '<' : '>';
  // The time bound repeats the row comparison's first column, so it also bounds the index scan and prunes partitions.
  const start = source.descending ? 'infinity' : '-infinity';
  const sql = `
    SELECT page.id, page.at, p.ord FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::text[]) WITH ORDINALITY
      AS p(parent, lim, after_at, after_id, ord)
    CROSS JOIN LATERAL (
      SELECT t.id, t.${source.timeColumn} AS at FROM ${source.table} t
      WHERE t.${source.parentColumn} = p.parent
        AND t.${source.timeColumn} ${past}= coalesce(p.after_at, '${start}')
        AND (p.after_at IS NULL OR (t.${source.timeColumn}, t.id) ${past} (p.after_at, p.after_id))
      ORDER BY t.${source.timeColumn} ${order}, t.id ${order} LIMIT p.lim
    ) page
    ORDER BY p.ord, page.at ${order}, page.id ${order}`;
  return new DataLoader<PageKey, ReturnType<typeof toConnection<Row>>, string>(
    async (keys) => {
      const found = await ctx.services.db.query<{ id: string; at: Date | string; ord: string | number }>(sql, [
        keys.map((key) => key.parentId),
        keys.map((key) => key.first + 1),
        keys.map((key) => key.after?.at.toISOString() ?? null),
        keys.map((key) => key.after?.id ?? null),
      ]);
      const rows = found.length ? await source.read(found.map((row) => ({ id: row.id, at: new Date(row.at) }))) : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      const perKey = keys.map((): Row[] => []);
      for (const { id, ord } of found) perKey[Number(ord) - 1]!.push(byId.get(id)!);
      return keys.map((key, index) => toConnection(perKey[index]!, key, source.key));
    },
    { cacheKeyFn: (key) => JSON.stringify([key.parentId, key.first, key.after?.at.toISOString(), key.after?.id]) },
  );
}

/** One loader per parent id from a `where parent in (…)` read. */
function byParent<Row, Value>(read: (ids: string[]) => Promise<Row[]>, parentOf: (row: Row) => string, pick: (rows: Row[]) => Value) {
  return new DataLoader<string, Value>(async (ids) => {
    const rows = await read([...ids]);
    const grouped = new Map<string, Row[]>(ids.map((id) => [id, []]));
    for (const row of rows) grouped.get(parentOf(row))?.push(row);
    return ids.map((id) => pick(grouped.get(id)!));
  });
}

/**
 * Receipts by id as the graph shows them (with their version's number). Each id comes with the time its receipt
 * can have (src/receipts/ids.ts), so the read is pruned to its partitions and served by the created_at index.
 */
export async function readReceiptViews(prisma: Context['prisma'], windows: readonly ReceiptWindow[]): Promise<ReceiptView[]> {
  if (!windows.length) return [];
  const rows = await prisma.receipt.findMany({
    where: { OR: windows.map(({ id, from, to }) => ({ id, createdAt: { gte: from, lte: to } })) },
    select: receiptViewSelect,
  });
  return rows.map(receiptView);
}

function createLoaders(ctx: Context) {
  const prisma = ctx.prisma;
  return {
    organization: byParent(
      (ids) => prisma.organization.findMany({ where: { id: { in: ids } } }),
      (row) => row.id,
      (rows) => rows[0] ?? null,
    ),
    members: byParent(
      (ids) =>
        prisma.membership.findMany({
          where: { organizationId: { in: ids } },
          select: { id: true, organizationId: true, role: true, createdAt: true, user: { select: { id: true, email: true, name: true } } },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        }),
      (row) => row.organizationId,
      (rows) => rows,
    ),
    consent: new DataLoader((ids: readonly string[]) => consentConfigurations(prisma, ids)),
    evidence: new DataLoader(async (ids: readonly string[]) => {
      const byProject = await listPublishEvidenceOf(prisma, ids);
      return ids.map((id) => byProject.get(id)!);
    }),
    // A scan's screenshots and HAR files, without their bytes, for any number of scans in one statement.
    scanArtifacts: byParent(
      (ids) => readScanArtifacts(prisma, ids),
      (row) => row.scanId,
      (rows) => rows,
    ),
    // One of them with its bytes (`Scan.artifact(name)`), for any number of scans in one statement.
    scanArtifact: new DataLoader<{ scanId: string; name: string }, ScanArtifactRow | null, string>(
      async (keys) => {
        const rows = await readScanArtifactsByName(prisma, keys);
        return keys.map((key) => rows.find((row) => row.scanId === key.scanId && row.name === key.name) ?? null);
      },
      { cacheKeyFn: (key) => `${key.scanId} ${key.name}` },
    ),
    webhook: byParent(
      (ids) => prisma.webhook.findMany({ where: { projectId: { in: ids } } }),
      (row) => row.projectId,
      (rows) => rows[0] ?? null,
    ),
    versions: pageLoader(ctx, {
      table: 'consent_versions',
      parentColumn: 'project_id',
      timeColumn: 'published_at',
      descending: true,
      read: (found) => prisma.consentVersion.findMany({ where: { id: { in: found.map((row) => row.id) } } }),
      key: (row) => ({ at: row.publishedAt, id: row.id }),
    }),
    apiKeys: pageLoader(ctx, {
      table: 'api_keys',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: false,
      read: (found) => prisma.apiKey.findMany({ where: { id: { in: found.map((row) => row.id) } }, select: apiKeySelect }),
      key: (row) => ({ at: row.createdAt, id: row.id }),
    }),
    deliveries: pageLoader(ctx, {
      table: 'webhook_deliveries',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: true,
      read: (found) => prisma.webhookDelivery.findMany({ where: { id: { in: found.map((row) => row.id) } } }),
      key: (row) => ({ at: row.createdAt, id: row.id }),
    }),
    receipts: pageLoader<ReceiptView>(ctx, {
      table: 'receipts',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: true,
      read: (found) => readReceiptViews(prisma, found.map(({ id, at }) => ({ id, from: at, to: at }))),
      key: (row) => ({ at: row.createdAt, id: row.id }),
    }),
  };
}

export type GraphLoaders = ReturnType<typeof createLoaders>;

const perRequest = new WeakMap<Context, GraphLoaders>();

/** The graph's loaders of this request, made on first use (REST and SDK requests never pay for them). */
export function graphLoaders(ctx: Context): GraphLoaders {
  let loaders = perRequest.get(ctx);
  if (!loaders) perRequest.set(ctx, (loaders = createLoaders(ctx)));
  return loaders;
}
