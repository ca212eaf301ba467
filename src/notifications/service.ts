import { z } from 'zod';
import { notFound, validationFailed } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

const listInput = z.object({
  limit: z.number().int().min(1, `At least 1`).max(MAX_LIMIT, `At most ${MAX_LIMIT}`).nullish(),
  cursor: z.string().nullish(),
  unread: z.boolean().nullish(),
  product: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'A product name such as consent or billing').nullish(),
});

/**
 * One page of the session user's inbox, newest first, with keyset pagination
 * on (createdAt, id). `unreadCount` counts every unread notification of the
 * user, whatever the filters: it is the inbox badge that read-all clears.
 *
 * The cursor condition is written as `createdAt <= c AND (createdAt < c OR
 * id < i)` so the index (user_id, created_at DESC, id DESC) bounds the scan
 * at the cursor however deep the page (bench/notifications-plans.ts).
 */
export async function listNotifications(prisma: Services['db']['prisma'], userId: string, input: unknown) {
  const { cursor, unread, product, ...rest } = parseInput(listInput, input);
  const limit = rest.limit ?? DEFAULT_LIMIT;
  const after = cursor ? decodeCursor(cursor) : null;
  const where: Prisma.NotificationWhereInput = {
    userId,
    ...(unread && { readAt: null }),
    ...(product && { product }),
    ...(after && {
      createdAt: { lte: after.createdAt },
      OR: [{ createdAt: { lt: after.createdAt } }, { id: { lt: after.id } }],
    }),
  };
  const [rows, unreadCount] = await Promise.all([
    prisma.notification.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit + 1 }),
    prisma.notification.count({ where: { userId, readAt: null } }),
  ]);
  const notifications = rows.slice(0, limit);
  const last = notifications.at(-1);
  return { notifications, unreadCount, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/** Marks one of the user's notifications read (idempotent: the first read time stays). Another user's id is 404. */
export async function markNotificationRead(services: Services, userId: string, id: string) {
  const prisma = services.db.prisma;
  await prisma.notification.updateMany({ where: { id, userId, readAt: null }, data: { readAt: services.now() } });
  const notification = await prisma.notification.findFirst({ where: { id, userId } });
  if (!notification) throw notFound('Notification');
  return notification;
}

/** Marks every unread notification of the user read; returns how many changed. */
export async function markAllNotificationsRead(services: Services, userId: string) {
  const { count } = await services.db.prisma.notification.updateMany({
    where: { userId, readAt: null },
    data: { readAt: services.now() },
  });
  return count;
}

// The cursor is opaque to clients: base64url of the last row's createdAt and id.
function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    if (typeof id === 'string' && typeof createdAt === 'string' && !Number.isNaN(date.getTime())) return { createdAt: date, id };
  } catch {
    // falls through to the validation error
  }
  throw validationFailed([{ path: ['cursor'], message: 'Invalid cursor' }]);
}
