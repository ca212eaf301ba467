import type { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

export type Product = 'consent' | 'billing' | (string & {});

export interface NotificationInput {
  organizationId: string;
  projectId?: string | null;
  product: Product;
  /** e.g. `consent.version_published`, `consent.first_receipt`, `billing.subscription_changed`. */
  type: string;
  title: string;
  body?: string;
  link?: string | null;
  /** Only members with at least this role get it (default: every member). */
  minRole?: 'OWNER' | 'ADMIN' | 'VIEWER';
  createdAt?: Date;
}

const ROLES_AT_LEAST = { VIEWER: ['OWNER', 'ADMIN', 'VIEWER'], ADMIN: ['OWNER', 'ADMIN'], OWNER: ['OWNER'] } as const;

/**
 * Records an in-app notification for the organization's current members: one
 * row per member, written now, so someone who joins later never sees older
 * ones. Pass the caller's transaction so the notification commits with the event.
 * Nothing is pushed; inboxes are polled.
 */
export async function notifyMembers(tx: Tx, input: NotificationInput): Promise<number> {
  const members = await tx.membership.findMany({
    where: { organizationId: input.organizationId, role: { in: [...ROLES_AT_LEAST[input.minRole ?? 'VIEWER']] } },
    select: { userId: true },
  });
  return notifyUsers(tx, members.map(({ userId }) => userId), input);
}

/** Records the notification for the given users only (e.g. the one person an event concerns), in the caller's transaction. */
export async function notifyUsers(tx: Tx, userIds: string[], input: Omit<NotificationInput, 'minRole'>): Promise<number> {
  if (!userIds.length) return 0;
  const { count } = await tx.notification.createMany({
    data: userIds.map((userId) => ({
      userId,
      organizationId: input.organizationId,
      projectId: input.projectId ?? null,
      product: input.product,
      type: input.type,
      title: input.title,
      body: input.body ?? '',
      link: input.link ?? null,
      ...(input.createdAt && { createdAt: input.createdAt }),
    })),
  });
  return count;
}
