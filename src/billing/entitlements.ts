import type { Prisma } from '../generated/prisma/client.js';
import { FREE_PLAN, findPlan, type Entitlements } from './plans.js';

type Tx = Prisma.TransactionClient;

/**
 * What an organization may use now. A trial or a live subscription grants its
 * plan; anything else (none, canceled, an expired trial) falls to free.
 */
export async function entitlementsFor(tx: Tx, organizationId: string, now: Date): Promise<Entitlements> {
  const subscription = await tx.subscription.findUnique({ where: { organizationId } });
  return effectivePlan(subscription, now).entitlements;
}

export function effectivePlan(
  subscription: { planId: string; status: string; trialEndsAt: Date | null; currentPeriodEnd: Date | null } | null,
  now: Date,
) {
  if (!subscription) return FREE_PLAN;
  const plan = findPlan(subscription.planId) ?? FREE_PLAN;
  switch (subscription.status) {
    case 'trialing':
      return subscription.trialEndsAt && subscription.trialEndsAt > now ? plan : FREE_PLAN;
    case 'active':
    case 'past_due':
      return plan;
    default:
      return FREE_PLAN;
  }
}
