import canonicalize from 'canonicalize';
import { readTogether, type Db } from '../db/prisma.js';
import { buildConfig, NOTICE_FIELDS } from './config.js';
import { readDraft, readDrafts, type Draft } from './draft.js';
import { experienceChanged, readExperience, readExperiences, type Experience } from './experience.js';
import { latestPublishedVersion, latestPublishedVersions, type PublishedVersion } from './versions.js';

/**
 * GET /consent: the draft, the latest version, and whether publishing would
 * change the published config or experience (before the first publish: whether the draft has anything).
 */
export async function consentConfiguration(db: Db, projectId: string) {
  const [draft, experience, latestVersion] = await readTogether(db, [
    () => readDraft(db, projectId),
    () => readExperience(db, projectId),
    () => latestPublishedVersion(db, projectId),
  ]);
  return summarise(draft, experience, latestVersion);
}

/** consentConfiguration of many projects in a fixed number of statements (the operator graph batches projects). */
export async function consentConfigurations(db: Db, projectIds: readonly string[]) {
  const [drafts, experiences, latest] = await readTogether(db, [
    () => readDrafts(db, projectIds),
    () => readExperiences(db, projectIds),
    () => latestPublishedVersions(db, projectIds),
  ]);
  return projectIds.map((id) => summarise(drafts.get(id)!, experiences.get(id) ?? null, latest.get(id) ?? null));
}

function summarise(draft: Draft, experience: Experience | null, latestVersion: PublishedVersion | null) {
  const hasUnpublishedChanges = latestVersion
    ? canonicalize(buildConfig(draft)) !== canonicalize(latestVersion.config) || experienceChanged(experience, latestVersion.experience)
    : draft.categories.length > 0 ||
      draft.purposes.length > 0 ||
      NOTICE_FIELDS.some((field) => draft.notice[field] !== '') ||
      experience !== null;
  return { draft, experience, latestVersion, hasUnpublishedChanges };
}
