// GraphQL types and the root query of the audit log (docs/audit.md). `Organization.auditLog` (the
// connection) lives with the nested graph in graph.ts; this root field backs the REST route.
import type { AuditEventView } from '../../src/audit/list.js';
import { listAuditLog } from '../../src/audit/list.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

const AuditActor = builder.simpleObject('AuditActor', {
  description: 'Who acted, as they were then (the e-mail is a snapshot); `via` names the tool when no operator did',
  fields: (t) => ({
    id: t.id({ nullable: true }),
    email: t.string({ nullable: true }),
    via: t.string({ nullable: true, description: '"admin-cli" for the admin tool (npm run admin), null for operator requests' }),
  }),
});

export const AuditEvent = builder.objectRef<AuditEventView>('AuditEvent').implement({
  interfaces: [Node],
  description: 'One operator mutation, append-only. `changes` holds before/after of the changed fields; never a secret',
  fields: (t) => ({
    id: t.exposeID('id'),
    organizationId: t.exposeID('organizationId'),
    projectId: t.exposeID('projectId', { nullable: true }),
    actor: t.field({ type: AuditActor, resolve: (event) => event.actor }),
    action: t.exposeString('action', { description: 'e.g. project.created, consent.published, api_key.revoked' }),
    target: t.field({ type: 'JSON', description: '{ type, id } of what changed', resolve: (event) => event.target }),
    changes: t.field({ type: 'JSON', description: '{ field: { before, after } }', resolve: (event) => event.changes }),
    requestId: t.string({ nullable: true, resolve: (event) => event.requestId }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const AuditLogPage = builder.simpleObject('AuditLogPage', {
  fields: (t) => ({ events: t.field({ type: [AuditEvent] }), nextCursor: t.string({ nullable: true }) }),
});

builder.queryField('auditLog', (t) =>
  t.field({
    type: AuditLogPage,
    description: "The organization's audit log, newest first (Admin or above)",
    args: {
      organizationId: t.arg.id({ required: true }),
      limit: t.arg.int(),
      cursor: t.arg.string(),
      projectId: t.arg.id(),
      action: t.arg.string({ description: 'One action name (docs/audit.md); unknown is validation_failed' }),
    },
    authScopes: (_root, args) => ({ orgRole: { orgId: String(args.organizationId), role: 'ADMIN' } }),
    resolve: (_root, { organizationId, ...input }, ctx) => listAuditLog(ctx.prisma, String(organizationId), input),
  }),
);
