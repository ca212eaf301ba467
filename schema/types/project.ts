import { createProject } from '../../src/projects/service.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export const Project = builder.prismaObject('Project', {
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    organizationId: t.exposeID('organizationId'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const CreateProjectInput = builder.inputType('CreateProjectInput', { fields: (t) => ({ name: t.string() }) });

const CreateProjectPayload = builder.simpleObject('CreateProjectPayload', {
  fields: (t) => ({ project: t.field({ type: Project }) }),
});

builder.queryField('project', (t) =>
  t.prismaField({
    type: 'Project',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.id), role: 'VIEWER' } }),
    resolve: (query, _root, args, ctx) => ctx.prisma.project.findUniqueOrThrow({ ...query, where: { id: String(args.id) } }),
  }),
);

builder.mutationField('createProject', (t) =>
  t.field({
    type: CreateProjectPayload,
    args: { organizationId: t.arg.id({ required: true }), input: t.arg({ type: CreateProjectInput, required: true }) },
    authScopes: (_root, args) => ({ orgRole: { orgId: String(args.organizationId), role: 'ADMIN' } }),
    resolve: async (_root, args, ctx) => ({
      project: await createProject(ctx.services, String(args.organizationId), args.input),
    }),
  }),
);
