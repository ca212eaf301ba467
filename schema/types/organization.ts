import { createOrganization } from '../../src/organizations/service.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export const Organization = builder.prismaObject('Organization', {
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    projects: t.relation('projects', { query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
    myRole: t.string({
      description: "The session user's role here: OWNER, ADMIN or VIEWER (the console hides what the role would be refused)",
      resolve: async (organization, _args, ctx) => (await ctx.access.roleIn(organization.id)) ?? 'VIEWER',
    }),
  }),
});

const CreateOrganizationInput = builder.inputType('CreateOrganizationInput', {
  fields: (t) => ({
    name: t.string(),
    planId: t.string({ description: 'starter or growth starts that trial; other catalog ids start on free' }),
  }),
});

const CreateOrganizationPayload = builder.simpleObject('CreateOrganizationPayload', {
  fields: (t) => ({ organization: t.field({ type: Organization }) }),
});

builder.queryField('organization', (t) =>
  t.prismaField({
    type: 'Organization',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ orgRole: { orgId: String(args.id), role: 'VIEWER' } }),
    resolve: (query, _root, args, ctx) =>
      ctx.prisma.organization.findUniqueOrThrow({ ...query, where: { id: String(args.id) } }),
  }),
);

builder.mutationField('createOrganization', (t) =>
  t.field({
    type: CreateOrganizationPayload,
    authScopes: { loggedIn: true },
    args: { input: t.arg({ type: CreateOrganizationInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({
      organization: await createOrganization(ctx.services, ctx.access.requireViewer().id, input),
    }),
  }),
);
