import { z } from 'zod';
import type {
  PutWebhookMutation,
  RotateWebhookSecretMutation,
  TestWebhookMutation,
  WebhookDeliveriesQuery,
  WebhookQuery,
} from '../generated/operations.js';
import { route } from '../route.js';
import { ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

// decisions.md "Webhook": Viewer reads, Admin configures and tests, Owner rotates the secret.
const base = '/api/platform/projects/:projectId/webhook';

const Webhook = z
  .object({ url: z.string(), enabled: z.boolean(), secretPrefix: z.string(), createdAt: timestamp, updatedAt: timestamp })
  .meta({ id: 'Webhook' });

const WebhookDelivery = z
  .object({
    id: z.string(),
    eventId: z.string().nullable().describe('the event id receivers dedupe on; null for test sends'),
    eventType: z.string(),
    attempt: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    responseStatus: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    nextRetryAt: timestamp.nullable().describe('when the event is tried again; null when it is not'),
    createdAt: timestamp,
  })
  .meta({ id: 'WebhookDelivery' });

const secret = z.string().describe('whsec_ plus 32 base62 characters; shown only now');

/** `secret` appears only when there is one to show (creation, rotation). */
const withSecret = (payload: { webhook: unknown; secret: string | null }) =>
  payload.secret ? payload : { webhook: payload.webhook };

const notFoundYet = { description: 'Not a member, or the project has no webhook', schema: ErrorBody };

export const webhooksRoutes = [
  route<WebhookQuery>({
    method: 'GET',
    path: base,
    summary: "The project's webhook, or null (Viewer or above)",
    auth: 'session',
    operation: 'Webhook',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { webhook: data.webhook } }),
    responses: { 200: { description: 'Webhook', schema: z.object({ webhook: Webhook.nullable() }) }, ...sessionErrors },
  }),
  route<PutWebhookMutation>({
    method: 'PUT',
    path: base,
    summary: 'Create or replace the webhook (Admin or above); the signing secret is returned on creation only',
    auth: 'session',
    operation: 'PutWebhook',
    requestBody: z.object({
      url: z.string().describe('https; http to localhost, 127.0.0.1 or [::1] only outside production'),
      enabled: z.boolean().optional().describe('default true on creation; kept when omitted'),
    }),
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['url', 'enabled']) }),
    respond: (data) => ({ status: 200, body: withSecret(data.putWebhook) }),
    responses: {
      200: { description: 'Saved', schema: z.object({ webhook: Webhook, secret: secret.optional() }) },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route<RotateWebhookSecretMutation>({
    method: 'POST',
    path: `${base}/secret`,
    summary: 'Rotate the signing secret (Owner only); the next delivery is signed with the new one',
    auth: 'session',
    operation: 'RotateWebhookSecret',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: data.rotateWebhookSecret }),
    responses: {
      200: { description: 'Rotated', schema: z.object({ webhook: Webhook, secret }) },
      ...sessionErrors,
      404: notFoundYet,
    },
  }),
  route<TestWebhookMutation>({
    method: 'POST',
    path: `${base}/test`,
    summary: 'Send a signed webhook.test event now and report the answer (Admin or above)',
    auth: 'session',
    operation: 'TestWebhook',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: ({ testWebhook: { delivery } }) => ({
      status: 200,
      body: { delivery: delivery.error === null ? omit(delivery, 'error') : delivery },
    }),
    responses: {
      200: {
        description: 'The receiver was tried',
        schema: z.object({
          delivery: z.object({
            status: z.enum(['succeeded', 'failed']),
            responseStatus: z.number().int().nullable().describe('null when no response arrived'),
            durationMs: z.number().int(),
            error: z.string().optional().describe('present when the delivery failed'),
          }),
        }),
      },
      ...sessionErrors,
      404: notFoundYet,
    },
  }),
  route<WebhookDeliveriesQuery>({
    method: 'GET',
    path: `${base}/deliveries`,
    summary: 'Delivery attempts, newest first, with keyset pagination (Viewer or above)',
    auth: 'session',
    operation: 'WebhookDeliveries',
    queryParams: z.object({
      limit: z.string().optional().describe('1 to 200, default 50'),
      cursor: z.string().optional().describe('nextCursor of the previous page'),
    }),
    variables: ({ params, query }) => ({
      projectId: params.projectId,
      limit: query.limit === undefined ? undefined : Number(query.limit),
      cursor: query.cursor,
    }),
    respond: (data) => ({ status: 200, body: data.webhookDeliveries }),
    responses: {
      200: {
        description: 'Deliveries',
        schema: z.object({ deliveries: z.array(WebhookDelivery), nextCursor: z.string().nullable() }),
      },
      ...validationError,
      ...sessionErrors,
    },
  }),
];

function omit<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}
