import { z } from 'zod';
import { route, type RouteDef } from '../route.js';
import { ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('pk_live_ plus the first 6 characters of the key body'),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable(),
    revokedAt: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

const base = '/api/platform/projects/:projectId/api-keys';

export const keysRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: base,
    summary: 'Create a publishable key (Owner); the secret is returned only here',
    auth: 'session',
    operation: 'CreateApiKey',
    requestBody: z.object({ name: z.string().max(120).optional() }),
    bodyOptional: true,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['name']) }),
    respond: (data) => ({ status: 201, body: data.createApiKey }),
    responses: {
      201: {
        description: 'Created',
        schema: z.object({ apiKey: ApiKey, secret: z.string().describe('pk_live_ + 32 base62 characters, shown once') }),
      },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: base,
    summary: "The project's publishable keys, oldest first (Viewer or above)",
    auth: 'session',
    operation: 'ApiKeys',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { apiKeys: data.apiKeys } }),
    responses: { 200: { description: 'Keys', schema: z.object({ apiKeys: z.array(ApiKey) }) }, ...sessionErrors },
  }),
  route({
    method: 'DELETE',
    path: `${base}/:keyId`,
    summary: 'Revoke a publishable key (Owner); idempotent',
    auth: 'session',
    operation: 'RevokeApiKey',
    variables: ({ params }) => ({ projectId: params.projectId, keyId: params.keyId }),
    respond: (data) => ({ status: 200, body: data.revokeApiKey }),
    responses: {
      200: { description: 'Revoked (revokedAt set)', schema: z.object({ apiKey: ApiKey }) },
      ...sessionErrors,
      404: { description: 'Not a member, or no such key in the project', schema: ErrorBody },
    },
  }),
];
