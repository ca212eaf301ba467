import { z } from 'zod';
import { renderEvidenceCsv } from '../../src/evidence/csv.js';
import { EVIDENCE_HTML_CSP, renderEvidenceHtml } from '../../src/evidence/html.js';
import { htmlPageHeaders } from '../../src/http/html-headers.js';
import { errorResponse } from '../errors.js';
import { route, type RestResponse } from '../route.js';
import { ErrorBody, sessionErrors, timestamp } from '../schemas.js';
import { Category, Notice, Purpose, Version } from './consent.js';

const BASE = '/api/platform/projects/:projectId/evidence/publish';
const FORMATS = ['json', 'html', 'csv'] as const;
type Format = (typeof FORMATS)[number];

const Publisher = z.object({ id: z.string(), email: z.string(), name: z.string() }).meta({ id: 'EvidencePublisher' });
const EvidenceSummary = z
  .object({ versionId: z.string(), number: z.number().int(), publishedAt: timestamp, publishedBy: Publisher, contentHash: z.string(), consentHash: z.string() })
  .meta({ id: 'PublishEvidenceSummary' });
const EvidencePackage = z
  .object({
    version: Version,
    config: z.object({ purposes: z.array(Purpose), categories: z.array(Category), notice: Notice }),
    publishedBy: Publisher,
    hashes: z.object({
      contentHash: z.string(),
      consentHash: z.string(),
      packageHash: z.string().describe('SHA-256 hex of the JCS canonical JSON of this package without hashes.packageHash'),
    }),
    receiptsCount: z.number().int(),
    firstReceiptAt: timestamp.nullable(),
    experience: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The experience published with the version (docs/consent.md, "Experience"); absent when it had none'),
  })
  .meta({ id: 'PublishEvidencePackage' });

const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

export const evidenceRoutes = [
  route({
    method: 'GET',
    path: BASE,
    summary: 'Publish evidence summaries, newest first (Viewer or above)',
    auth: 'session',
    operation: 'PublishEvidence',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { evidence: data.publishEvidence } }),
    responses: { 200: { description: 'Summaries', schema: z.object({ evidence: z.array(EvidenceSummary) }) }, ...sessionErrors },
  }),
  route({
    method: 'GET',
    path: `${BASE}/:versionId`,
    summary:
      'The evidence package of a version (Viewer or above). format=json (default), html (a printable self-contained page) ' +
      'or csv; download=1 serves it as an attachment. The format is checked after access: unknown is 400 validation_failed.',
    auth: 'session',
    operation: 'PublishEvidencePackage',
    queryParams: z.object({
      format: z.enum(FORMATS).optional().describe('json (default), html or csv'),
      download: z.enum(['1', '0']).optional().describe('1: Content-Disposition attachment'),
    }),
    variables: ({ params }) => ({ projectId: params.projectId, versionId: params.versionId }),
    respond: (data, { query, services }): RestResponse => {
      const format = (query.format ?? 'json') as Format;
      if (!FORMATS.includes(format)) {
        return errorResponse('validation_failed', 'Validation failed', {
          details: [{ path: ['format'], message: `Must be one of ${FORMATS.join(', ')}` }],
        });
      }
      // `experience` is part of the package only for versions published with one (packageHash agrees).
      const { experience, ...rest } = data.publishEvidencePackage;
      const evidence = experience == null ? rest : { ...rest, experience };
      const download = query.download === '1' || query.download === 'true';
      if (format === 'json' && !download) return { status: 200, body: { evidence } };

      const filename = `consent-evidence-${data.project.slug}-v${evidence.version.number}.${format}`;
      const document = { project: data.project, evidence, generatedAt: services.now() };
      const body =
        format === 'json'
          ? `${JSON.stringify({ evidence }, null, 2)}\n`
          : format === 'html'
            ? renderEvidenceHtml(document)
            : renderEvidenceCsv(document);
      return {
        status: 200,
        body,
        headers: {
          'Content-Type': CONTENT_TYPES[format],
          'Content-Disposition': `${download ? 'attachment' : 'inline'}; filename="${filename}"`,
          'Cache-Control': 'private, no-store',
          'X-Content-Type-Options': 'nosniff',
          ...(format === 'html' && htmlPageHeaders(EVIDENCE_HTML_CSP)),
        },
      };
    },
    responses: {
      200: {
        description: 'The package as JSON ({evidence}); as text/html or text/csv for those formats',
        content: {
          'application/json': z.object({ evidence: EvidencePackage }),
          'text/html': z.string().describe('format=html: a printable self-contained page'),
          'text/csv': z.string().describe('format=csv: a field,value block, then the purposes and categories tables'),
        },
        headers: { 'Content-Disposition': 'inline or attachment (download=1), with a filename; on html, csv and downloads' },
      },
      400: { description: 'Unknown format (validation_failed)', schema: ErrorBody },
      ...sessionErrors,
    },
  }),
];
