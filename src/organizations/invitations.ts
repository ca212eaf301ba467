// addMember invites: the person an Owner names becomes a member only by accepting, so nobody is made a member
// (an Owner, say) of an organization they never asked to join and then cannot leave once the adder has left
// (docs/security.md, "Member invitations"). Additions are limited per organization, per adding user and per
// client address, so creating another organization renews nothing.
import { uuidv7 } from 'uuidv7';
import { z } from 'zod';
import { changesOf, recordAudit } from '../audit/record.js';
import { conflict, notFound } from '../errors.js';
import type { Prisma, Role } from '../generated/prisma/client.js';
import { notifyUsers } from '../notifications/notify.js';
import type { LimitRule } from '../rate-limit/index.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { inOrganization, MEMBER_SELECT, role, type MemberView } from './members.js';

const addInput = z.object({ email: z.string().trim().toLowerCase().email('Must be an e-mail address'), role });

export interface InvitationView {
  id: string;
  organizationId: string;
  role: Role;
  invitedByEmail: string;
  invitedByName: string;
  createdAt: Date;
  organization: { id: string; name: string };
  user: { id: string; email: string; name: string };
}

export const INVITATION_SELECT = {
  id: true,
  organizationId: true,
  role: true,
  invitedByEmail: true,
  invitedByName: true,
  createdAt: true,
  organization: { select: { id: true, name: true } },
  user: { select: { id: true, email: true, name: true } },
} as const;

/** INVITATION_SELECT's columns without its relations, for reads inside a transaction (withRelations). */
const INVITATION_ROW = { id: true, organizationId: true, userId: true, role: true, invitedByEmail: true, invitedByName: true, createdAt: true } as const;
type InvitationRow = Prisma.InvitationGetPayload<{ select: typeof INVITATION_ROW }>;

/**
 * INVITATION_SELECT's shape, read on a transaction's one connection: Prisma loads a query's two relations at once,
 * which a connection running another query refuses (pg@9; docs/architecture.md), so they are read one after another.
 */
async function withRelations(tx: Prisma.TransactionClient, row: InvitationRow | null) {
  if (!row) return null;
  const { userId, ...invitation } = row;
  const organization = await tx.organization.findUniqueOrThrow({ where: { id: row.organizationId }, select: { id: true, name: true } });
  const user = await tx.user.findUniqueOrThrow({ where: { id: userId }, select: { id: true, email: true, name: true } });
  return { ...invitation, organization, user };
}

/**
 * addMember calls per hour, counted three ways: per organization (RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR, default 20,
 * extensions.md section 9), per adding user (the same number) and per client address (five times it: an office
 * behind one NAT holds several Owners). Each answer tells whether an e-mail has an account, so a new organization,
 * or a second account on the same address, must not buy more.
 */
export const additionRules = (services: Services): { org: LimitRule; user: LimitRule; address: LimitRule } => {
  const points = services.config.rateLimits.memberAdditionsPerHour;
  return {
    org: { name: 'member-additions-org', points, durationSeconds: 3600 },
    user: { name: 'member-additions-user', points, durationSeconds: 3600 },
    address: { name: 'member-additions-address', points: points * 5, durationSeconds: 3600 },
  };
};

/** Who adds: named in the invitee's notification, kept on the invitation. */
export interface Adder {
  id: string;
  email: string;
  name: string;
}

/**
 * Invites a registered user; a member already, or one invited already, is a conflict. Every valid call counts
 * against all three hourly budgets, found or not. The invitee learns of it in their inbox and accepts or declines.
 */
export async function addMember(services: Services, organizationId: string, input: unknown, adder: Adder, ip: string): Promise<InvitationView> {
  const data = parseInput(addInput, input);
  const rules = additionRules(services);
  const budgets = [
    [rules.org, organizationId],
    [rules.user, adder.id],
    [rules.address, ip],
  ] as const;
  // All checked before any is spent: a refusal by one budget costs the others nothing.
  for (const [rule, key] of budgets) await services.rateLimits.check(rule, key);
  for (const [rule, key] of budgets) await services.rateLimits.consume(rule, key);
  return inOrganization(services, organizationId, async (tx) => {
    const user = await tx.user.findUnique({ where: { email: data.email }, select: { id: true } });
    if (!user) throw notFound('User'); // they register first, as with the admin tool
    const existing = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: user.id } } });
    if (existing) throw conflict('Already a member: change the role instead');
    const invited = await tx.invitation.findUnique({ where: { organizationId_userId: { organizationId, userId: user.id } } });
    if (invited) throw conflict('Already invited: they have not answered yet');
    const now = services.now();
    const invitation = (await withRelations(
      tx,
      await tx.invitation.create({
        data: { id: uuidv7(), organizationId, userId: user.id, role: data.role, invitedByEmail: adder.email, invitedByName: adder.name, createdAt: now },
        select: INVITATION_ROW,
      }),
    ))!;
    await notifyUsers(tx, [user.id], {
      organizationId,
      product: 'organization',
      type: 'organization.invitation',
      title: `You are invited to ${invitation.organization.name}`,
      body:
        `${adder.name} (${adder.email}) invited you to the organization ${invitation.organization.name} as ${data.role}. ` +
        'You are not a member unless you accept; decline if you do not want to join.',
      link: null, // not a member yet: nothing of the organization to link to (the console answers it in the inbox)
      createdAt: now,
    });
    await recordAudit(tx, {
      action: 'member.invited',
      organizationId,
      target: { type: 'user', id: user.id },
      changes: { email: { before: null, after: data.email }, role: { before: null, after: data.role } },
    });
    return invitation;
  });
}

/** The session user's pending invitations, newest first. */
export function myInvitations(services: Services, userId: string): Promise<InvitationView[]> {
  return services.db.prisma.invitation.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: INVITATION_SELECT });
}

/** An organization's pending invitations, oldest first (Admin or above, as its members). */
export function organizationInvitations(services: Services, organizationId: string): Promise<InvitationView[]> {
  return services.db.prisma.invitation.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select: INVITATION_SELECT });
}

/** The invitation with this id addressed to this user, or not_found (another user's invitation is not theirs to see). */
async function ownInvitation(services: Services, invitationId: string, userId: string) {
  const invitation = await services.db.prisma.invitation.findFirst({ where: { id: invitationId, userId }, select: { organizationId: true } });
  if (!invitation) throw notFound('Invitation');
  return invitation;
}

/** The invitee accepts: they become a member with the invited role, under the organization's row lock. */
export async function acceptInvitation(services: Services, invitationId: string, userId: string): Promise<MemberView> {
  const { organizationId } = await ownInvitation(services, invitationId, userId);
  return inOrganization(services, organizationId, async (tx) => {
    const invitation = await withRelations(tx, await tx.invitation.findFirst({ where: { id: invitationId, userId }, select: INVITATION_ROW }));
    if (!invitation) throw notFound('Invitation'); // declined or cancelled meanwhile
    await tx.invitation.delete({ where: { id: invitation.id } });
    // Added meanwhile by the operator's admin tool: the membership stands as it is.
    const existing = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId } }, select: MEMBER_SELECT });
    if (existing) return existing;
    const member = await tx.membership.create({
      data: { id: uuidv7(), organizationId, userId, role: invitation.role, createdAt: services.now() },
      select: MEMBER_SELECT,
    });
    await recordAudit(tx, {
      action: 'member.added',
      organizationId,
      target: { type: 'user', id: userId },
      changes: changesOf(null, { email: invitation.user.email, role: invitation.role }, ['email', 'role']),
    });
    return member;
  });
}

/** The invitee declines: the invitation goes, nothing else changes. */
export async function declineInvitation(services: Services, invitationId: string, userId: string): Promise<InvitationView> {
  const { organizationId } = await ownInvitation(services, invitationId, userId);
  return inOrganization(services, organizationId, async (tx) => {
    const invitation = await withRelations(tx, await tx.invitation.findFirst({ where: { id: invitationId, userId }, select: INVITATION_ROW }));
    if (!invitation) throw notFound('Invitation');
    await tx.invitation.delete({ where: { id: invitation.id } });
    await recordAudit(tx, { action: 'member.invitation_declined', organizationId, target: { type: 'user', id: userId }, changes: { role: { before: invitation.role, after: null } } });
    return invitation;
  });
}

/** An Owner withdraws a pending invitation of their organization. */
export async function cancelInvitation(services: Services, organizationId: string, invitationId: string): Promise<InvitationView> {
  return inOrganization(services, organizationId, async (tx) => {
    const invitation = await withRelations(tx, await tx.invitation.findFirst({ where: { id: invitationId, organizationId }, select: INVITATION_ROW }));
    if (!invitation) throw notFound('Invitation');
    await tx.invitation.delete({ where: { id: invitation.id } });
    await recordAudit(tx, { action: 'member.invitation_cancelled', organizationId, target: { type: 'user', id: invitation.user.id }, changes: { role: { before: invitation.role, after: null } } });
    return invitation;
  });
}
