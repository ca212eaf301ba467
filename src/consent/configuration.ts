import canonicalize from 'canonicalize';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { buildConfig, NOTICE_FIELDS } from './config.js';
import { readDraft } from './draft.js';
import { experienceChanged, readExperience } from './experience.js';
import { latestPublishedVersion } from './versions.js';

/**
 * GET /consent: the draft, the latest version, and whether publishing would
 * change the published config or experience (before the first publish: whether the draft has anything).
 */
export async function consentConfiguration(db: PrismaClient | Prisma.TransactionClient, projectId: string) {
  const [draft, experience, latestVersion] = await Promise.all([
    readDraft(db, projectId),
    readExperience(db, projectId),
    latestPublishedVersion(db, projectId),
  ]);
  const hasUnpublishedChanges = latestVersion
    ? canonicalize(buildConfig(draft)) !== canonicalize(latestVersion.config) || experienceChanged(experience, latestVersion.experience)
    : draft.categories.length > 0 ||
      draft.purposes.length > 0 ||
      NOTICE_FIELDS.some((field) => draft.notice[field] !== '') ||
      experience !== null;
  return { draft, experience, latestVersion, hasUnpublishedChanges };
}
