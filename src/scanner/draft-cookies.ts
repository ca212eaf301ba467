// "Add to draft" for unmapped cookies a scan found: an ordinary draft edit of the experience's `cookies`
// lists (extensions.md section 2), under the project lock and audited as `consent.experience_updated`,
// like PUT /consent/experience. Names already listed (exactly or by a `*` prefix) are left as they are.
import { z } from 'zod';
import { recordAudit } from '../audit/record.js';
import { withProjectLock } from '../consent/draft.js';
import { DEFAULT_EXPERIENCE, experienceInput, EXPERIENCE_LIMITS, readExperience, type Experience } from '../consent/experience.js';
import { validationFailed } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { isMapped } from './findings.js';

const addCookiesInput = z
  .object({
    cookies: z
      .array(
        z
          .object({
            name: z.string().regex(/^[!#$%&'+\-.^_`|~0-9A-Za-z]{1,255}\*?$/, 'Must be a cookie name, optionally ending in *'),
            purposeKey: z.string().min(1, 'Required').max(64),
          })
          .strict(),
      )
      .min(1, 'At least one cookie')
      .max(EXPERIENCE_LIMITS.cookiesPerPurpose, `At most ${EXPERIENCE_LIMITS.cookiesPerPurpose} cookies`),
  })
  .strict();

export async function addCookiesToDraft(services: Services, projectId: string, input: unknown): Promise<Experience> {
  const { cookies } = parseInput(addCookiesInput, input);
  return withProjectLock(services, projectId, async (tx) => {
    const keys = new Set((await tx.purpose.findMany({ where: { projectId }, select: { key: true } })).map((p) => p.key));
    const unknown = cookies.flatMap((cookie, i) => (keys.has(cookie.purposeKey) ? [] : [{ path: ['cookies', i, 'purposeKey'], message: `Unknown purpose key ${cookie.purposeKey}` }]));
    if (unknown.length) throw validationFailed(unknown);
    const before = await readExperience(tx, projectId);
    const lists: Record<string, string[]> = structuredClone((before ?? DEFAULT_EXPERIENCE).cookies);
    for (const { name, purposeKey } of cookies) {
      if (isMapped(name, Object.values(lists).flat())) continue;
      (lists[purposeKey] ??= []).push(name);
    }
    // The same validation as PUT /consent/experience (limits per purpose included).
    const experience = parseInput(experienceInput, { ...(before ?? DEFAULT_EXPERIENCE), cookies: lists });
    const settings = experience as unknown as Prisma.InputJsonObject;
    await tx.consentExperience.upsert({ where: { projectId }, create: { projectId, settings }, update: { settings } });
    await recordAudit(tx, {
      action: 'consent.experience_updated',
      projectId,
      target: { type: 'experience', id: projectId },
      changes: { experience: { before, after: experience } },
    });
    return experience;
  });
}
