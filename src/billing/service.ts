import { z } from 'zod';
import { conflict } from '../errors.js';
import type { Prisma, Subscription } from '../generated/prisma/client.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { effectivePlan } from './entitlements.js';
import { PAID_PLAN_IDS, TRIAL_PLAN_IDS, findPlan, type Plan } from './plans.js';
import { billingProvider } from './providers/index.js';
import { audited, changesOf, recordAudit } from '../audit/record.js';

type Tx = Prisma.TransactionClient;

const DAY_MS = 24 * 60 * 60 * 1000;
export const INTERVALS = ['month', 'year'] as const;

/** The subscription fields an organization starting a trial gets (POST /orgs with planId, or POST trial). */
export function trialSubscription(plan: Plan, now: Date) {
  const trialEndsAt = new Date(now.getTime() + plan.trialDays * DAY_MS);
  return {
    planId: plan.id,
    status: 'trialing',
    interval: null,
    trialEndsAt,
    // A trial's period is the trial itself: it ends then unless paid.
    currentPeriodEnd: trialEndsAt,
    cancelAtPeriodEnd: false,
    trialUsed: true,
    trialEndingNotifiedAt: null,
    provider: null,
    providerCustomerId: null,
    providerSubscriptionId: null,
    createdAt: now,
    updatedAt: now,
  } satisfies Prisma.SubscriptionUncheckedUpdateInput;
}

/**
 * The status as of `now`: a trial or a canceled period whose end has passed
 * reads `canceled` at once, even before the billing schedule records it.
 */
export function currentStatus(subscription: Subscription, now: Date): string {
  const plan = effectivePlan(subscription, now);
  const lapsed = plan.id === 'free' && subscription.planId !== 'free';
  return lapsed ? 'canceled' : subscription.status;
}

/** GET /orgs/:orgId/billing: the plan in force, the subscription, entitlements and usage. */
export async function getBilling(services: Services, organizationId: string) {
  const prisma = services.db.prisma;
  const now = services.now();
  const [subscription, projects] = await Promise.all([
    prisma.subscription.findUnique({ where: { organizationId } }),
    prisma.project.count({ where: { organizationId } }),
  ]);
  const plan = effectivePlan(subscription, now);
  return {
    plan,
    subscription: subscription && {
      status: currentStatus(subscription, now),
      planId: subscription.planId,
      interval: subscription.interval,
      trialEndsAt: subscription.trialEndsAt,
      currentPeriodEnd: subscription.currentPeriodEnd,
      cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    },
    entitlements: plan.entitlements,
    usage: { projects },
  };
}

const trialInput = z.object({
  planId: z.enum(TRIAL_PLAN_IDS, { message: `Must be one of ${TRIAL_PLAN_IDS.join(', ')}` }),
});

/** One trial per organization; an organization created with planId starter/growth has had it. */
export async function startTrial(services: Services, organizationId: string, input: unknown) {
  const { planId } = parseInput(trialInput, input);
  const plan = findPlan(planId)!;
  const now = services.now();
  await services.db.prisma.$transaction(async (tx) => {
    const existing = await lockSubscription(tx, organizationId);
    if (existing?.trialUsed) throw conflict('This organization has already had its trial');
    if (existing && currentStatus(existing, now) !== 'canceled') throw conflict('This organization already has a subscription');
    const data = trialSubscription(plan, now);
    await tx.subscription.upsert({ where: { organizationId }, create: { organizationId, ...data }, update: data });
    await recordAudit(tx, { action: 'billing.trial_started', organizationId, target: { type: 'subscription', id: organizationId }, changes: { planId: { before: existing?.planId ?? null, after: plan.id } } });
    await notifyBillingChange(tx, organizationId, now, {
      title: `${plan.name} trial started`,
      body: `The ${plan.name} trial runs until ${data.trialEndsAt.toISOString().slice(0, 10)}.`,
    });
  });
  return getBilling(services, organizationId);
}

const checkoutInput = z.object({
  planId: z.enum(PAID_PLAN_IDS, { message: `Must be one of ${PAID_PLAN_IDS.join(', ')}` }),
  interval: z.enum(INTERVALS, { message: `Must be one of ${INTERVALS.join(', ')}` }),
});

/**
 * Opens a checkout with the configured provider. Nothing about the
 * subscription changes here: only the provider's signed completion event does.
 */
export async function startCheckout(services: Services, organizationId: string, input: unknown) {
  const { planId, interval } = parseInput(checkoutInput, input);
  const provider = billingProvider(services.config);
  const prisma = services.db.prisma;
  const session = await prisma.$transaction(async (tx) => audited(tx, await tx.checkoutSession.create({
    data: { organizationId, provider: provider.name, planId, interval, createdAt: services.now() },
  }), (created) => ({ action: 'billing.checkout_started', organizationId, target: { type: 'checkout_session', id: created.id }, changes: changesOf(null, created, ['planId', 'interval', 'provider']) })));
  const checkout = await provider.createCheckout({
    checkoutSessionId: session.id,
    organizationId,
    plan: findPlan(planId)!,
    interval,
  });
  await prisma.checkoutSession.update({ where: { id: session.id }, data: { providerRef: checkout.sessionId } });
  return checkout;
}

/**
 * Stops renewal: the plan stays until the end of the paid (or trial) period,
 * then falls to free. Idempotent: with nothing live to cancel (on free, or
 * already canceled) it changes nothing and answers the current state.
 */
export async function cancelSubscription(services: Services, organizationId: string) {
  const prisma = services.db.prisma;
  const now = services.now();
  const current = await prisma.subscription.findUnique({ where: { organizationId } });
  if (current && currentStatus(current, now) !== 'canceled' && !current.cancelAtPeriodEnd) {
    const provider = billingProvider(services.config);
    // Tell the provider first: if it refuses, nothing changes here.
    if (current.provider === provider.name && current.providerSubscriptionId) {
      await provider.cancelAtPeriodEnd(current.providerSubscriptionId);
    }
    await prisma.$transaction(async (tx) => {
      const { count } = await tx.subscription.updateMany({
        // Only the subscription read above: a checkout completing meanwhile replaced it, and the
        // provider was never told to cancel the new one.
        where: { organizationId, cancelAtPeriodEnd: false, planId: current.planId, providerSubscriptionId: current.providerSubscriptionId },
        data: { cancelAtPeriodEnd: true, updatedAt: now },
      });
      if (!count) return; // a parallel cancel or checkout won
      await recordAudit(tx, { action: 'billing.subscription_canceled', organizationId, target: { type: 'subscription', id: organizationId }, changes: { cancelAtPeriodEnd: { before: false, after: true } } });
      const plan = findPlan(current.planId);
      const end = current.currentPeriodEnd ?? current.trialEndsAt;
      await notifyBillingChange(tx, organizationId, now, {
        title: `${plan?.name ?? current.planId} subscription canceled`,
        body: end
          ? `It stays in force until ${end.toISOString().slice(0, 10)}; then the organization moves to the Free plan.`
          : 'The organization moves to the Free plan at the end of the period.',
      });
    });
  }
  return getBilling(services, organizationId);
}

/** Locks the organization row (serialising billing changes of one organization) and reads its subscription. */
export async function lockSubscription(tx: Tx, organizationId: string) {
  await tx.$queryRaw`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`;
  return tx.subscription.findUnique({ where: { organizationId } });
}

export const billingLink = (organizationId: string) => `/orgs/${organizationId}/billing`;

/** A `billing.subscription_changed` notification for every member of the organization. */
export function notifyBillingChange(tx: Tx, organizationId: string, now: Date, message: { title: string; body: string }) {
  return notifyMembers(tx, {
    organizationId,
    product: 'billing',
    type: 'billing.subscription_changed',
    link: billingLink(organizationId),
    createdAt: now,
    ...message,
  });
}
