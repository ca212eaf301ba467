import { z } from 'zod';
import { AUDIT_PAGE_MAX, exportAuditCsv } from '../../src/audit/list.js';
import { AUDIT_ACTIONS } from '../../src/audit/record.js';
import { errorResponse } from '../errors.js';
import { route, type RestResponse, type RouteDef } from '../route.js';
import { ErrorBody, sessionErrors, timestamp } from '../schemas.js';

const AuditEvent = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    projectId: z.string().nullable(),
    actor: z.object({
      id: z.string().nullable(),
      email: z.string().nullable(),
      via: z.string().nullable().describe('"admin-cli" when the admin tool acted (id and email are null then); null for operators'),
    }),
    action: z.enum(AUDIT_ACTIONS),
    target: z.object({ type: z.string(), id: z.string() }),
    changes: z.record(z.string(), z.object({ before: z.unknown(), after: z.unknown() })),
    requestId: z.string().nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'AuditEvent' });

const FORMATS = ['json', 'csv'] as const;

/** `limit` arrives as text; numbers go to GraphQL as Int, anything else fails its coercion as validation_failed. */
const intOrRaw = (value: string | undefined) => (value !== undefined && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

export const auditRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/platform/orgs/:orgId/audit-log',
    summary:
      'The audit log of operator mutations, newest first, by cursor (Admin or above). format=csv downloads every event ' +
      'matching projectId/action (limit and cursor ignored), streamed, formula cells neutralised. Unknown action, bad limit ' +
      'or unknown format: 400 validation_failed, checked after access (docs/audit.md).',
    auth: 'session',
    operation: 'AuditLog',
    queryParams: z.object({
      limit: z.number().int().min(1).max(AUDIT_PAGE_MAX).default(50).optional(),
      cursor: z.string().optional().describe('nextCursor of the previous page'),
      projectId: z.string().optional(),
      action: z.enum(AUDIT_ACTIONS).optional(),
      format: z.enum(FORMATS).optional().describe('json (default) or csv'),
    }),
    variables: ({ params, query }) => ({
      organizationId: params.orgId,
      // The CSV export reads its own pages; the operation only checks access and the filters.
      limit: query.format === 'csv' ? 1 : intOrRaw(query.limit),
      cursor: query.format === 'csv' ? undefined : query.cursor,
      projectId: query.projectId,
      action: query.action,
    }),
    respond: (data, { params, query, services }): RestResponse => {
      const format = query.format ?? 'json';
      if (!(FORMATS as readonly string[]).includes(format)) {
        return errorResponse('validation_failed', 'Validation failed', {
          details: [{ path: ['format'], message: `Must be one of ${FORMATS.join(', ')}` }],
        });
      }
      if (format === 'json') return { status: 200, body: data.auditLog };
      return {
        status: 200,
        headers: {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': `attachment; filename="audit-log-${params.orgId}.csv"`,
          'Cache-Control': 'no-store',
        },
        stream: exportAuditCsv(services.db.prisma, params.orgId!, { projectId: query.projectId, action: query.action }),
      };
    },
    responses: {
      200: {
        description: '{ events, nextCursor } (nextCursor null on the last page); with format=csv a text/csv attachment',
        content: {
          'application/json': z.object({ events: z.array(AuditEvent), nextCursor: z.string().nullable() }),
          'text/csv': z.string().describe('format=csv: every event of the filter, newest first (formula cells neutralised)'),
        },
      },
      400: { description: 'Unknown action or format, bad limit or cursor (validation_failed)', schema: ErrorBody },
      ...sessionErrors,
    },
  }),
];
