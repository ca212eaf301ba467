import { uuidv7 } from 'uuidv7';
import { isUniqueViolation } from '../db/errors.js';
import type { Db } from '../db/prisma.js';
import { conflict, validationFailed, type ValidationIssue } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import { sdkCache } from '../sdk/cache.js';
import { buildConfig, consentHash, contentHash, storedConfig, type ConsentConfig } from './config.js';
import { readDraft, withProjectLock } from './draft.js';
import { experienceReferenceIssues, readExperience, type Experience } from './experience.js';
import { changesOf, recordAudit } from '../audit/record.js';
import { tcfDraftIssues } from '../tcf/draft.js';
import type { StoredVendorList } from '../tcf/vendor-list.js';

/** The experience as published: TCF turned on pins the GVL version its vendors were checked against (docs/tcf.md). */
function pinVendorList(experience: Experience, vendorList: StoredVendorList | null): Experience {
  if (!experience.tcf?.enabled || !vendorList) return experience;
  return { ...experience, tcf: { ...experience.tcf, vendorListVersion: vendorList.version } as Experience['tcf'] };
}

/** A published, immutable version with its configuration snapshot. */
export interface PublishedVersion {
  id: string;
  number: number;
  publishedAt: Date;
  contentHash: string;
  consentHash: string;
  config: ConsentConfig;
  /** The experience snapshot; null when the project had none at publish. */
  experience: Experience | null;
}

const VERSION_FIELDS = { id: true, number: true, publishedAt: true, contentHash: true, consentHash: true, config: true, experience: true } as const;

/** The newest published version of a project (what the SDK serves), or null before the first publish. */
export async function latestPublishedVersion(db: Db, projectId: string): Promise<PublishedVersion | null> {
  const version = await db.consentVersion.findFirst({ where: { projectId }, orderBy: { number: 'desc' }, select: VERSION_FIELDS });
  return version && { ...version, config: storedConfig(version.config), experience: version.experience as Experience | null };
}

/** The newest version of each of many projects in two statements (the operator graph batches projects). */
export async function latestPublishedVersions(db: Db, projectIds: readonly string[]): Promise<Map<string, PublishedVersion>> {
  // DISTINCT ON walks the (project_id, number) unique index; Prisma's `distinct` would read every version.
  const newest = await db.$queryRaw<{ id: string }[]>`
    SELECT DISTINCT ON (project_id) id FROM consent_versions
    WHERE project_id = ANY(${[...projectIds]}::text[]) ORDER BY project_id, number DESC`;
  if (!newest.length) return new Map();
  const rows = await db.consentVersion.findMany({
    where: { id: { in: newest.map((row) => row.id) } },
    select: { ...VERSION_FIELDS, projectId: true },
  });
  return new Map(
    rows.map(({ projectId, ...version }) => [projectId, { ...version, config: storedConfig(version.config), experience: version.experience as Experience | null }]),
  );
}

/** The evidence path of a version, also the link of its notification. */
export const evidencePath = (projectId: string, versionId: string) =>
  `/api/platform/projects/${projectId}/evidence/publish/${versionId}`;

/**
 * Turns the draft into the next numbered, immutable version. The project row
 * lock serializes publishes (and draft edits) per project, so two publishes
 * can never take the same number; the unique index is the backstop.
 * Publishing identical content again still creates a new number.
 */
export async function publishDraft(services: Services, projectId: string, publishedById: string): Promise<PublishedVersion> {
  try {
    const published = await withProjectLock(services, projectId, async (tx) => {
      const draft = await readDraft(tx, projectId);
      const experience = await readExperience(tx, projectId);
      const issues: ValidationIssue[] = [];
      if (!draft.purposes.length) issues.push({ path: ['purposes'], message: 'Publishing needs at least one purpose' });
      if (!/\S/.test(draft.notice.title)) issues.push({ path: ['notice', 'title'], message: 'Publishing needs a notice title' });
      if (experience) {
        for (const issue of experienceReferenceIssues(experience, draft)) issues.push({ ...issue, path: ['experience', ...issue.path] });
      }
      const tcf = await tcfDraftIssues(tx, experience?.tcf, new Set(draft.purposes.map((purpose) => purpose.key)), true);
      for (const issue of tcf.issues) issues.push({ ...issue, path: ['experience', ...issue.path] });
      if (issues.length) throw validationFailed(issues, 'The draft cannot be published yet');
      const published = experience && pinVendorList(experience, tcf.vendorList);

      const latest = await tx.consentVersion.findFirst({ where: { projectId }, orderBy: { number: 'desc' }, select: { number: true } });
      const number = (latest?.number ?? 0) + 1;
      const config = buildConfig(draft);
      const version = await tx.consentVersion.create({
        data: {
          id: uuidv7(),
          projectId,
          number,
          config: config as unknown as Prisma.InputJsonObject,
          contentHash: contentHash(number, config, published?.tcf),
          consentHash: consentHash(config, published?.translations),
          ...(published && { experience: published as unknown as Prisma.InputJsonObject }),
          publishedAt: services.now(),
          publishedById,
        },
        select: { ...VERSION_FIELDS, project: { select: { organizationId: true, name: true } } },
      });
      await notifyMembers(tx, {
        organizationId: version.project.organizationId,
        projectId,
        product: 'consent',
        type: 'consent.version_published',
        title: `Version ${number} published`,
        body: `Consent configuration version ${number} of ${version.project.name} is live.`,
        link: evidencePath(projectId, version.id),
        createdAt: version.publishedAt,
      });
      await recordAudit(tx, { action: 'consent.published', organizationId: version.project.organizationId, projectId, target: { type: 'consent_version', id: version.id }, changes: { number: { before: latest?.number ?? null, after: number }, consentHash: { before: null, after: version.consentHash } } });
      const { project: _project, ...row } = version;
      return { ...row, config, experience: published };
    });
    // Other instances hear of it through the database (see src/sdk/cache.ts); this one forgets at once.
    sdkCache(services).invalidateProject(projectId);
    return published;
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('Another publish took this version number; try again');
    throw error;
  }
}
