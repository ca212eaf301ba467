// Members on GraphQL: Owners add by e-mail, change a role, remove; any member may leave. Every change holds
// the organization row lock, so the last-OWNER rule holds under concurrent changes (owners.ts).
import { uuidv7 } from 'uuidv7';
import { z } from 'zod';
import { conflict, notFound } from '../errors.js';
import type { Prisma, Role } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { lockOrganization, mayStopBeingOwner, type TxSql } from './owners.js';
import { changesOf, recordAudit } from '../audit/record.js';
import { notifyUsers } from '../notifications/notify.js';
import type { LimitRule } from '../rate-limit/index.js';

const role = z.enum(['OWNER', 'ADMIN', 'VIEWER'], { message: 'Must be OWNER, ADMIN or VIEWER' });
const addInput = z.object({ email: z.string().trim().toLowerCase().email('Must be an e-mail address'), role });
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

function inOrganization<T>(services: Services, organizationId: string, work: (tx: Prisma.TransactionClient) => Promise<T>) {
  return services.db.prisma.$transaction(async (tx) => {
    if (!(await lockOrganization(sqlOf(tx), organizationId))) throw notFound('Organization');
    return work(tx);
  });
}

/** addMember calls per organization per hour (RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR, default 20). */
const additionsRule = (services: Services): LimitRule => ({
  name: 'member-additions-org',
  points: services.config.rateLimits.memberAdditionsPerHour,
  durationSeconds: 3600,
});

/** Who adds: named in the added user's notification. */
export interface Adder {
  email: string;
  name: string;
}

/**
 * Adds a registered user; one who is already a member is a conflict (change the role instead). Every valid
 * call counts against the organization's hourly budget, found or not: the answer says whether an e-mail has an
 * account, so an Owner may ask only so often. The added user learns of it in their inbox, and may leave.
 */
export async function addMember(services: Services, organizationId: string, input: unknown, adder: Adder): Promise<MemberView> {
  const data = parseInput(addInput, input);
  await services.rateLimits.consume(additionsRule(services), organizationId);
  return inOrganization(services, organizationId, async (tx) => {
    const user = await tx.user.findUnique({ where: { email: data.email }, select: { id: true } });
    if (!user) throw notFound('User'); // they register first, as with the admin tool
    const existing = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: user.id } } });
    if (existing) throw conflict('Already a member: change the role instead');
    const now = services.now();
    const member = await tx.membership.create({
      data: { id: uuidv7(), organizationId, userId: user.id, role: data.role, createdAt: now },
      select: MEMBER_SELECT,
    });
    const organization = await tx.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { name: true } });
    await notifyUsers(tx, [user.id], {
      organizationId,
      product: 'organization',
      type: 'organization.member_added',
      title: `You were added to ${organization.name}`,
      body: `${adder.name} (${adder.email}) added you to the organization ${organization.name} as ${data.role}. If you do not want to be a member, leave it.`,
      link: `/orgs/${organizationId}`,
      createdAt: now,
    });
    await recordAudit(tx, { action: 'member.added', organizationId, target: { type: 'user', id: user.id }, changes: { email: { before: null, after: data.email }, role: { before: null, after: data.role } } });
    return member;
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
