// The project webhook: configuration (Admin), secret rotation (Owner), test sends and the delivery log.
import { listDeliveries, putWebhook, rotateWebhookSecret, testWebhook } from '../../src/webhooks/service.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

// The signing secret is not a field: it is shown once, in the payload of the mutation that made it.
export const Webhook = builder.prismaObject('Webhook', {
  fields: (t) => ({
    url: t.exposeString('url'),
    enabled: t.exposeBoolean('enabled'),
    secretPrefix: t.exposeString('secretPrefix'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

/** One attempt to deliver an event (or a test send). */
export const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeString('eventId', { nullable: true, description: 'The event id receivers dedupe on; null for test sends' }),
    eventType: t.exposeString('eventType'),
    attempt: t.exposeInt('attempt', { description: '1 for the first attempt at the event' }),
    status: t.exposeString('status', { description: 'succeeded or failed' }),
    responseStatus: t.exposeInt('responseStatus', { nullable: true, description: 'null when no response arrived' }),
    durationMs: t.exposeInt('durationMs'),
    error: t.exposeString('error', { nullable: true }),
    nextRetryAt: t.expose('nextRetryAt', { type: 'DateTime', nullable: true, description: 'when the event is tried again; null when it is not' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const WebhookDeliveryPage = builder.simpleObject('WebhookDeliveryPage', {
  fields: (t) => ({
    deliveries: t.field({ type: [WebhookDelivery] }),
    nextCursor: t.string({ nullable: true }),
  }),
});

const WebhookTestDelivery = builder.simpleObject('WebhookTestDelivery', {
  fields: (t) => ({
    status: t.string({ description: 'succeeded or failed' }),
    responseStatus: t.int({ nullable: true }),
    durationMs: t.int(),
    error: t.string({ nullable: true }),
  }),
});

const PutWebhookInput = builder.inputType('PutWebhookInput', {
  fields: (t) => ({
    url: t.string({ description: 'https; http to localhost only outside production' }),
    enabled: t.boolean({ description: 'default true on creation; kept when omitted' }),
  }),
});

const WebhookWithSecret = builder.simpleObject('WebhookWithSecret', {
  fields: (t) => ({
    webhook: t.field({ type: Webhook }),
    secret: t.string({ nullable: true, description: 'whsec_…, only when just created or rotated' }),
  }),
});

const WebhookTestPayload = builder.simpleObject('WebhookTestPayload', {
  fields: (t) => ({ delivery: t.field({ type: WebhookTestDelivery }) }),
});

const projectScope = (role: 'OWNER' | 'ADMIN' | 'VIEWER') => (_root: unknown, args: { projectId: string | number }) => ({
  projectRole: { projectId: String(args.projectId), role },
});

builder.queryField('webhook', (t) =>
  t.prismaField({
    type: 'Webhook',
    nullable: true,
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('VIEWER'),
    resolve: (query, _root, args, ctx) => ctx.prisma.webhook.findUnique({ ...query, where: { projectId: String(args.projectId) } }),
  }),
);

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    type: WebhookDeliveryPage,
    args: { projectId: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    authScopes: projectScope('VIEWER'),
    resolve: (_root, args, ctx) =>
      listDeliveries(ctx.services, String(args.projectId), { limit: args.limit ?? undefined, cursor: args.cursor ?? undefined }),
  }),
);

builder.mutationField('putWebhook', (t) =>
  t.field({
    type: WebhookWithSecret,
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: PutWebhookInput, required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => putWebhook(ctx.services, String(args.projectId), args.input),
  }),
);

builder.mutationField('rotateWebhookSecret', (t) =>
  t.field({
    type: WebhookWithSecret,
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('OWNER'),
    resolve: (_root, args, ctx) => rotateWebhookSecret(ctx.services, String(args.projectId)),
  }),
);

builder.mutationField('testWebhook', (t) =>
  t.field({
    type: WebhookTestPayload,
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: async (_root, args, ctx) => ({ delivery: await testWebhook(ctx.services, String(args.projectId)) }),
  }),
);

