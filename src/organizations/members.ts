// Members on GraphQL: Owners invite by e-mail (invitations.ts), change a role, remove; any member may leave. Every change holds
// the organization row lock, so the last-OWNER rule holds under concurrent changes (owners.ts).
import { z } from 'zod';
import { conflict, notFound } from '../errors.js';
import type { Prisma, Role } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { lockOrganization, mayStopBeingOwner, type TxSql } from './owners.js';
import { changesOf, recordAudit } from '../audit/record.js';

export const role = z.enum(['OWNER', 'ADMIN', 'VIEWER'], { message: 'Must be OWNER, ADMIN or VIEWER' });
const changeInput = z.object({ userId: z.string().min(1, 'Required'), role });
const removeInput = z.object({ userId: z.string().min(1, 'Required') });

export interface MemberView {
  id: string;
  role: Role;
  createdAt: Date;
  user: { id: string; email: string; name: string };
}

export const MEMBER_SELECT = { id: true, role: true, createdAt: true, user: { select: { id: true, email: true, name: true } } } as const;

const lastOwner = () => conflict('An organization keeps at least one OWNER: make another member OWNER first');

/** A Prisma transaction as the SQL the shared owner rule speaks. */
const sqlOf = (tx: Prisma.TransactionClient): TxSql => ({
  query: async (sql, params = []) => (await tx.$queryRawUnsafe(sql, ...params)) as never,
});

export function inOrganization<T>(services: Services, organizationId: string, work: (tx: Prisma.TransactionClient) => Promise<T>) {
  return services.db.prisma.$transaction(async (tx) => {
    if (!(await lockOrganization(sqlOf(tx), organizationId))) throw notFound('Organization');
    return work(tx);
  });
}

export async function changeMemberRole(services: Services, organizationId: string, input: unknown): Promise<MemberView> {
  const data = parseInput(changeInput, input);
  return inOrganization(services, organizationId, async (tx) => {
    const member = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: data.userId } } });
    if (!member) throw notFound('Member');
    if (data.role !== 'OWNER' && !(await mayStopBeingOwner(sqlOf(tx), organizationId, data.userId)).ok) throw lastOwner();
    await recordAudit(tx, { action: 'member.role_changed', organizationId, target: { type: 'user', id: data.userId }, changes: changesOf(member, data, ['role']) });
    return tx.membership.update({ where: { id: member.id }, data: { role: data.role }, select: MEMBER_SELECT });
  });
}

export async function removeMember(services: Services, organizationId: string, input: unknown): Promise<MemberView> {
  const data = parseInput(removeInput, input);
  return inOrganization(services, organizationId, async (tx) => {
    const member = await tx.membership.findUnique({
      where: { organizationId_userId: { organizationId, userId: data.userId } },
      select: MEMBER_SELECT,
    });
    if (!member) throw notFound('Member');
    if (!(await mayStopBeingOwner(sqlOf(tx), organizationId, data.userId)).ok) throw lastOwner();
    await tx.membership.delete({ where: { id: member.id } });
    await recordAudit(tx, { action: 'member.removed', organizationId, target: { type: 'user', id: data.userId }, changes: { email: { before: member.user.email, after: null }, role: { before: member.role, after: null } } });
    return member;
  });
}

/** The session user leaves an organization; the last OWNER cannot (the same locked rule as removeMember). */
export async function leaveOrganization(services: Services, organizationId: string, userId: string): Promise<MemberView> {
  return inOrganization(services, organizationId, async (tx) => {
    const member = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId } }, select: MEMBER_SELECT });
    if (!member) throw notFound('Organization');
    if (!(await mayStopBeingOwner(sqlOf(tx), organizationId, userId)).ok) throw lastOwner();
    await tx.membership.delete({ where: { id: member.id } });
    await recordAudit(tx, { action: 'member.left', organizationId, target: { type: 'user', id: userId }, changes: { email: { before: member.user.email, after: null }, role: { before: member.role, after: null } } });
    return member;
  });
}
