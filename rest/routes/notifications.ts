import { z } from 'zod';
import { route } from '../route.js';
import { ErrorBody, timestamp, validationError } from '../schemas.js';

const Notification = z
  .object({
    id: z.string(),
    product: z.string().describe('consent, billing, ... (open list)'),
    type: z.string().describe('e.g. consent.version_published, billing.trial_ending, billing.subscription_changed'),
    title: z.string(),
    body: z.string(),
    link: z.string().nullable().describe('Path in the operator app, e.g. /orgs/<id>/billing'),
    readAt: timestamp.nullable(),
    createdAt: timestamp,
    organizationId: z.string().nullable(),
    projectId: z.string().nullable(),
  })
  .meta({ id: 'Notification' });

const unauthorized = { 401: { description: 'Missing, invalid or expired session', schema: ErrorBody } };

// Query strings arrive as text: numbers and flags are converted, anything else is passed on
// so the operation's variable coercion answers 400 validation_failed.
const intParam = (value: string | undefined) => (value !== undefined && /^-?\d+$/.test(value) ? Number(value) : value);
const FLAGS: Record<string, boolean> = { '1': true, true: true, '0': false, false: false };
const flagParam = (value: string | undefined) => (value === undefined ? undefined : (FLAGS[value] ?? value));

export const notificationsRoutes = [
  route({
    method: 'GET',
    path: '/api/platform/notifications',
    summary: "The session user's notifications, newest first",
    auth: 'session',
    operation: 'Notifications',
    queryParams: z.object({
      limit: z.coerce.number().int().min(1).max(200).optional().describe('1 to 200, default 50'),
      cursor: z.string().optional().describe('nextCursor of the previous page'),
      unread: z.enum(['1', '0', 'true', 'false']).optional().describe('1: only unread ones'),
      product: z.string().optional().describe('Only this product group, e.g. consent or billing'),
    }),
    variables: ({ query }) => ({
      limit: intParam(query.limit),
      cursor: query.cursor,
      unread: flagParam(query.unread),
      product: query.product,
    }),
    respond: (data) => ({ status: 200, body: data.notifications }),
    responses: {
      200: {
        description: 'A page of notifications; unreadCount counts every unread notification of the user, whatever the filters',
        schema: z.object({ notifications: z.array(Notification), unreadCount: z.number().int(), nextCursor: z.string().nullable() }),
      },
      ...validationError,
      ...unauthorized,
    },
  }),
  route({
    method: 'POST',
    path: '/api/platform/notifications/read-all',
    summary: "Mark every unread notification of the session user read",
    auth: 'session',
    operation: 'MarkAllNotificationsRead',
    respond: (data) => ({ status: 200, body: data.markAllNotificationsRead }),
    responses: {
      200: { description: 'How many were marked read', schema: z.object({ updated: z.number().int() }) },
      ...unauthorized,
    },
  }),
  route({
    method: 'POST',
    path: '/api/platform/notifications/:id/read',
    summary: 'Mark one notification read (idempotent)',
    auth: 'session',
    operation: 'MarkNotificationRead',
    variables: ({ params }) => ({ id: params.id }),
    respond: (data) => ({ status: 200, body: data.markNotificationRead }),
    responses: {
      200: { description: 'The notification, read', schema: z.object({ notification: Notification }) },
      ...unauthorized,
      404: { description: "No such notification in the user's inbox", schema: ErrorBody },
    },
  }),
];
