import { changePassword, login, logout, register } from '../../src/auth/accounts.js';
import { GRAPHQL_LIMITS } from '../../src/graphql-limits.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export interface PublicUser {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
}

// Only public fields: a password hash or session data cannot be selected at all.
export const User = builder.objectRef<PublicUser>('User').implement({
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const Success = builder.simpleObject('Success', { fields: (t) => ({ success: t.boolean() }) });

const RegisterInput = builder.inputType('RegisterInput', {
  fields: (t) => ({ email: t.string(), password: t.string(), name: t.string() }),
});
const LoginInput = builder.inputType('LoginInput', {
  fields: (t) => ({ email: t.string(), password: t.string() }),
});
const ChangePasswordInput = builder.inputType('ChangePasswordInput', {
  fields: (t) => ({ currentPassword: t.string(), newPassword: t.string() }),
});

const RegisterPayload = builder.simpleObject('RegisterPayload', { fields: (t) => ({ user: t.field({ type: User }) }) });
const LoginPayload = builder.simpleObject('LoginPayload', {
  fields: (t) => ({ token: t.string(), user: t.field({ type: User }) }),
});

/** The session user with every organization and project they can see. */
const Me = builder.simpleObject('Me', {
  fields: (t) => ({
    user: t.field({ type: User }),
  }),
});

builder.objectFields(Me, (t) => ({
  organizations: t.prismaField({
    type: ['Organization'],
    resolve: (query, me, _args, ctx) =>
      ctx.prisma.organization.findMany({
        ...query,
        where: { memberships: { some: { userId: me.user.id } } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
  }),
  projects: t.prismaField({
    type: ['Project'],
    resolve: (query, me, _args, ctx) =>
      ctx.prisma.project.findMany({
        ...query,
        where: { organization: { memberships: { some: { userId: me.user.id } } } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
  }),
}));

builder.queryField('me', (t) =>
  t.field({
    type: Me,
    authScopes: { loggedIn: true },
    resolve: (_root, _args, ctx) => ({ user: ctx.access.requireViewer() }),
  }),
);

// scrypt is the most expensive thing a request can ask for: one per /graphql operation (src/graphql-limits.ts).
const HASHES_PASSWORD = { cost: GRAPHQL_LIMITS.passwordCost };

builder.mutationFields((t) => ({
  register: t.field({
    type: RegisterPayload,
    extensions: HASHES_PASSWORD,
    args: { input: t.arg({ type: RegisterInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({ user: await register(ctx.services, ctx.ip, input) }),
  }),
  login: t.field({
    type: LoginPayload,
    extensions: HASHES_PASSWORD,
    args: { input: t.arg({ type: LoginInput, required: true }) },
    resolve: (_root, { input }, ctx) => login(ctx.services, ctx.ip, input),
  }),
  logout: t.field({
    type: Success,
    description: 'Revokes the presented session, if any; always succeeds.',
    resolve: (_root, _args, ctx) => logout(ctx.services, ctx.session),
  }),
  changePassword: t.field({
    type: Success,
    description: 'Changes the password and revokes every session of the user, this one included.',
    authScopes: { loggedIn: true },
    extensions: HASHES_PASSWORD,
    args: { input: t.arg({ type: ChangePasswordInput, required: true }) },
    resolve: (_root, { input }, ctx) => changePassword(ctx.services, ctx.ip, ctx.access.requireViewer().id, input),
  }),
}));
