import { createApiKey, listApiKeys, revokeApiKey } from '../../src/keys/service.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

// The secret and its hash are not fields: they cannot be selected at all.
export const ApiKey = builder.objectRef<ApiKeyRecord>('ApiKey').implement({
  interfaces: [Node],
  description: 'A publishable key of a project; only its prefix is visible after creation',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'pk_live_ plus the first 6 characters of the key body' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', { fields: (t) => ({ name: t.string() }) });

const CreateApiKeyPayload = builder.simpleObject('CreateApiKeyPayload', {
  fields: (t) => ({
    apiKey: t.field({ type: ApiKey }),
    secret: t.string({ description: 'The full key (pk_live_ + 32 base62), shown only here' }),
  }),
});

const RevokeApiKeyPayload = builder.simpleObject('RevokeApiKeyPayload', { fields: (t) => ({ apiKey: t.field({ type: ApiKey }) }) });

builder.queryField('apiKeys', (t) =>
  t.field({
    type: [ApiKey],
    description: "The project's publishable keys, oldest first (Viewer or above)",
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => listApiKeys(ctx.services, String(args.projectId)),
  }),
);

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreateApiKeyPayload,
    description: 'Creates a publishable key (Owner)',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: CreateApiKeyInput }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'OWNER' } }),
    resolve: (_root, args, ctx) => createApiKey(ctx.services, String(args.projectId), args.input),
  }),
  revokeApiKey: t.field({
    type: RevokeApiKeyPayload,
    description: 'Revokes a publishable key (Owner); revoking twice answers the same key',
    args: { projectId: t.arg.id({ required: true }), keyId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'OWNER' } }),
    resolve: async (_root, args, ctx) => ({
      apiKey: await revokeApiKey(ctx.services, String(args.projectId), String(args.keyId)),
    }),
  }),
}));
