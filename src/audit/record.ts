// The audit log's write side: every operator mutation calls `recordAudit(tx, …)` inside its own
// transaction, so the event commits or rolls back with the change it describes (docs/audit.md).
import { AsyncLocalStorage } from 'node:async_hooks';
import { uuidv7 } from 'uuidv7';
import type { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

import { AUDIT_ACTIONS, type AuditAction } from './actions.js';

export { AUDIT_ACTIONS, type AuditAction };

/** Who is acting and under which request id; set around each GraphQL execution (REST and /graphql). */
export interface AuditScope {
  requestId: string;
  viewer: { id: string; email: string } | null;
}
const scope = new AsyncLocalStorage<AuditScope>();

let executions = 0;

/**
 * Runs one GraphQL execution with its actor in scope. The scope travels with the async work, so
 * services record the actor without taking the request context as a parameter.
 *
 * On Node 20 a storage that has run once keeps async_hooks on for the rest of the process: every promise,
 * timer and socket write then runs a hook, about a tenth of the SDK config hot path's CPU (git show 89b3c83
 * -- bench/README.md), which never needs the scope. So the storage is switched off (`disable`: hooks off,
 * `getStore` undefined) whenever no execution is running, and the next `run` switches it on again. Every
 * `recordAudit` runs inside its execution's transaction, so nothing reads the scope after it ends.
 */
export function withAuditScope<T>(context: AuditScope, run: () => T): T {
  executions++;
  let result: T;
  try {
    result = scope.run({ requestId: context.requestId, viewer: context.viewer && { id: context.viewer.id, email: context.viewer.email } }, run);
  } catch (error) {
    executionEnded();
    throw error;
  }
  if (typeof (result as { then?: unknown } | null)?.then === 'function') return Promise.resolve(result).finally(executionEnded) as T;
  executionEnded();
  return result;
}

function executionEnded(): void {
  if (--executions === 0) scope.disable();
}

/** The request id of the GraphQL execution running in this async context, if any (tests count a request's own SQL by it). */
export const currentRequestId = (): string | undefined => scope.getStore()?.requestId;

/** Whether async_hooks are on for the audit scope (tests: off between executions). */
export const auditScopeActive = () => executions > 0;

/** Field name → `{ before, after }`; a created thing has `before: null`, a deleted one `after: null`. */
export type AuditChanges = Record<string, { before: unknown; after: unknown }>;

export interface AuditInput {
  action: AuditAction;
  /** Give the organization, or the project (its organization is read in the same statement). */
  organizationId?: string | null;
  projectId?: string | null;
  target: { type: string; id: string };
  changes?: AuditChanges;
}

/**
 * Appends one event in the caller's transaction. Never pass secrets, hashes or tokens in
 * `changes`: callers list the fields they record, and the key/webhook/password services
 * record only prefixes and timestamps (test/audit.test.ts greps every event for the secrets).
 */
export async function recordAudit(tx: Tx, input: AuditInput): Promise<void> {
  const actor = scope.getStore();
  const id = uuidv7();
  const projectId = input.projectId ?? null;
  const target = JSON.stringify(input.target);
  const changes = JSON.stringify(input.changes ?? {});
  const actorId = actor?.viewer?.id ?? null;
  const actorEmail = actor?.viewer?.email ?? null;
  const requestId = actor?.requestId ?? null;
  if (input.organizationId !== undefined || projectId === null) {
    await tx.$executeRaw`
      INSERT INTO audit_events (id, organization_id, project_id, actor_id, actor_email, action, target, changes, request_id)
      VALUES (${id}, ${input.organizationId ?? null}, ${projectId}, ${actorId}, ${actorEmail}, ${input.action},
              ${target}::jsonb, ${changes}::jsonb, ${requestId})`;
    return;
  }
  await tx.$executeRaw`
    INSERT INTO audit_events (id, organization_id, project_id, actor_id, actor_email, action, target, changes, request_id)
    SELECT ${id}, organization_id, id, ${actorId}, ${actorEmail}, ${input.action}, ${target}::jsonb, ${changes}::jsonb, ${requestId}
    FROM projects WHERE id = ${projectId}`;
}

/** `actor.via` of events the admin tool writes (src/admin/members.ts): no operator is signed in there. */
export const ADMIN_CLI = 'admin-cli';

/**
 * Appends one event through plain parameterised SQL, for callers outside any request and outside Prisma
 * (the admin tool): the actor is `via` alone, with no user id, e-mail or request id.
 */
export async function recordAuditVia(
  tx: { query(sql: string, params?: unknown[]): Promise<unknown> },
  via: string,
  input: AuditInput & { organizationId: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO audit_events (id, organization_id, project_id, actor_via, action, target, changes)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)`,
    [uuidv7(), input.organizationId, input.projectId ?? null, via, input.action, JSON.stringify(input.target), JSON.stringify(input.changes ?? {})],
  );
}

/** `{ field: { before, after } }` for the listed fields that differ (all of them when `before` is null). */
export function changesOf<T extends object>(before: T | null, after: T | null, fields: readonly (keyof T & string)[]): AuditChanges {
  const changes: AuditChanges = {};
  for (const field of fields) {
    const was = before ? before[field] : null;
    const is = after ? after[field] : null;
    if (JSON.stringify(was) !== JSON.stringify(is)) changes[field] = { before: was ?? null, after: is ?? null };
  }
  return changes;
}

/** Records the event a written row describes and hands the row back: `return audited(tx, await tx.x.create(…), (row) => ({…}))`. */
export async function audited<T>(tx: Tx, row: T, event: (row: T) => AuditInput): Promise<T> {
  await recordAudit(tx, event(row));
  return row;
}
