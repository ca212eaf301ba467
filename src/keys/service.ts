import { z } from 'zod';
import { randomBase62, sha256Hex } from '../auth/tokens.js';
import { notFound } from '../errors.js';
import { notifyMembers } from '../notifications/notify.js';
import { sdkCache } from '../sdk/cache.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { changesOf, recordAudit } from '../audit/record.js';

export const KEY_PREFIX = 'pk_live_';
export const KEY_BODY_LENGTH = 32;
/** A syntactically valid publishable key (anything else is `invalid_key` without a lookup). */
export const KEY_PATTERN = /^pk_live_[0-9A-Za-z]{32}$/;

/** What an operator may see of a key: never the secret or its hash. */
export const apiKeySelect = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

const createApiKeyInput = z.object({ name: z.string().trim().max(120, 'At most 120 characters').optional() }).strict();

/** The part of a key the console shows and `api_keys.prefix` stores: `pk_live_` and 6 characters. */
export const keyPrefixOf = (secret: string): string => secret.slice(0, KEY_PREFIX.length + 6);

/** Creates a key; the secret is returned here once and only its SHA-256 is stored. */
export async function createApiKey(services: Services, projectId: string, input: unknown) {
  const data = parseInput(createApiKeyInput, input ?? {});
  const body = randomBase62(KEY_BODY_LENGTH);
  const secret = KEY_PREFIX + body;
  const now = services.now();
  const apiKey = await services.db.prisma.$transaction(async (tx) => {
    const created = await tx.apiKey.create({
      data: { projectId, name: data.name ?? '', prefix: keyPrefixOf(secret), secretHash: sha256Hex(secret), createdAt: now },
      select: { ...apiKeySelect, project: { select: { organizationId: true, name: true } } },
    });
    await notifyMembers(tx, {
      organizationId: created.project.organizationId,
      projectId,
      product: 'consent',
      type: 'consent.key_created',
      title: `Publishable key ${created.prefix}… created`,
      body: `A publishable key${created.name ? ` "${created.name}"` : ''} was created for ${created.project.name}.`,
      link: `/projects/${projectId}/api-keys`,
      createdAt: now,
    });
    await recordAudit(tx, { action: 'api_key.created', projectId, target: { type: 'api_key', id: created.id }, changes: changesOf(null, created, ['name', 'prefix']) });
    const { project: _project, ...key } = created;
    return key;
  });
  return { apiKey, secret };
}

export function listApiKeys(services: Services, projectId: string) {
  return services.db.prisma.apiKey.findMany({
    where: { projectId },
    select: apiKeySelect,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/** Soft revocation: sets `revokedAt` once; revoking again answers the same key unchanged. */
export async function revokeApiKey(services: Services, projectId: string, keyId: string) {
  const now = services.now();
  const apiKey = await services.db.prisma.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({
      where: { id: keyId, projectId },
      select: { ...apiKeySelect, project: { select: { organizationId: true, name: true } } },
    });
    if (!key) throw notFound('API key');
    const { project, ...current } = key;
    if (current.revokedAt) return current;
    // Only the request that flips it notifies, even when two revoke at once.
    const { count } = await tx.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: now } });
    if (count === 0) return tx.apiKey.findUniqueOrThrow({ where: { id: keyId }, select: apiKeySelect });
    await notifyMembers(tx, {
      organizationId: project.organizationId,
      projectId,
      product: 'consent',
      type: 'consent.key_revoked',
      title: `Publishable key ${current.prefix}… revoked`,
      body: `SDK calls to ${project.name} with this key now fail with revoked_key.`,
      link: `/projects/${projectId}/api-keys`,
      createdAt: now,
    });
    await recordAudit(tx, { action: 'api_key.revoked', projectId, target: { type: 'api_key', id: keyId }, changes: { revokedAt: { before: null, after: now } } });
    return { ...current, revokedAt: now };
  });
  // Other instances hear of it through the database (see src/sdk/cache.ts); this one forgets at once.
  sdkCache(services).invalidateProject(projectId);
  return apiKey;
}
