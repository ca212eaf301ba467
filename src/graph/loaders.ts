// Per-request DataLoaders of the nested operator graph: whatever number of projects a
// query walks, each nested list costs a fixed number of SQL statements (one batch per field).
import DataLoader from 'dataloader';
import { consentConfigurations } from '../consent/configuration.js';
import { listPublishEvidenceOf } from '../evidence/package.js';
import type { Context } from '../context.js';
import { apiKeySelect } from '../keys/service.js';
import { receiptView, receiptViewSelect, type ReceiptView } from '../receipts/service.js';
import { toConnection, type PageAfter, type PageArgs } from './connection.js';

interface PageKey extends PageArgs {
  parentId: string;
}

/**
 * A page of children per parent, for many parents in one statement: a LATERAL subquery per
 * parent walks the (parent, time, id) index with its own `after` and limit, then the rows are
 * read whole by id. Table and column names are constants of this file, never input.
 */
interface PageSource<Row> {
  table: string;
  parentColumn: string;
  timeColumn: string;
  descending: boolean;
  read(ids: string[]): Promise<Row[]>;
  key(row: Row): PageAfter;
}

function pageLoader<Row extends { id: string }>(ctx: Context, source: PageSource<Row>) {
  const order = source.descending ? 'DESC' : 'ASC';
  const past = source.descending ? '<' : '>';
  const sql = `
    SELECT page.id, p.ord FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::text[]) WITH ORDINALITY
      AS p(parent, lim, after_at, after_id, ord)
    CROSS JOIN LATERAL (
      SELECT t.id, t.${source.timeColumn} AS at FROM ${source.table} t
      WHERE t.${source.parentColumn} = p.parent
        AND (p.after_at IS NULL OR (t.${source.timeColumn}, t.id) ${past} (p.after_at, p.after_id))
      ORDER BY t.${source.timeColumn} ${order}, t.id ${order} LIMIT p.lim
    ) page
    ORDER BY p.ord, page.at ${order}, page.id ${order}`;
  return new DataLoader<PageKey, ReturnType<typeof toConnection<Row>>, string>(
    async (keys) => {
      const found = await ctx.services.db.query<{ id: string; ord: string | number }>(sql, [
        keys.map((key) => key.parentId),
        keys.map((key) => key.first + 1),
        keys.map((key) => key.after?.at.toISOString() ?? null),
        keys.map((key) => key.after?.id ?? null),
      ]);
      const rows = found.length ? await source.read(found.map((row) => row.id)) : [];
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

/** Receipts by id as the graph shows them (with their version's number). */
export async function readReceiptViews(prisma: Context['prisma'], ids: string[]): Promise<ReceiptView[]> {
  const rows = await prisma.receipt.findMany({ where: { id: { in: ids } }, select: receiptViewSelect });
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
      read: (ids) => prisma.consentVersion.findMany({ where: { id: { in: ids } } }),
      key: (row) => ({ at: row.publishedAt, id: row.id }),
    }),
    apiKeys: pageLoader(ctx, {
      table: 'api_keys',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: false,
      read: (ids) => prisma.apiKey.findMany({ where: { id: { in: ids } }, select: apiKeySelect }),
      key: (row) => ({ at: row.createdAt, id: row.id }),
    }),
    deliveries: pageLoader(ctx, {
      table: 'webhook_deliveries',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: true,
      read: (ids) => prisma.webhookDelivery.findMany({ where: { id: { in: ids } } }),
      key: (row) => ({ at: row.createdAt, id: row.id }),
    }),
    receipts: pageLoader<ReceiptView>(ctx, {
      table: 'receipts',
      parentColumn: 'project_id',
      timeColumn: 'created_at',
      descending: true,
      read: (ids) => readReceiptViews(prisma, ids),
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
