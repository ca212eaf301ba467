import canonicalize from 'canonicalize';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { buildConfig, NOTICE_FIELDS } from './config.js';
import { readDraft, readDrafts, type Draft } from './draft.js';
import { latestPublishedVersion, latestPublishedVersions, type PublishedVersion } from './versions.js';

/**
 * GET /consent: the draft, the latest version, and whether publishing would
 * change the published config (before the first publish: whether the draft has anything).
 */
export async function consentConfiguration(db: PrismaClient | Prisma.TransactionClient, projectId: string) {
  const [draft, latestVersion] = await Promise.all([readDraft(db, projectId), latestPublishedVersion(db, projectId)]);
  return summarise(draft, latestVersion);
}

/** consentConfiguration of many projects in four statements (the operator graph batches projects). */
export async function consentConfigurations(db: PrismaClient | Prisma.TransactionClient, projectIds: readonly string[]) {
  const [drafts, latest] = await Promise.all([readDrafts(db, projectIds), latestPublishedVersions(db, projectIds)]);
  return projectIds.map((id) => summarise(drafts.get(id)!, latest.get(id) ?? null));
}

function summarise(draft: Draft, latestVersion: PublishedVersion | null) {
  const hasUnpublishedChanges = latestVersion
    ? canonicalize(buildConfig(draft)) !== canonicalize(latestVersion.config)
    : draft.categories.length > 0 || draft.purposes.length > 0 || NOTICE_FIELDS.some((field) => draft.notice[field] !== '');
  return { draft, latestVersion, hasUnpublishedChanges };
}
