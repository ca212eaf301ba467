// Members of an organization: the list (Organization.members, schema/types/graph.ts), the
// Owner-only changes, and leaving. The last-OWNER rule lives in src/organizations/owners.ts (the admin tool shares it).
import { addMember, changeMemberRole, leaveOrganization, removeMember, type MemberView } from '../../src/organizations/members.js';
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

const MemberPayload = builder.simpleObject('MemberPayload', { fields: (t) => ({ member: t.field({ type: OrganizationMember }) }) });

const ownerOf = (_root: unknown, args: { organizationId: string | number }) => ({
  orgRole: { orgId: String(args.organizationId), role: 'OWNER' as const },
});

builder.mutationFields((t) => ({
  addMember: t.field({
    type: MemberPayload,
    description:
      'Adds a registered user by e-mail (Owner). Not registered: not_found; already a member: conflict. At most ' +
      'RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR (20) calls per organization per hour, found or not, then rate_limited. ' +
      'The added user gets an inbox notification naming the organization and who added them',
    args: { organizationId: t.arg.id({ required: true }), email: t.arg.string(), role: t.arg.string({ description: 'OWNER, ADMIN or VIEWER' }) },
    authScopes: ownerOf,
    resolve: async (_root, args, ctx) => ({
      member: await addMember(ctx.services, String(args.organizationId), { email: args.email, role: args.role }, ctx.access.requireViewer()),
    }),
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
