// GraphQL types, queries and mutations of the billing domain: plan catalog, subscription, entitlements.
import { PLANS } from '../../src/billing/plans.js';
import { cancelSubscription, getBilling, startCheckout, startTrial } from '../../src/billing/service.js';
import { builder } from '../builder.js';

const Entitlements = builder.simpleObject('Entitlements', {
  description: 'Limits derived from the plan; feature code reads these, never plan ids',
  fields: (t) => ({ projects: t.int(), connectors: t.int(), cases: t.int() }),
});

const PlanPrices = builder.simpleObject('PlanPrices', {
  description: 'Cents, USD',
  fields: (t) => ({ month: t.int(), year: t.int() }),
});

const Plan = builder.simpleObject('Plan', {
  fields: (t) => ({
    id: t.string(),
    name: t.string(),
    prices: t.field({ type: PlanPrices }),
    trialDays: t.int(),
    entitlements: t.field({ type: Entitlements }),
  }),
});

const BillingSubscription = builder.simpleObject('BillingSubscription', {
  fields: (t) => ({
    status: t.string({ description: 'trialing, active, past_due or canceled' }),
    planId: t.string(),
    interval: t.string({ nullable: true, description: 'month or year; null for a trial' }),
    trialEndsAt: t.field({ type: 'DateTime', nullable: true }),
    currentPeriodEnd: t.field({ type: 'DateTime', nullable: true }),
    cancelAtPeriodEnd: t.boolean(),
  }),
});

const BillingUsage = builder.simpleObject('BillingUsage', { fields: (t) => ({ projects: t.int() }) });

export const OrganizationBilling = builder.simpleObject('OrganizationBilling', {
  fields: (t) => ({
    plan: t.field({ type: Plan, description: 'The plan in force now (free once a trial or canceled period ends)' }),
    subscription: t.field({ type: BillingSubscription, nullable: true }),
    entitlements: t.field({ type: Entitlements }),
    usage: t.field({ type: BillingUsage }),
  }),
});

const StartTrialInput = builder.inputType('StartTrialInput', {
  fields: (t) => ({ planId: t.string({ description: 'starter or growth' }) }),
});
const StartCheckoutInput = builder.inputType('StartCheckoutInput', {
  fields: (t) => ({ planId: t.string({ description: 'starter, growth or scale' }), interval: t.string({ description: 'month or year' }) }),
});
const Checkout = builder.simpleObject('Checkout', {
  fields: (t) => ({
    checkoutUrl: t.string({ description: "The provider's checkout page" }),
    sessionId: t.string({ description: "The provider's checkout session id" }),
  }),
});

const ownerOf = (_root: unknown, args: { organizationId: string | number }) => ({
  orgRole: { orgId: String(args.organizationId), role: 'OWNER' as const },
});

builder.queryFields((t) => ({
  billingPlans: t.field({
    type: [Plan],
    description: 'The public plan catalog',
    resolve: () => [...PLANS],
  }),
  organizationBilling: t.field({
    type: OrganizationBilling,
    args: { organizationId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ orgRole: { orgId: String(args.organizationId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => getBilling(ctx.services, String(args.organizationId)),
  }),
}));

builder.mutationFields((t) => ({
  startTrial: t.field({
    type: OrganizationBilling,
    description: "Starts the organization's one trial (Owner)",
    args: { organizationId: t.arg.id({ required: true }), input: t.arg({ type: StartTrialInput, required: true }) },
    authScopes: ownerOf,
    resolve: (_root, args, ctx) => startTrial(ctx.services, String(args.organizationId), args.input),
  }),
  startCheckout: t.field({
    type: Checkout,
    description: "Opens the provider's checkout for a paid plan (Owner); the subscription changes on the provider's event",
    args: { organizationId: t.arg.id({ required: true }), input: t.arg({ type: StartCheckoutInput, required: true }) },
    authScopes: ownerOf,
    resolve: (_root, args, ctx) => startCheckout(ctx.services, String(args.organizationId), args.input),
  }),
  cancelSubscription: t.field({
    type: OrganizationBilling,
    description: 'Cancels at the end of the period (Owner)',
    args: { organizationId: t.arg.id({ required: true }) },
    authScopes: ownerOf,
    resolve: (_root, args, ctx) => cancelSubscription(ctx.services, String(args.organizationId)),
  }),
}));
