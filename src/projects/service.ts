import { z } from 'zod';
import { entitlementsFor } from '../billing/entitlements.js';
import { isUniqueViolation } from '../db/errors.js';
import { entitlementExceeded } from '../errors.js';
import type { Services } from '../services.js';
import { insertWithUniqueSlug, slugify } from '../slug.js';
import { parseInput } from '../validation.js';
import { changesOf, recordAudit } from '../audit/record.js';

export const createProjectInput = z.object({
  name: z.string().trim().min(1, 'Required').max(120, 'At most 120 characters'),
});

/**
 * Creates a project within the organization's `projects` entitlement. The
 * organization row is locked for the count-then-insert, so parallel creates
 * can never pass the limit together.
 */
export async function createProject(services: Services, organizationId: string, input: unknown) {
  const data = parseInput(createProjectInput, input);
  const now = services.now();
  return insertWithUniqueSlug(
    slugify(data.name, 'project'),
    (slug) =>
      services.db.prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`;
        const { projects: limit } = await entitlementsFor(tx, organizationId, now);
        const count = await tx.project.count({ where: { organizationId } });
        if (count >= limit) {
          throw entitlementExceeded(`Your plan allows ${limit} project${limit === 1 ? '' : 's'}; upgrade to add more`);
        }
        // A new project: empty draft, origins enforced with an empty list, no key, no webhook.
        const project = await tx.project.create({ data: { organizationId, name: data.name, slug, createdAt: now } });
        await recordAudit(tx, { action: 'project.created', organizationId, projectId: project.id, target: { type: 'project', id: project.id }, changes: changesOf(null, project, ['name', 'slug']) });
        return project;
      }),
    isUniqueViolation,
  );
}
