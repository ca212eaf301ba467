import { uuidv7 } from 'uuidv7';
import { z } from 'zod';
import { randomBase62 } from '../auth/tokens.js';
import { isUniqueViolation } from '../db/errors.js';
import { notFound, validationFailed } from '../errors.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { assertPublicHost } from './address.js';
import { DEFAULT_TIMEOUT_MS, sendWebhook } from './send.js';
import { audited, changesOf, recordAudit } from '../audit/record.js';

const SECRET_PREFIX = 'whsec_';
/** `whsec_` + 32 base62 characters (decisions.md "Webhook"). */
const newSecret = () => SECRET_PREFIX + randomBase62(32);
/** What an operator sees of the secret afterwards: like publishable keys, the prefix plus 6 characters. */
const prefixOf = (secret: string) => secret.slice(0, SECRET_PREFIX.length + 6);

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https anywhere; http only to this machine and only outside production. */
function webhookUrl(production: boolean) {
  return z
    .string()
    .trim()
    .max(2048, 'At most 2048 characters')
    .superRefine((value, ctx) => {
      const url = URL.canParse(value) ? new URL(value) : null;
      if (!url || !/^https?:$/.test(url.protocol)) {
        ctx.addIssue({ code: 'custom', message: 'Must be an absolute https URL' });
        return;
      }
      if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'Must not contain credentials' });
      if (url.protocol === 'http:' && (production || !LOCAL_HOSTS.has(url.hostname))) {
        ctx.addIssue({
          code: 'custom',
          message: production ? 'Must use https' : 'Must use https (http is accepted for localhost only)',
        });
      }
    });
}

const putWebhookInput = (production: boolean) =>
  z.object({ url: webhookUrl(production), enabled: z.boolean().optional() });

/** Loopback receivers (tests, a developer's machine) only outside production. */
const allowLoopback = (services: Services) => !services.config.production;

/**
 * In every environment the host must resolve to public addresses only (the SSRF guard,
 * src/webhooks/address.ts); the same check runs again on every delivery, against the address
 * actually connected to. A name that does not resolve now is accepted (delivery reports it),
 * and the refusal never says what a name resolved to.
 */
async function assertReachableSafely(services: Services, url: string): Promise<void> {
  try {
    await assertPublicHost(new URL(url).hostname, allowLoopback(services));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EBLOCKEDADDRESS') return;
    throw validationFailed([{ path: ['url'], message: 'Must reach a public address (private, loopback, link-local and metadata addresses are refused)' }]);
  }
}

export const findWebhook = (services: Services, projectId: string) =>
  services.db.prisma.webhook.findUnique({ where: { projectId } });

/**
 * Creates or replaces the project's webhook. The signing secret is made (and
 * returned) only when the webhook is first created; later PUTs keep it.
 * `enabled` defaults to true on creation and is kept when omitted later.
 */
export async function putWebhook(services: Services, projectId: string, input: unknown) {
  const data = parseInput(putWebhookInput(services.config.production), input);
  await assertReachableSafely(services, data.url);
  const now = services.now();
  // A changed configuration starts a new failing streak (and a new notification if it fails).
  const changes = { url: data.url, ...(data.enabled !== undefined && { enabled: data.enabled }), failingSince: null, updatedAt: now };
  const existing = await findWebhook(services, projectId);
  if (!existing) {
    const secret = newSecret();
    try {
      const webhook = await services.db.prisma.$transaction(async (tx) => audited(tx, await tx.webhook.create({
        data: { projectId, ...changes, enabled: data.enabled ?? true, secret, secretPrefix: prefixOf(secret), createdAt: now },
      }), (created) => ({ action: 'webhook.created', projectId, target: { type: 'webhook', id: projectId }, changes: changesOf(null, created, ['url', 'enabled', 'secretPrefix']) })));
      return { webhook, secret };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Created by a concurrent PUT a moment ago: that one returned the secret, this one updates.
    }
  }
  const webhook = await services.db.prisma.$transaction(async (tx) => {
    const before = await tx.webhook.findUniqueOrThrow({ where: { projectId } });
    const after = await tx.webhook.update({ where: { projectId }, data: changes });
    return audited(tx, after, () => ({ action: 'webhook.updated', projectId, target: { type: 'webhook', id: projectId }, changes: changesOf(before, after, ['url', 'enabled']) }));
  });
  return { webhook, secret: null };
}

/** A new signing secret; the next delivery is signed with it. */
export async function rotateWebhookSecret(services: Services, projectId: string) {
  const secret = newSecret();
  await services.db.prisma.$transaction(async (tx) => {
    const before = await tx.webhook.findUnique({ where: { projectId }, select: { secretPrefix: true } });
    if (!before) throw notFound('Webhook');
    await tx.webhook.update({ where: { projectId }, data: { secret, secretPrefix: prefixOf(secret), updatedAt: services.now() } });
    // Only the prefixes: the secret itself is never recorded.
    await recordAudit(tx, { action: 'webhook.secret_rotated', projectId, target: { type: 'webhook', id: projectId }, changes: { secretPrefix: { before: before.secretPrefix, after: prefixOf(secret) } } });
  });
  return { webhook: (await findWebhook(services, projectId))!, secret };
}

/**
 * Sends a `webhook.test` event now and reports how the receiver answered,
 * whether or not the webhook is enabled. The attempt is logged among the
 * deliveries; it is not retried.
 */
export async function testWebhook(services: Services, projectId: string, options: { timeoutMs?: number } = {}) {
  const webhook = await findWebhook(services, projectId);
  if (!webhook) throw notFound('Webhook');
  const now = services.now();
  const id = uuidv7();
  const body = JSON.stringify({ id, type: 'webhook.test', createdAt: now.toISOString(), data: { projectId } });
  const sent = await sendWebhook(
    { url: webhook.url, secret: webhook.secret, eventId: id, eventType: 'webhook.test', body },
    { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, allowLoopback: allowLoopback(services) },
  );
  const status = sent.ok ? 'succeeded' : 'failed';
  await services.db.prisma.$transaction(async (tx) => audited(tx, await tx.webhookDelivery.create({
    data: {
      projectId,
      eventType: 'webhook.test',
      attempt: 1,
      status,
      responseStatus: sent.responseStatus,
      durationMs: sent.durationMs,
      error: sent.error,
      createdAt: services.now(),
    },
  }), (delivery) => ({ action: 'webhook.tested', projectId, target: { type: 'webhook_delivery', id: delivery.id }, changes: { status: { before: null, after: status } } })));
  return { status, responseStatus: sent.responseStatus, durationMs: sent.durationMs, error: sent.error };
}

// Deliveries are listed newest first with a keyset cursor over (createdAt, id).
const listInput = z.object({
  limit: z.coerce.number().int().min(1, 'Between 1 and 200').max(200, 'Between 1 and 200').default(50),
  cursor: z.string().optional(),
});

const encodeCursor = (row: { createdAt: Date; id: string }) =>
  Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
  return { createdAt, id };
}

export async function listDeliveries(services: Services, projectId: string, input: unknown) {
  const { limit, cursor } = parseInput(listInput, input);
  const after = cursor ? decodeCursor(cursor) : null;
  const rows = await services.db.prisma.webhookDelivery.findMany({
    where: {
      projectId,
      ...(after && {
        OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
      }),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const deliveries = rows.slice(0, limit);
  return { deliveries, nextCursor: rows.length > limit ? encodeCursor(deliveries.at(-1)!) : null };
}

