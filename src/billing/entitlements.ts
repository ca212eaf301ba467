import type { Prisma } from '../generated/prisma/client.js';
import { FREE_PLAN, findPlan, type Entitlements, type Plan } from './plans.js';

type Tx = Prisma.TransactionClient;

export interface SubscriptionState {
  planId: string;
  status: string;
  trialEndsAt: Date | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd?: boolean;
}

/**
 * What an organization may use now. A trial or a live subscription grants its
 * plan; anything else (none, canceled, an expired trial) falls to free.
 */
export async function entitlementsFor(tx: Tx, organizationId: string, now: Date): Promise<Entitlements> {
  const subscription = await tx.subscription.findUnique({ where: { organizationId } });
  return effectivePlan(subscription, now).entitlements;
}

/**
 * The plan in force at `now`. Read from the stored dates, so a trial or a
 * canceled period that has just ended stops granting at once, before the
 * billing schedule records the change.
 */
export function effectivePlan(subscription: SubscriptionState | null, now: Date): Plan {
  if (!subscription) return FREE_PLAN;
  const plan = findPlan(subscription.planId) ?? FREE_PLAN;
  switch (subscription.status) {
    case 'trialing':
      return subscription.trialEndsAt && subscription.trialEndsAt > now ? plan : FREE_PLAN;
    case 'active':
    case 'past_due': {
      const ended = subscription.cancelAtPeriodEnd && subscription.currentPeriodEnd && subscription.currentPeriodEnd <= now;
      return ended ? FREE_PLAN : plan;
    }
    default:
      return FREE_PLAN;
  }
}
