// The audit log's read side: one organization's events, newest first, by keyset cursor over
// (created_at, id) — the same opaque cursors as the graph's connections (src/graph/connection.ts).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { CSV_CAST } from '../csv.js';
import { validationFailed } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { decodePageCursor, encodePageCursor, type PageAfter } from '../graph/connection.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { AUDIT_ACTIONS } from './record.js';

type Db = Services['db']['prisma'];

export interface AuditEventView {
  id: string;
  organizationId: string;
  projectId: string | null;
  /** `via` names the tool when no operator acted (the admin tool: "admin-cli"), else null. */
  actor: { id: string | null; email: string | null; via: string | null };
  action: string;
  target: unknown;
  changes: unknown;
  requestId: string | null;
  createdAt: Date;
}

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;

const filterFields = {
  projectId: z.string().min(1, 'Required').max(64).nullish(),
  action: z.enum(AUDIT_ACTIONS, { message: 'Unknown action: see docs/audit.md for the list' }).nullish(),
};
const listInput = z.object({
  limit: z.number().int().min(1, `Must be from 1 to ${AUDIT_PAGE_MAX}`).max(AUDIT_PAGE_MAX, `Must be from 1 to ${AUDIT_PAGE_MAX}`).nullish(),
  cursor: z.string().nullish(),
  ...filterFields,
});
const filterInput = z.object(filterFields);

export interface AuditQuery {
  projectId?: string | null;
  action?: string | null;
  after: PageAfter | null;
  take: number;
}

/** Reads `take` events after the cursor. `created_at <= c AND (created_at < c OR id < c.id)` keeps the index range tight. */
export async function readAuditEvents(db: Db, organizationId: string, query: AuditQuery): Promise<AuditEventView[]> {
  const where: Prisma.AuditEventWhereInput = {
    organizationId,
    ...(query.projectId && { projectId: query.projectId }),
    ...(query.action && { action: query.action }),
    ...(query.after && {
      createdAt: { lte: query.after.at },
      OR: [{ createdAt: { lt: query.after.at } }, { id: { lt: query.after.id } }],
    }),
  };
  const rows = await db.auditEvent.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: query.take });
  return rows.map(auditEventView);
}

/** A stored event as the API shows it (one organization's events: organizationId is set). */
export function auditEventView({ actorId, actorEmail, actorVia, organizationId, ...row }: Prisma.AuditEventGetPayload<object>): AuditEventView {
  return { ...row, organizationId: organizationId!, actor: { id: actorId, email: actorEmail, via: actorVia } };
}

/** GET /audit-log: `limit` (1..200, default 50), `cursor`, `projectId`, `action`; bad values are validation_failed. */
export async function listAuditLog(db: Db, organizationId: string, input: unknown) {
  const data = parseInput(listInput, input);
  const after = data.cursor == null ? null : decodePageCursor(data.cursor);
  if (data.cursor != null && !after) throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
  const take = data.limit ?? AUDIT_PAGE_DEFAULT;
  const rows = await readAuditEvents(db, organizationId, { ...data, after, take: take + 1 });
  const events = rows.slice(0, take);
  const last = events.at(-1);
  return { events, nextCursor: rows.length > take && last ? encodePageCursor(last.createdAt, last.id) : null };
}

/** The filters alone (the GraphQL connection pages with first/after). */
export const parseAuditFilter = (input: unknown) => parseInput(filterInput, input);

// actorVia (the admin tool's events) came later: it goes last, so the earlier columns keep their places.
export const AUDIT_CSV_COLUMNS = ['id', 'createdAt', 'organizationId', 'projectId', 'actorId', 'actorEmail', 'action', 'target', 'changes', 'requestId', 'actorVia'] as const;
const EXPORT_BATCH = 500;

/**
 * Every event matching the filters, newest first, as CSV in constant memory (pages of 500).
 * `target` and `changes` are JSON text; any cell a spreadsheet would run as a formula gets `'`.
 */
export function exportAuditCsv(db: Db, organizationId: string, filter: { projectId?: string | null; action?: string | null }): Readable {
  const records = Readable.from(
    (async function* () {
      let after: PageAfter | null = null;
      for (;;) {
        const batch = await readAuditEvents(db, organizationId, { ...filter, after, take: EXPORT_BATCH });
        for (const event of batch) {
          yield {
            id: event.id,
            createdAt: event.createdAt.toISOString(),
            organizationId: event.organizationId,
            projectId: event.projectId ?? '',
            actorId: event.actor.id ?? '',
            actorEmail: event.actor.email ?? '',
            actorVia: event.actor.via ?? '',
            action: event.action,
            target: JSON.stringify(event.target),
            changes: JSON.stringify(event.changes),
            requestId: event.requestId ?? '',
          };
        }
        if (batch.length < EXPORT_BATCH) return;
        const last = batch.at(-1)!;
        after = { at: last.createdAt, id: last.id };
      }
    })(),
  );
  const csv = stringify({ header: true, columns: [...AUDIT_CSV_COLUMNS], cast: CSV_CAST });
  records.on('error', (error) => csv.destroy(error));
  return records.pipe(csv);
}
