import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { GraphQLError } from 'graphql';
import type { Context } from '../src/context.js';
import { forbidden, unauthorized } from '../src/errors.js';
import type { Role } from '../src/generated/prisma/client.js';
import type PrismaTypes from '../src/generated/pothos-types.js';
import { getDatamodel } from '../src/generated/pothos-types.js';

/**
 * The scope checks of one request. The orgRole/projectRole checks throw not_found /
 * forbidden themselves, so the contract's 404-before-403 order holds. Also used by the
 * REST layer to authorise before reporting a body whose types GraphQL refused (rest/authorize.ts).
 */
export const scopesFor = (ctx: Context) => ({
  loggedIn: !!ctx.viewer,
  orgRole: ({ orgId, role }: { orgId: string; role: Role }) => ctx.access.orgRole(orgId, role),
  projectRole: ({ projectId, role }: { projectId: string; role: Role }) => ctx.access.projectRole(projectId, role),
});

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
  AuthScopes: {
    loggedIn: boolean;
    orgRole: { orgId: string; role: Role };
    projectRole: { projectId: string; role: Role };
  };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // Scope auth must come first so it wraps every resolver the other plugins add.
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin, SimpleObjectsPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // Scopes run per field at the query roots (runScopesOnType does not work with graphql-jit).
    authScopes: scopesFor,
    unauthorizedError: (_parent, ctx, _info, result) => {
      const cause = findError(result.failure);
      if (cause) return cause;
      return ctx.viewer ? forbidden() : unauthorized();
    },
  },
  // Connections only from the plugin. Node, node(id) and nodes(ids) are schema/types/node.ts: the plugin's would encode
  // ids as base64 type:id global ids, and ours stay the plain ids REST shows (docs/graphql.md).
  relay: { nodeQueryOptions: false, nodesQueryOptions: false, clientMutationId: 'omit', cursorType: 'String' },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
});

/** The contract's own error raised inside a scope (not_found, forbidden, unauthorized). */
function findError(failure: unknown): GraphQLError | null {
  const node = failure as { error?: unknown; failures?: unknown[] };
  if (node.error instanceof GraphQLError) return node.error;
  for (const child of node.failures ?? []) {
    const found = findError(child);
    if (found) return found;
  }
  return null;
}

builder.queryType({});
builder.mutationType({});

builder.scalarType('DateTime', {
  description: 'ISO 8601 UTC timestamp with milliseconds',
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(value as string).toISOString()),
  parseValue: (value) => {
    const date = new Date(value as string);
    if (typeof value !== 'string' || Number.isNaN(date.getTime())) throw new GraphQLError('Invalid DateTime');
    return date;
  },
});

builder.scalarType('JSON', {
  description: 'Arbitrary JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
});
