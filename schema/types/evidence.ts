// GraphQL types and queries of publish evidence: what was published, when, by whom, with which hashes.
import { listPublishEvidence, publishEvidencePackage, type EvidencePackage, type Publisher } from '../../src/evidence/package.js';
import { builder } from '../builder.js';
import { ConsentVersion } from './consent.js';

const EvidencePublisher = builder.objectRef<Publisher>('EvidencePublisher').implement({
  description: 'The operator who published a version',
  fields: (t) => ({ id: t.exposeID('id'), email: t.exposeString('email'), name: t.exposeString('name') }),
});

export const PublishEvidenceSummary = builder
  .objectRef<Awaited<ReturnType<typeof listPublishEvidence>>[number]>('PublishEvidenceSummary')
  .implement({
    fields: (t) => ({
      versionId: t.exposeID('versionId'),
      number: t.exposeInt('number'),
      publishedAt: t.expose('publishedAt', { type: 'DateTime' }),
      publishedBy: t.field({ type: EvidencePublisher, resolve: (summary) => summary.publishedBy }),
      contentHash: t.exposeString('contentHash'),
      consentHash: t.exposeString('consentHash'),
    }),
  });

const EvidenceHashes = builder.objectRef<EvidencePackage['hashes']>('EvidenceHashes').implement({
  fields: (t) => ({
    contentHash: t.exposeString('contentHash'),
    consentHash: t.exposeString('consentHash'),
    packageHash: t.exposeString('packageHash', {
      description: 'SHA-256 of the canonical JSON of the package (REST shape) without hashes.packageHash',
    }),
  }),
});

const PublishEvidencePackage = builder.objectRef<EvidencePackage>('PublishEvidencePackage').implement({
  fields: (t) => ({
    version: t.field({
      type: ConsentVersion,
      description: 'Select id, number, publishedAt, contentHash, consentHash: the package has no config inside version',
      resolve: (evidence) => ({ ...evidence.version, config: evidence.config }) as never,
    }),
    config: t.field({ type: 'JSON', resolve: (evidence) => evidence.config }),
    publishedBy: t.field({ type: EvidencePublisher, resolve: (evidence) => evidence.publishedBy }),
    hashes: t.field({ type: EvidenceHashes, resolve: (evidence) => evidence.hashes }),
    receiptsCount: t.exposeInt('receiptsCount'),
    firstReceiptAt: t.expose('firstReceiptAt', { type: 'DateTime', nullable: true }),
    experience: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The experience published with the version; null (absent on REST) when it had none',
      resolve: (evidence) => evidence.experience ?? null,
    }),
  }),
});

builder.queryFields((t) => ({
  publishEvidence: t.field({
    type: [PublishEvidenceSummary],
    description: 'One summary per published version, newest first (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => listPublishEvidence(ctx.prisma, String(args.projectId)),
  }),
  publishEvidencePackage: t.field({
    type: PublishEvidencePackage,
    description: 'The evidence package of one version (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }), versionId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => publishEvidencePackage(ctx.prisma, String(args.projectId), String(args.versionId)),
  }),
}));
