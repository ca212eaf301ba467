/** The public plan catalog (decisions.md "Billing"). Feature code reads entitlements, never plan ids. */
export interface Entitlements {
  projects: number;
  connectors: number;
  cases: number;
}

export interface Plan {
  id: 'free' | 'starter' | 'growth' | 'scale';
  name: string;
  /** Cents, USD. */
  prices: { month: number; year: number };
  trialDays: number;
  entitlements: Entitlements;
}

export const PLANS: readonly Plan[] = [
  { id: 'free', name: 'Free', prices: { month: 0, year: 0 }, trialDays: 0, entitlements: { projects: 1, connectors: 0, cases: 10 } },
  { id: 'starter', name: 'Starter', prices: { month: 2900, year: 29000 }, trialDays: 14, entitlements: { projects: 3, connectors: 2, cases: 100 } },
  { id: 'growth', name: 'Growth', prices: { month: 9900, year: 99000 }, trialDays: 14, entitlements: { projects: 10, connectors: 10, cases: 1000 } },
  { id: 'scale', name: 'Scale', prices: { month: 49900, year: 499000 }, trialDays: 0, entitlements: { projects: 100, connectors: 50, cases: 10000 } },
];

export const PLAN_IDS = PLANS.map((plan) => plan.id) as [Plan['id'], ...Plan['id'][]];
export const TRIAL_PLAN_IDS = ['starter', 'growth'] as const;

export function findPlan(id: string): Plan | undefined {
  return PLANS.find((plan) => plan.id === id);
}

export const FREE_PLAN = findPlan('free')!;

/** Plans sold through checkout (free is what an organization falls back to). */
export const PAID_PLAN_IDS = PLANS.filter((plan) => plan.prices.month > 0).map((plan) => plan.id) as [Plan['id'], ...Plan['id'][]];
