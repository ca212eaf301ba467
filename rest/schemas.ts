import { z } from 'zod';

// Response shapes for the OpenAPI document (tests validate real responses against it).
export const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');

export const ErrorBody = z
  .object({
    error: z.string(),
    code: z.string(),
    details: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })).optional(),
  })
  .meta({ id: 'Error' });

export const User = z.object({ id: z.string(), email: z.string(), name: z.string(), createdAt: timestamp }).meta({ id: 'User' });
export const Organization = z
  .object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: timestamp })
  .meta({ id: 'Organization' });
export const Project = z
  .object({ id: z.string(), organizationId: z.string(), name: z.string(), slug: z.string(), createdAt: timestamp })
  .meta({ id: 'Project' });

/** The conditional GET header of routes with an ETag (documented as a request header they read). */
export const ifNoneMatch = { 'If-None-Match': z.string().optional().describe('ETag(s) of an earlier answer: 304 while one still matches') };
export const conditionalHeaders = z.object(ifNoneMatch);

/** Standard error responses a session route can give. */
export const sessionErrors = {
  401: { description: 'Missing, invalid or expired session', schema: ErrorBody },
  403: { description: 'Role insufficient', schema: ErrorBody },
  404: { description: 'Not a member, or no such resource', schema: ErrorBody },
} as const;

export const validationError = { 400: { description: 'Validation failed', schema: ErrorBody } } as const;

/** Copies only the named fields: a GraphQL input refuses fields it does not define. */
export function pick(body: unknown, keys: readonly string[]): Record<string, unknown> {
  const source = (body ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
