// GraphQL types, queries and mutations of the notifications domain: the session user's inbox.
import { listNotifications, markAllNotificationsRead, markNotificationRead } from '../../src/notifications/service.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export const Notification = builder.prismaObject('Notification', {
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    product: t.exposeString('product', { description: 'Product group, e.g. consent or billing' }),
    type: t.exposeString('type', { description: 'e.g. consent.version_published, billing.trial_ending' }),
    title: t.exposeString('title'),
    body: t.exposeString('body'),
    link: t.exposeString('link', { nullable: true }),
    readAt: t.expose('readAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    organizationId: t.exposeID('organizationId', { nullable: true }),
    projectId: t.exposeID('projectId', { nullable: true }),
  }),
});

const NotificationPage = builder.simpleObject('NotificationPage', {
  fields: (t) => ({
    notifications: t.field({ type: [Notification] }),
    unreadCount: t.int({ description: 'Every unread notification of the user, whatever the filters' }),
    nextCursor: t.string({ nullable: true }),
  }),
});

const MarkNotificationReadPayload = builder.simpleObject('MarkNotificationReadPayload', {
  fields: (t) => ({ notification: t.field({ type: Notification }) }),
});

const MarkAllNotificationsReadPayload = builder.simpleObject('MarkAllNotificationsReadPayload', {
  fields: (t) => ({ updated: t.int() }),
});

builder.queryField('notifications', (t) =>
  t.field({
    type: NotificationPage,
    description: "The session user's notifications, newest first",
    authScopes: { loggedIn: true },
    args: {
      limit: t.arg.int({ description: '1 to 200, default 50' }),
      cursor: t.arg.string(),
      unread: t.arg.boolean({ description: 'Only unread ones' }),
      product: t.arg.string(),
    },
    resolve: (_root, args, ctx) => listNotifications(ctx.prisma, ctx.access.requireViewer().id, args),
  }),
);

builder.mutationFields((t) => ({
  markNotificationRead: t.field({
    type: MarkNotificationReadPayload,
    description: "Marks one of the session user's notifications read (idempotent)",
    authScopes: { loggedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => ({
      notification: await markNotificationRead(ctx.services, ctx.access.requireViewer().id, String(args.id)),
    }),
  }),
  markAllNotificationsRead: t.field({
    type: MarkAllNotificationsReadPayload,
    description: "Marks every unread notification of the session user read",
    authScopes: { loggedIn: true },
    resolve: async (_root, _args, ctx) => ({
      updated: await markAllNotificationsRead(ctx.services, ctx.access.requireViewer().id),
    }),
  }),
}));
