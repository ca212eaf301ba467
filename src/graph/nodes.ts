// Relay's global object identification (docs/graphql.md, "Refetching any object"): `node(id)` and `nodes(ids)`
// find objects by the ids REST already shows. Those are unique across tables (UUIDv7 everywhere), so an id
// carries no type prefix: one statement asks every table at once (each on its primary key, receipts on the time
// their ids carry) which one holds it and who owns it; then each object is authorised exactly as its type's own
// field does, and read in one statement per type. A query costs the same few statements for one id or a hundred.
import { auditEventView } from '../audit/list.js';
import { publicUser } from '../auth/accounts.js';
import type { Context } from '../context.js';
import { AppError, notFound, validationFailed } from '../errors.js';
import type { Role } from '../generated/prisma/client.js';
import { apiKeySelect } from '../keys/service.js';
import { INVITATION_SELECT } from '../organizations/invitations.js';
import { MEMBER_SELECT } from '../organizations/members.js';
import { receiptWindows, type ReceiptWindow } from '../receipts/ids.js';
import { readScansById } from '../scanner/service.js';
import { readReceiptViews } from './loaders.js';

export const MAX_NODES = 100;

type Prisma = Context['prisma'];

/**
 * Who may see an object: members of its organization or project with at least `role` (the role of the
 * type's own field: `organization(id)`, `project(id)`, `apiKeys(projectId)`, `Organization.members`, …),
 * or only the user it belongs to (`me`, `notifications`).
 */
type Owner = { organization: Role } | { project: Role } | { user: true };

interface NodeSource {
  /** Table and column names are constants of this file, never input. */
  table: string;
  ownerColumn: string;
  owner: Owner;
  /** The rows holding the ids $1 (default: the table's `WHERE id = ANY($1)`, on its primary key). */
  rows?: string;
  /** `receipts`: where each id's receipt can be (src/receipts/ids.ts), as the lookups need it. */
  read(prisma: Prisma, ids: string[], receipts: readonly ReceiptWindow[]): Promise<{ id: string }[]>;
}

/** Every type that implements Node, by GraphQL type name. */
export const NODE_SOURCES: Record<string, NodeSource> = {
  Organization: {
    table: 'organizations',
    ownerColumn: 'id',
    owner: { organization: 'VIEWER' },
    read: (prisma, ids) => prisma.organization.findMany({ where: { id: { in: ids } } }),
  },
  OrganizationMember: {
    table: 'memberships',
    ownerColumn: 'organization_id',
    owner: { organization: 'ADMIN' },
    read: (prisma, ids) => prisma.membership.findMany({ where: { id: { in: ids } }, select: MEMBER_SELECT }),
  },
  AuditEvent: {
    table: 'audit_events',
    ownerColumn: 'organization_id',
    owner: { organization: 'ADMIN' },
    read: async (prisma, ids) => (await prisma.auditEvent.findMany({ where: { id: { in: ids } } })).map(auditEventView),
  },
  Project: {
    table: 'projects',
    ownerColumn: 'id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.project.findMany({ where: { id: { in: ids } } }),
  },
  ConsentCategory: {
    table: 'categories',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.category.findMany({ where: { id: { in: ids } } }),
  },
  ConsentPurpose: {
    table: 'purposes',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.purpose.findMany({ where: { id: { in: ids } } }),
  },
  ConsentVersion: {
    table: 'consent_versions',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.consentVersion.findMany({ where: { id: { in: ids } } }),
  },
  ApiKey: {
    table: 'api_keys',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.apiKey.findMany({ where: { id: { in: ids } }, select: apiKeySelect }),
  },
  // Keyed (project_id, created_at, id) and partitioned by month: found by the time each id carries ($2, $3 hold
  // each id's window), through the created_at index of one partition.
  Receipt: {
    table: 'receipts',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    rows: 'unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS w(wanted, low, high) JOIN receipts ON created_at BETWEEN w.low AND w.high AND id = w.wanted',
    read: (prisma, _ids, receipts) => readReceiptViews(prisma, receipts),
  },
  WebhookDelivery: {
    table: 'webhook_deliveries',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: (prisma, ids) => prisma.webhookDelivery.findMany({ where: { id: { in: ids } } }),
  },
  // As `scan(projectId, scanId)` and `Project.scans`: Viewer of its project; read whole, with its report.
  Scan: {
    table: 'scans',
    ownerColumn: 'project_id',
    owner: { project: 'VIEWER' },
    read: readScansById,
  },
  Notification: {
    table: 'notifications',
    ownerColumn: 'user_id',
    owner: { user: true },
    read: (prisma, ids) => prisma.notification.findMany({ where: { id: { in: ids } } }),
  },
  // The invitee's own (their pending invitations); Owners see their organization's through Organization.invitations.
  Invitation: {
    table: 'invitations',
    ownerColumn: 'user_id',
    owner: { user: true },
    read: (prisma, ids) => prisma.invitation.findMany({ where: { id: { in: ids } }, select: INVITATION_SELECT }),
  },
  User: {
    table: 'users',
    ownerColumn: 'id',
    owner: { user: true },
    read: (prisma, ids) => prisma.user.findMany({ where: { id: { in: ids } }, select: publicUser }),
  },
};

const WHICH_TABLE = Object.entries(NODE_SOURCES)
  .map(([type, source]) => `SELECT id, '${type}' AS type, ${source.ownerColumn} AS owner FROM ${source.rows ?? `${source.table} WHERE id = ANY($1::text[])`}`)
  .join('\nUNION ALL\n');

/** The type name of each object `nodes` returned (read by the Node interface's resolveType). */
const typeOfNode = new WeakMap<object, string>();
export const nodeTypeOf = (node: object): string => {
  const type = typeOfNode.get(node);
  if (!type) throw new Error('An object reached the Node interface without node() or nodes()');
  return type;
};

/** The objects of `ids` in their order; an id the viewer may not read is its error (not_found or forbidden) instead. */
export async function loadNodes(ctx: Context, ids: readonly string[]): Promise<({ id: string } | AppError)[]> {
  if (ids.length > MAX_NODES) throw validationFailed([{ path: ['ids'], message: `At most ${MAX_NODES} ids` }]);
  ctx.access.requireViewer();
  const unique = [...new Set(ids)];
  // Every id may be a receipt's: each with the window its receipt's time can be in (null when none can have it).
  const receipts = new Map((await receiptWindows(ctx.services.db, unique)).map((window) => [window.id, window]));
  const found = unique.length
    ? await ctx.services.db.query<{ id: string; type: string; owner: string | null }>(WHICH_TABLE, [
        unique,
        unique.map((id) => receipts.get(id)?.from ?? null),
        unique.map((id) => receipts.get(id)?.to ?? null),
      ])
    : [];
  const located = new Map(found.map((row) => [row.id, row]));

  // Authorised as the type's own field, each id alone: one refusal does not null the others.
  const allowed = new Map<string, AppError | true>();
  await Promise.all(
    unique.map(async (id) => {
      const row = located.get(id);
      allowed.set(id, row ? await authorise(ctx, NODE_SOURCES[row.type]!.owner, row.owner) : nodeNotFound());
    }),
  );

  const byType = new Map<string, string[]>();
  for (const [id, verdict] of allowed) if (verdict === true) byType.set(located.get(id)!.type, [...(byType.get(located.get(id)!.type) ?? []), id]);
  const objects = new Map<string, { id: string }>();
  await Promise.all(
    [...byType].map(async ([type, typeIds]) => {
      for (const object of await NODE_SOURCES[type]!.read(ctx.prisma, typeIds, typeIds.flatMap((id) => receipts.get(id) ?? []))) {
        typeOfNode.set(object, type);
        objects.set(object.id, object);
      }
    }),
  );
  return ids.map((id) => {
    const verdict = allowed.get(id)!;
    return verdict === true ? (objects.get(id) ?? nodeNotFound()) : verdict;
  });
}

/**
 * true, or the error the type's own field gives. A non-member's not_found says "Node not found" whatever the
 * type, so an id's type stays unknown to whoever may not read it; a member below the role gets forbidden.
 */
async function authorise(ctx: Context, owner: Owner, ownerId: string | null): Promise<AppError | true> {
  try {
    if (ownerId === null) return nodeNotFound();
    if ('organization' in owner) await ctx.access.orgRole(ownerId, owner.organization);
    else if ('project' in owner) await ctx.access.projectRole(ownerId, owner.project);
    else if (ownerId !== ctx.access.requireViewer().id) return nodeNotFound();
    return true;
  } catch (error) {
    if (error instanceof AppError) return error.code === 'not_found' ? nodeNotFound() : error;
    throw error;
  }
}

const nodeNotFound = () => notFound('Node');
