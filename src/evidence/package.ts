import { canonicalHash, storedConfig } from '../consent/config.js';
import type { Experience } from '../consent/experience.js';
import { notFound } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';

export interface Publisher {
  id: string;
  email: string;
  name: string;
}

/** GET /evidence/publish: one summary per published version, newest first. */
export async function listPublishEvidence(db: PrismaClient, projectId: string) {
  return (await listPublishEvidenceOf(db, [projectId])).get(projectId)!;
}

/** The summaries of many projects in one statement (the operator graph's Project.evidence batches through it). */
export async function listPublishEvidenceOf(db: PrismaClient, projectIds: readonly string[]) {
  const versions = await db.consentVersion.findMany({
    where: { projectId: { in: [...projectIds] } },
    orderBy: [{ projectId: 'asc' }, { number: 'desc' }],
    select: {
      id: true,
      projectId: true,
      number: true,
      publishedAt: true,
      contentHash: true,
      consentHash: true,
      publishedBy: { select: { id: true, email: true, name: true } },
    },
  });
  const byProject = new Map(projectIds.map((id) => [id, [] as EvidenceSummary[]]));
  for (const { id, projectId, ...rest } of versions) byProject.get(projectId)?.push({ versionId: id, ...rest });
  return byProject;
}

export interface EvidenceSummary {
  versionId: string;
  number: number;
  publishedAt: Date;
  contentHash: string;
  consentHash: string;
  publishedBy: Publisher;
}

export type EvidencePackage = Awaited<ReturnType<typeof publishEvidencePackage>>;

/**
 * The evidence package of one version: the immutable snapshot, who published
 * it, its hashes and the receipts recorded against it so far. `packageHash`
 * covers the package exactly as it goes on the wire, minus `hashes.packageHash`
 * itself, so anyone holding the JSON can re-check it (it changes as receipts arrive).
 */
export async function publishEvidencePackage(db: PrismaClient, projectId: string, versionId: string) {
  const [version, receipts] = await Promise.all([
    db.consentVersion.findFirst({
      where: { id: versionId, projectId },
      select: {
        id: true,
        number: true,
        publishedAt: true,
        contentHash: true,
        consentHash: true,
        config: true,
        experience: true,
        publishedBy: { select: { id: true, email: true, name: true } },
      },
    }),
    receiptsOfVersion(db, projectId, versionId),
  ]);
  if (!version) throw notFound('Version');
  const { config, experience, publishedBy, ...versionFields } = version;
  const evidence = {
    version: versionFields,
    config: storedConfig(config),
    // Only versions published with an experience carry it, so older packages hash as they always did.
    ...(experience !== null && { experience: experience as unknown as Experience }),
    publishedBy: publishedBy as Publisher,
    hashes: { contentHash: version.contentHash, consentHash: version.consentHash },
    receiptsCount: receipts.count,
    firstReceiptAt: receipts.first,
  };
  return { ...evidence, hashes: { ...evidence.hashes, packageHash: packageHash(evidence) } };
}

/**
 * How many receipts a version has and when the first was recorded, without reading them all: the count from the
 * analytics rollup (written in the receipts' own statement, so it holds every receipt: docs/analytics.md), the
 * first among the version's receipts of the rollup's first day (one day, one partition). One statement, so both
 * come from one snapshot. The rollup's rows of the version are at most 1,460 a year, whatever the receipts.
 */
async function receiptsOfVersion(db: PrismaClient, projectId: string, versionId: string) {
  const [row] = await db.$queryRaw<{ count: number; first: Date | null }[]>`
    WITH days AS (
      SELECT coalesce(sum(receipts), 0)::int AS count, (min(day) FILTER (WHERE receipts > 0))::timestamp AT TIME ZONE 'UTC' AS first_day
        FROM consent_stats_daily WHERE project_id = ${projectId} AND version_id = ${versionId})
    SELECT count, (SELECT min(created_at) FROM receipts
                    WHERE project_id = ${projectId} AND created_at >= first_day AND created_at < first_day + interval '24 hours'
                      AND version_id = ${versionId}) AS first
      FROM days`;
  return { count: Number(row!.count), first: row!.first && new Date(row!.first) };
}

/** SHA-256 of the canonical JSON of the package as serialized (timestamps as ISO strings). */
export function packageHash(evidence: unknown): string {
  return canonicalHash(JSON.parse(JSON.stringify(evidence)));
}
