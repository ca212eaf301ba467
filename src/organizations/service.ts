import { z } from 'zod';
import { isUniqueViolation } from '../db/errors.js';
import { PLAN_IDS, TRIAL_PLAN_IDS, findPlan } from '../billing/plans.js';
import { trialSubscription } from '../billing/service.js';
import type { Services } from '../services.js';
import { insertWithUniqueSlug, slugify } from '../slug.js';
import { parseInput } from '../validation.js';
import { changesOf, recordAudit } from '../audit/record.js';
import type { LimitRule } from '../rate-limit/index.js';

export const createOrganizationInput = z.object({
  name: z.string().trim().min(1, 'Required').max(120, 'At most 120 characters'),
  planId: z.enum(PLAN_IDS, { message: `Must be one of ${PLAN_IDS.join(', ')}` }).optional(),
});

/**
 * Organizations one user may create per hour (RATE_LIMIT_ORGANIZATIONS_PER_HOUR, default 20): each comes with
 * budgets of its own (member additions, scans, a trial), so creating them must not be free.
 */
const creationsRule = (services: Services): LimitRule => ({
  name: 'organization-creations-user',
  points: services.config.rateLimits.organizationsPerHour,
  durationSeconds: 3600,
});

/** Creates an organization with its creator as OWNER; `planId` starter/growth starts that trial. */
export async function createOrganization(services: Services, userId: string, input: unknown) {
  const data = parseInput(createOrganizationInput, input);
  await services.rateLimits.consume(creationsRule(services), userId);
  const now = services.now();
  const plan = data.planId ? findPlan(data.planId)! : undefined;
  const trial = plan && (TRIAL_PLAN_IDS as readonly string[]).includes(plan.id) ? plan : undefined;
  return insertWithUniqueSlug(
    slugify(data.name, 'org'),
    (slug) =>
      services.db.prisma.$transaction(async (tx) => {
        const organization = await tx.organization.create({
        data: {
          name: data.name,
          slug,
          createdAt: now,
          memberships: { create: { userId, role: 'OWNER', createdAt: now } },
          // The trial it starts is the organization's one trial (decisions.md "Billing").
          ...(trial && { subscription: { create: trialSubscription(trial, now) } }),
        },
        });
        await recordAudit(tx, { action: 'organization.created', organizationId: organization.id, target: { type: 'organization', id: organization.id }, changes: changesOf(null, { ...organization, planId: data.planId ?? null }, ['name', 'slug', 'planId']) });
        return organization;
      }),
    isUniqueViolation,
  );
}
