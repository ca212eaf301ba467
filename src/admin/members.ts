import { uuidv7 } from 'uuidv7';
import type { Database } from '../db/database.js';
import { lockOrganization, mayStopBeingOwner } from '../organizations/owners.js';
import { ID_SHAPE } from '../slug.js';
import { ADMIN_CLI, recordAuditVia } from '../audit/record.js';

/** The minimum a member command needs: parameterised SQL on one database. */
export interface Sql {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export const ROLES = ['OWNER', 'ADMIN', 'VIEWER'] as const;
export type MemberRole = (typeof ROLES)[number];

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: MemberRole;
}

export class AdminError extends Error {}

/**
 * `--org` is an id when it has an id's shape, otherwise a slug: never both, so a slug that
 * looks like another organization's id (none is generated, src/slug.ts) cannot be picked.
 */
async function findOrganization(db: Sql, org: string): Promise<string> {
  const byId = ID_SHAPE.test(org.toLowerCase());
  const rows = await db.query<{ id: string }>(
    byId ? 'SELECT id FROM organizations WHERE id = $1' : 'SELECT id FROM organizations WHERE slug = $1',
    [byId ? org.toLowerCase() : org],
  );
  if (!rows[0]) throw new AdminError(`No organization with id or slug "${org}"`);
  return rows[0].id;
}

async function findUser(db: Sql, email: string): Promise<string> {
  const rows = await db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email.trim().toLowerCase()]);
  if (!rows[0]) throw new AdminError(`No registered user with e-mail "${email}" (they must register first)`);
  return rows[0].id;
}

/** An organization keeps at least one OWNER (src/organizations/owners.ts; call inside `transaction`). */
async function assertNotLastOwner(db: Sql, organizationId: string, userId: string): Promise<void> {
  await lockOrganization(db, organizationId);
  if (!(await mayStopBeingOwner(db, organizationId, userId)).ok) {
    throw new AdminError('An organization keeps at least one OWNER: add another owner first');
  }
}

/**
 * Runs `work` in one transaction: through Prisma on the service's Database (its pool or the
 * embedded engine's queue), or BEGIN/COMMIT on a single-connection client (the command line's).
 */
async function transaction<T>(db: Sql | Database, work: (tx: Sql) => Promise<T>): Promise<T> {
  if ('prisma' in db) {
    return db.prisma.$transaction((tx) =>
      work({ query: async (sql, params = []) => (await tx.$queryRawUnsafe(sql, ...params)) as never }),
    );
  }
  await db.query('BEGIN');
  try {
    const result = await work(db);
    await db.query('COMMIT');
    return result;
  } catch (error) {
    await db.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Adds a member, or changes the role of an existing one. */
export async function addMember(db: Sql | Database, input: { org: string; email: string; role: string }): Promise<Member> {
  const role = input.role.toUpperCase();
  if (!(ROLES as readonly string[]).includes(role)) throw new AdminError(`Role must be one of ${ROLES.join(', ')}`);
  const organizationId = await findOrganization(db, input.org);
  const userId = await findUser(db, input.email);
  await transaction(db, async (tx) => {
    if (role !== 'OWNER') await assertNotLastOwner(tx, organizationId, userId);
    const [before] = await tx.query<{ role: string }>(
      'SELECT role::text AS role FROM memberships WHERE organization_id = $1 AND user_id = $2 FOR UPDATE',
      [organizationId, userId],
    );
    await tx.query(
      `INSERT INTO memberships (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4::"Role")
       ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role RETURNING id`,
      [uuidv7(), organizationId, userId, role],
    );
    // The same events as the operators' member mutations (src/organizations/members.ts), by the admin tool.
    const target = { type: 'user', id: userId };
    if (!before) {
      const email = input.email.trim().toLowerCase();
      await recordAuditVia(tx, ADMIN_CLI, {
        action: 'member.added',
        organizationId,
        target,
        changes: { email: { before: null, after: email }, role: { before: null, after: role } },
      });
    } else if (before.role !== role) {
      await recordAuditVia(tx, ADMIN_CLI, { action: 'member.role_changed', organizationId, target, changes: { role: { before: before.role, after: role } } });
    }
  });
  return (await listMembers(db, organizationId)).find((member) => member.userId === userId)!;
}

export async function removeMember(db: Sql | Database, input: { org: string; email: string }): Promise<void> {
  const organizationId = await findOrganization(db, input.org);
  const userId = await findUser(db, input.email);
  const removed = await transaction(db, async (tx) => {
    await assertNotLastOwner(tx, organizationId, userId);
    const rows = await tx.query<{ role: string; email: string }>(
      `DELETE FROM memberships m USING users u WHERE m.organization_id = $1 AND m.user_id = $2 AND u.id = m.user_id
       RETURNING m.role::text AS role, u.email`,
      [organizationId, userId],
    );
    if (rows[0]) {
      await recordAuditVia(tx, ADMIN_CLI, {
        action: 'member.removed',
        organizationId,
        target: { type: 'user', id: userId },
        changes: { email: { before: rows[0].email, after: null }, role: { before: rows[0].role, after: null } },
      });
    }
    return rows;
  });
  if (!removed.length) throw new AdminError(`${input.email} is not a member of ${input.org}`);
}

export async function listMembers(db: Sql, org: string): Promise<Member[]> {
  const organizationId = await findOrganization(db, org);
  const rows = await db.query<{ user_id: string; email: string; name: string; role: MemberRole }>(
    `SELECT m.user_id, u.email, u.name, m.role::text AS role FROM memberships m JOIN users u ON u.id = m.user_id
     WHERE m.organization_id = $1 ORDER BY m.created_at, u.email`,
    [organizationId],
  );
  return rows.map((row) => ({ userId: row.user_id, email: row.email, name: row.name, role: row.role }));
}
