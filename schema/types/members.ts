// Members of an organization: the list (Organization.members, schema/types/graph.ts), the
// Owner-only changes, and leaving. The last-OWNER rule lives in src/organizations/owners.ts (the admin tool shares it).
import {
  acceptInvitation,
  addMember,
  cancelInvitation,
  declineInvitation,
  myInvitations,
  organizationInvitations,
  type InvitationView,
} from '../../src/organizations/invitations.js';
import { changeMemberRole, leaveOrganization, removeMember, type MemberView } from '../../src/organizations/members.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export const OrganizationMember = builder.objectRef<MemberView>('OrganizationMember').implement({
  interfaces: [Node],
  description: 'A membership: who holds which role in the organization',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role', { description: 'OWNER, ADMIN or VIEWER' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    userId: t.id({ resolve: (member) => member.user.id }),
    email: t.string({ resolve: (member) => member.user.email }),
    name: t.string({ resolve: (member) => member.user.name }),
  }),
});

export const Invitation = builder.objectRef<InvitationView>('Invitation').implement({
  interfaces: [Node],
  description:
    'An Owner’s addMember, waiting for the invitee: they are not a member until they accept (acceptInvitation); ' +
    'declineInvitation or an Owner’s cancelInvitation deletes it',
  fields: (t) => ({
    id: t.exposeID('id'),
    organizationId: t.exposeID('organizationId'),
    organizationName: t.string({ resolve: (invitation) => invitation.organization.name }),
    role: t.exposeString('role', { description: 'The role they get by accepting: OWNER, ADMIN or VIEWER' }),
    email: t.string({ description: 'The invitee’s e-mail', resolve: (invitation) => invitation.user.email }),
    invitedByEmail: t.exposeString('invitedByEmail', { description: 'Who invited, as they were then' }),
    invitedByName: t.exposeString('invitedByName'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const InvitationPayload = builder.simpleObject('InvitationPayload', { fields: (t) => ({ invitation: t.field({ type: Invitation }) }) });

const MemberPayload = builder.simpleObject('MemberPayload', { fields: (t) => ({ member: t.field({ type: OrganizationMember }) }) });

const ownerOf = (_root: unknown, args: { organizationId: string | number }) => ({
  orgRole: { orgId: String(args.organizationId), role: 'OWNER' as const },
});

builder.mutationFields((t) => ({
  addMember: t.field({
    type: InvitationPayload,
    description:
      'Invites a registered user by e-mail (Owner): they become a member with `role` only when they accept. Not registered: ' +
      'not_found; already a member or already invited: conflict. At most RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR (20) calls per ' +
      'hour per organization, per adding user and per client address, found or not, then rate_limited. The invitee gets ' +
      'an inbox notification naming the organization and who invited them',
    args: { organizationId: t.arg.id({ required: true }), email: t.arg.string(), role: t.arg.string({ description: 'OWNER, ADMIN or VIEWER' }) },
    authScopes: ownerOf,
    resolve: async (_root, args, ctx) => ({
      invitation: await addMember(ctx.services, String(args.organizationId), { email: args.email, role: args.role }, ctx.access.requireViewer(), ctx.ip),
    }),
  }),
  acceptInvitation: t.field({
    type: MemberPayload,
    description: 'The invitee accepts their invitation and becomes a member with its role (not_found for anyone else’s)',
    args: { id: t.arg.id({ required: true }) },
    authScopes: { loggedIn: true },
    resolve: async (_root, args, ctx) => ({ member: await acceptInvitation(ctx.services, String(args.id), ctx.access.requireViewer().id) }),
  }),
  declineInvitation: t.field({
    type: InvitationPayload,
    description: 'The invitee declines their invitation: it is deleted, nothing else changes (not_found for anyone else’s)',
    args: { id: t.arg.id({ required: true }) },
    authScopes: { loggedIn: true },
    resolve: async (_root, args, ctx) => ({ invitation: await declineInvitation(ctx.services, String(args.id), ctx.access.requireViewer().id) }),
  }),
  cancelInvitation: t.field({
    type: InvitationPayload,
    description: 'Withdraws a pending invitation of the organization (Owner)',
    args: { organizationId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: ownerOf,
    resolve: async (_root, args, ctx) => ({ invitation: await cancelInvitation(ctx.services, String(args.organizationId), String(args.id)) }),
  }),
  changeMemberRole: t.field({
    type: MemberPayload,
    description: 'Changes a member’s role (Owner); demoting the last OWNER is a conflict',
    args: { organizationId: t.arg.id({ required: true }), userId: t.arg.id(), role: t.arg.string() },
    authScopes: ownerOf,
    resolve: async (_root, args, ctx) => ({
      member: await changeMemberRole(ctx.services, String(args.organizationId), { userId: args.userId ?? undefined, role: args.role }),
    }),
  }),
  removeMember: t.field({
    type: MemberPayload,
    description: 'Removes a member (Owner); removing the last OWNER is a conflict',
    args: { organizationId: t.arg.id({ required: true }), userId: t.arg.id() },
    authScopes: ownerOf,
    resolve: async (_root, args, ctx) => ({
      member: await removeMember(ctx.services, String(args.organizationId), { userId: args.userId ?? undefined }),
    }),
  }),
  leaveOrganization: t.field({
    type: MemberPayload,
    description: 'The session user leaves the organization (any member; answers the membership that ended); the last OWNER cannot: conflict',
    args: { organizationId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ orgRole: { orgId: String(args.organizationId), role: 'VIEWER' as const } }),
    resolve: async (_root, args, ctx) => ({
      member: await leaveOrganization(ctx.services, String(args.organizationId), ctx.access.requireViewer().id),
    }),
  }),
}));

builder.queryFields((t) => ({
  invitations: t.field({
    type: [Invitation],
    description: 'The session user’s pending invitations, newest first',
    authScopes: { loggedIn: true },
    resolve: (_root, _args, ctx) => myInvitations(ctx.services, ctx.access.requireViewer().id),
  }),
}));
