import { outageMonitor } from '../db/unavailable.js';
import type { Prisma } from '../generated/prisma/client.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { findPlan } from './plans.js';
import { billingLink, notifyBillingChange } from './service.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Members hear about a trial's end this long before it. */
export const TRIAL_ENDING_NOTICE_MS = 3 * DAY_MS;
const TICK_MS = 60_000;
const BATCH = 100;

export interface ScheduleResult {
  trialEndingNotified: number;
  trialsExpired: number;
  periodsEnded: number;
}

/**
 * One pass of the billing schedule at `services.now()`: warns about trials
 * ending within three days (once per trial), moves expired trials and
 * canceled periods that have ended to `canceled` (free entitlements).
 *
 * Safe with several instances: each change is a conditional UPDATE of one
 * subscription that only the first instance can win, and the notification
 * is written in that same transaction.
 */
export async function runBillingSchedule(services: Services): Promise<ScheduleResult> {
  const now = services.now();
  const soon = new Date(now.getTime() + TRIAL_ENDING_NOTICE_MS);
  const trialEnding = { status: 'trialing', trialEndingNotifiedAt: null, trialEndsAt: { gt: now, lte: soon } };
  const trialExpired = { status: 'trialing', trialEndsAt: { lte: now } };
  const periodEnded = { status: { in: ['active', 'past_due'] }, cancelAtPeriodEnd: true, currentPeriodEnd: { lte: now } };

  return {
    trialEndingNotified: await forEach(services, trialEnding, { trialEndingNotifiedAt: now }, async (tx, subscription) => {
      const plan = findPlan(subscription.planId);
      await notifyMembers(tx, {
        organizationId: subscription.organizationId,
        product: 'billing',
        type: 'billing.trial_ending',
        title: `${plan?.name ?? subscription.planId} trial ends soon`,
        body: `The trial ends on ${subscription.trialEndsAt!.toISOString().slice(0, 10)}. Choose a plan to keep its limits; otherwise the organization moves to the Free plan.`,
        link: billingLink(subscription.organizationId),
        createdAt: now,
      });
    }),
    trialsExpired: await forEach(services, trialExpired, { status: 'canceled', updatedAt: now }, async (tx, subscription) => {
      const plan = findPlan(subscription.planId);
      await notifyBillingChange(tx, subscription.organizationId, now, {
        title: `${plan?.name ?? subscription.planId} trial ended`,
        body: 'The organization is on the Free plan now. Existing projects stay; creating more needs a paid plan.',
      });
    }),
    periodsEnded: await forEach(services, periodEnded, { status: 'canceled', updatedAt: now }, async (tx, subscription) => {
      const plan = findPlan(subscription.planId);
      await notifyBillingChange(tx, subscription.organizationId, now, {
        title: `${plan?.name ?? subscription.planId} subscription ended`,
        body: 'The canceled subscription has reached the end of its period: the organization is on the Free plan now.',
      });
    }),
  };
}

type Tx = Prisma.TransactionClient;
type Subscription = { organizationId: string; planId: string; trialEndsAt: Date | null };

/**
 * Claims every subscription matching `where` with a conditional UPDATE (only
 * rows still matching are changed) and runs `then` for each claimed one in
 * the same transaction. Returns how many this instance claimed.
 */
async function forEach(
  services: Services,
  where: Prisma.SubscriptionWhereInput,
  change: Prisma.SubscriptionUpdateManyMutationInput,
  then: (tx: Tx, subscription: Subscription) => Promise<unknown>,
): Promise<number> {
  const prisma = services.db.prisma;
  let claimed = 0;
  let after = '';
  for (;;) {
    const batch = await prisma.subscription.findMany({
      where: { ...where, organizationId: { gt: after } },
      select: { organizationId: true, planId: true, trialEndsAt: true },
      orderBy: { organizationId: 'asc' },
      take: BATCH,
    });
    for (const subscription of batch) {
      after = subscription.organizationId;
      await prisma.$transaction(async (tx) => {
        const { count } = await tx.subscription.updateMany({ where: { ...where, organizationId: subscription.organizationId }, data: change });
        if (count) {
          claimed += 1;
          await then(tx, subscription);
        }
      });
    }
    if (batch.length < BATCH) return claimed;
  }
}

/** The schedule as a worker: one pass a minute, never two at once in this instance. */
export function billingScheduleWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= runBillingSchedule(services)
      .catch((error) => outageMonitor(services).report(error) || services.logger.error({ err: error }, 'billing schedule failed'))
      .finally(() => (running = undefined));
  }, TICK_MS);
  timer.unref();
  return {
    name: 'billing-schedule',
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
