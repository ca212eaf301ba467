// The site scanner's routes (extensions.md section 7, docs/scanner.md): Admin starts and schedules, Viewer reads.
import { z } from 'zod';
import type { AddCookiesToDraftMutation, ScanArtifactQuery, ScanQuery, ScanScheduleQuery, ScansQuery, SetScanScheduleMutation, StartScanMutation } from '../generated/operations.js';
import { EVIDENCE_HTML_CSP } from '../../src/evidence/html.js';
import { htmlPageHeaders } from '../../src/http/html-headers.js';
import { renderReportCsv, renderReportHtml } from '../../src/scanner/report-files.js';
import type { ScanReport } from '../../src/scanner/run.js';
import { SCAN_LIMITS, SCAN_PAGE_MAX } from '../../src/scanner/service.js';
import { FINDING_TYPES } from '../../src/scanner/findings.js';
import { CATEGORIES } from '../../src/scanner/catalogue.js';
import { LINK_KINDS } from '../../src/scanner/links.js';
import { errorResponse } from '../errors.js';
import { route, type RestResponse } from '../route.js';
import { conditionalHeaders, ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';
import { etagMatches } from './sdk.js';

const BASE = '/api/platform/projects/:projectId/scans';
const FORMATS = ['json', 'csv', 'html'] as const;
type Format = (typeof FORMATS)[number];
const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

const Summary = z
  .object({
    pages: z.number().int(),
    visits: z.number().int(),
    cookies: z.number().int(),
    otherSites: z.number().int(),
    refusedRequests: z.number().int(),
    findings: z.record(z.string(), z.number().int()).describe('count per finding type'),
  })
  .meta({ id: 'ScanSummary' });

const ScanFields = {
  id: z.string(),
  projectId: z.string(),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  trigger: z.enum(['manual', 'schedule']),
  urls: z.array(z.string()),
  followLinks: z.number().int(),
  attempts: z.number().int().describe('runs started; 2 when the first died with its instance'),
  createdAt: timestamp,
  startedAt: timestamp.nullable(),
  finishedAt: timestamp.nullable(),
  versionNumber: z.number().int().nullable().describe('the version live when the scan ran'),
  error: z.string().nullable(),
  reportHash: z.string().nullable(),
  summary: Summary.nullable(),
};
const ScanSummaryItem = z.object(ScanFields).meta({ id: 'ScanListItem' });

const Finding = z
  .object({
    type: z.enum(FINDING_TYPES),
    pageUrl: z.string(),
    subject: z.object({ kind: z.enum(['cookie', 'storage', 'request', 'page']), name: z.string() }),
    category: z.enum(CATEGORIES).nullable(),
    vendor: z.string().nullable(),
    description: z.string().nullable(),
    suggestedPurposeKey: z.string().nullable(),
    evidence: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ScanFinding' });

const InventoryItem = z
  .object({
    kind: z.enum(['cookie', 'storage', 'host']),
    name: z.string().describe('the cookie name, storage key or host'),
    category: z.enum(CATEGORIES),
    vendor: z.string().nullable(),
    description: z.string().nullable(),
    matched: z.string().nullable().describe('the catalogue pattern or domain that matched, or the EasyPrivacy rule (source easyprivacy)'),
    source: z.string().nullable().describe('open-cookie-database, service, or easyprivacy (a host no catalogue knows whose request EasyPrivacy lists as tracking: category analytics); null when unknown'),
    party: z.enum(['first', 'third', 'both']),
    lifetime: z
      .object({ kind: z.enum(['session', 'expires', 'persistent']), seconds: z.number().int().nullable().describe('expires: from the scan start to the latest expiry seen') })
      .nullable()
      .describe('null for hosts'),
    where: z.array(z.string()).describe('cookie domains, storage areas, or request resource types'),
    setBy: z.array(z.string()).describe('cookie setters (response or script URLs), request initiators'),
    visits: z.array(z.enum(['before', 'reject', 'accept'])),
    pages: z.array(z.string()),
  })
  .meta({ id: 'ScanInventoryItem' });

// A page's links and forms, read in its before visit (src/scanner/links.ts, docs/scanner.md "Links and forms").
const PageLinks = z
  .object({
    firstParty: z.number().int().describe('distinct http(s) links (without fragment) to the page’s own site, among those read'),
    thirdPartyCount: z.number().int().describe('distinct http(s) links to other sites, among those read'),
    thirdParty: z
      .array(z.object({ url: z.string().describe('without query and fragment'), host: z.string(), text: z.string(), social: z.string().optional().describe('the social platform, e.g. facebook, x, linkedin') }))
      .describe('links to other sites, once per URL, capped (limits.visit.thirdPartyLinks)'),
    keywords: z
      .array(
        z.object({
          url: z.string(),
          host: z.string(),
          party: z.enum(['first', 'third']),
          text: z.string(),
          kinds: z.array(z.enum(LINK_KINDS)),
        }),
      )
      .describe('links whose text or URL names a privacy policy, imprint, cookie policy or terms, capped (limits.visit.keywordLinks)'),
    kindsFound: z.array(z.enum(LINK_KINDS)).describe('the kinds some link read names, also beyond the cap'),
    cut: z.object({ anchors: z.number().int(), thirdParty: z.number().int(), keywords: z.number().int(), report: z.boolean().optional() }).describe('what was not kept; report: lists emptied to fit the report'),
  })
  .meta({ id: 'ScanPageLinks' });

const PageForms = z
  .object({
    servedOverHttp: z.boolean().describe('the page (its final URL) was served over plain http'),
    total: z.number().int(),
    insecure: z
      .array(z.object({ action: z.string().describe('resolved, without query'), method: z.string(), password: z.boolean(), email: z.boolean() }))
      .describe('forms whose action (or the page, without one) is plain http, capped (limits.visit.insecureForms)'),
    cut: z.number().int(),
  })
  .meta({ id: 'ScanPageForms' });

const ScanPage = z
  .looseObject({
    url: z.string(),
    depth: z.number().int(),
    visits: z.array(z.record(z.string(), z.unknown())).describe(
      'before, reject and accept (docs/scanner.md); a visit\'s `cut` counts what it did not keep; its `websockets` (absent in reports made before) lists the WebSockets the page opened, with frame counts and previews (docs/scanner.md "WebSockets")',
    ),
    links: PageLinks.optional().describe('absent in reports made before links were read'),
    forms: PageForms.optional().describe('absent in reports made before forms were read'),
  })
  .meta({ id: 'ScanPage' });
const TransportStep = z.object({
  url: z.string(),
  status: z.number().int().nullable().describe('null when no answer came (see error)'),
  location: z.string().nullable().describe("a redirect's Location (cut to 2,000 characters)"),
  error: z.string().nullable(),
});

// The transport check of each origin (src/scanner/transport.ts, docs/scanner.md "Transport: HTTPS redirect, TLS, HSTS").
const OriginTransport = z
  .object({
    origin: z.string(),
    pageUrl: z.string().describe('the first scanned page of this origin'),
    httpsRedirect: z.object({
      url: z.string().describe('http://<host>/ (the page\'s port when the page is http)'),
      chain: z.array(TransportStep).describe('each answer from url on, at most limits.redirects + 1'),
      redirectsToHttps: z.boolean(),
      fallsBackToHttp: z.boolean().describe('an https step (or the https origin itself) redirects to plain http'),
      error: z.string().nullable(),
    }),
    tls: z.object({
      url: z.string().describe("the page's origin when https, else the first https step of the redirect, else https://<host>/"),
      used: z.boolean().describe('the site uses https here (an https page, or a redirect to https)'),
      protocol: z.string().nullable(),
      cipher: z.object({ name: z.string(), standardName: z.string(), version: z.string() }).nullable(),
      authorized: z.boolean().describe("the chain is trusted by Node's root store and names the host"),
      authorizationError: z.string().nullable(),
      certificate: z
        .object({
          subject: z.string(),
          issuer: z.string(),
          subjectAltNames: z.array(z.string()),
          subjectAltNamesCut: z.number().int(),
          hostMatches: z.boolean(),
          selfSigned: z.boolean(),
          validFrom: z.string().nullable(),
          validTo: z.string().nullable(),
          daysLeft: z.number().int().nullable(),
          fingerprint256: z.string(),
        })
        .nullable(),
      status: z.number().int().nullable(),
      location: z.string().nullable(),
      hsts: z.object({ header: z.string(), maxAge: z.number().int().nullable(), includeSubDomains: z.boolean(), preload: z.boolean() }).nullable(),
      problems: z.array(z.enum(['no_tls', 'untrusted_chain', 'host_mismatch', 'expired', 'not_yet_valid'])).describe('each makes a tls_invalid finding'),
      error: z.string().nullable(),
    }),
  })
  .meta({ id: 'ScanOriginTransport' });

const ScanArtifact = z
  .object({
    name: z.string().describe('page-<n>-before.jpg (the page as the visitor first saw it) or page-<n>-<visit>.har'),
    contentType: z.string().describe('image/jpeg or application/json (HAR 1.2, without bodies)'),
    size: z.number().int().describe('bytes'),
    sha256: z.string().describe('lowercase hex SHA-256 of the bytes, as the report lists it (artifacts.files)'),
  })
  .meta({ id: 'ScanArtifact' });

const ScanDetail = z
  .object({
    ...ScanFields,
    pages: z.array(ScanPage).describe('each page with its three visits (docs/scanner.md); [] until done'),
    findings: z.array(Finding),
    browser: z.object({ name: z.string(), version: z.string() }).nullable(),
    artifacts: z
      .array(ScanArtifact)
      .optional()
      .describe('its screenshots and HAR files, served by GET /scans/:scanId/artifacts/:name (docs/scanner.md "Artifacts"); [] until done'),
  })
  .meta({ id: 'Scan' });

// The downloadable report (src/scanner/run.ts buildReport): `format=json` with `download=1` serves `{ report }`.
const ScanReportBody = z
  .object({
    scan: z.object({
      id: z.string(),
      projectId: z.string(),
      trigger: z.enum(['manual', 'schedule']),
      urls: z.array(z.string()),
      followLinks: z.number().int(),
      startedAt: timestamp,
      finishedAt: timestamp,
    }),
    versionNumber: z.number().int().nullable().describe('the version live when the scan ran'),
    browser: z.object({ name: z.string(), version: z.string() }),
    catalogue: z.record(z.string(), z.unknown()).describe('the cookie catalogue snapshot the findings used'),
    trackerList: z
      .object({ source: z.string(), licence: z.string(), date: z.string(), sha256: z.string() })
      .nullable()
      .optional()
      .describe('the EasyPrivacy snapshot requests were matched against (docs/scanner.md "Tracker list"); absent in reports made before it'),
    limits: z.object({
      pages: z.number().int(),
      visitTimeoutMs: z.number().int(),
      maxPageBytes: z.number().int(),
      dwellMs: z.number().int().optional().describe('how long each judged load was watched for late writes after network idle (reports since SCANNER_DWELL_MS)'),
      maxReportBytes: z.number().int().optional().describe('absent in reports made before the cap'),
      visit: z.record(z.string(), z.number().int()).optional().describe('what one visit keeps (docs/scanner.md "What a visit keeps")'),
    }),
    pages: z.array(ScanPage).describe('each page with its three visits, its links and forms (docs/scanner.md)'),
    findings: z.array(Finding),
    inventory: z
      .array(InventoryItem)
      .optional()
      .describe('every cookie, storage key and third-party host seen, once each and classified (reports before this field was added have none)'),
    transport: z
      .object({
        limits: z.record(z.string(), z.number().int()).describe('origins, redirects, stepTimeoutMs, totalMs, maxHeaderBytes, maxBytes'),
        origins: z.array(OriginTransport),
        originsNotChecked: z.number().int().describe('distinct origins among the pages beyond limits.origins'),
      })
      .optional()
      .describe("each origin's HTTPS redirect, TLS and HSTS (docs/scanner.md \"Transport\"); absent in reports made before the check"),
    summary: Summary,
    cut: z
      .object({ visitsEmptied: z.number().int(), findingsDropped: z.number().int(), linksEmptied: z.number().int().optional().describe('pages whose link lists were emptied first') })
      .nullable()
      .optional()
      .describe('null: nothing cut; else what was left out to keep the report under SCANNER_MAX_REPORT_BYTES'),
    artifacts: z
      .object({
        limits: z.object({ screenshotBytes: z.number().int(), harBytes: z.number().int(), scanBytes: z.number().int() }),
        files: z.array(ScanArtifact.extend({ pageUrl: z.string(), visit: z.enum(['before', 'reject', 'accept']) })),
        skipped: z.array(z.object({ name: z.string(), pageUrl: z.string(), visit: z.enum(['before', 'reject', 'accept']), reason: z.string() })),
      })
      .nullable()
      .optional()
      .describe('the screenshots and HAR files kept, with their sha256 (the reportHash covers them), and those left out over a cap; absent in reports made before them'),
    hashes: z.object({ reportHash: z.string().describe('SHA-256 of the canonical JSON of the report without hashes') }),
  })
  .meta({ id: 'ScanReport' });

const Schedule = z
  .object({
    schedule: z.enum(['off', 'daily', 'weekly']),
    urls: z.array(z.string()),
    followLinks: z.number().int(),
    nextRunAt: timestamp.nullable(),
  })
  .meta({ id: 'ScanSchedule' });

const scanTarget = {
  urls: z.array(z.string()).describe(`1 to ${SCAN_LIMITS.urls} absolute http(s) URLs`),
  followLinks: z.number().int().min(0).max(SCAN_LIMITS.followLinks).optional().describe('same-site links to follow, breadth first (default 0)'),
};

const intOrRaw = (value: string | undefined) => (value !== undefined && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

/** The REST shape of one scan: the list fields, plus pages, findings and browser from its report. */
function scanBody(scan: ScanQuery['scan']) {
  const { report, ...fields } = scan;
  const stored = report as ScanReport | null;
  return { ...fields, pages: stored?.pages ?? [], findings: stored?.findings ?? [], browser: stored?.browser ?? null };
}

/** A file name a browser keeps as it is: the scan's id and the artifact's name (`page-<n>-<visit>.jpg|har`). */
const artifactFileName = (scanId: string, name: string) => `site-scan-${scanId}-${name}`.replace(/[^A-Za-z0-9._-]/g, '_');

export const scansRoutes = [
  route<StartScanMutation>({
    method: 'POST',
    path: BASE,
    summary:
      'Queue a scan of 1 to 20 pages, plus up to followLinks same-site pages (Admin or above). Answers 202; a worker visits ' +
      'each page three times in Chromium (before any decision, after Reject all, after Accept all). One scan per project at ' +
      'a time (409), a daily quota per organization (429), 503 scanner_unavailable when this instance has no Chromium',
    auth: 'session',
    operation: 'StartScan',
    requestBody: z.object(scanTarget),
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['urls', 'followLinks']) }),
    respond: (data) => ({ status: 202, body: { scan: data.startScan } }),
    responses: {
      202: { description: 'Queued', schema: z.object({ scan: ScanSummaryItem }) },
      ...validationError,
      ...sessionErrors,
      409: { description: 'A scan of this project is already queued or running (conflict)', schema: ErrorBody },
      429: { description: "The organization's daily scan quota is used (rate_limited, Retry-After)", schema: ErrorBody },
      503: { description: 'No Chromium on this instance (scanner_unavailable): the message says what to install', schema: ErrorBody },
    },
  }),
  route<ScansQuery>({
    method: 'GET',
    path: BASE,
    summary: 'Scans, newest first, by cursor (Viewer or above); pages and findings are read per scan',
    auth: 'session',
    operation: 'Scans',
    queryParams: z.object({
      limit: z.string().optional().describe(`1 to ${SCAN_PAGE_MAX}, default 20`),
      cursor: z.string().optional().describe('nextCursor of the previous page'),
    }),
    variables: ({ params, query }) => ({ projectId: params.projectId, limit: intOrRaw(query.limit), cursor: query.cursor }),
    respond: (data) => ({ status: 200, body: data.scans }),
    responses: {
      200: { description: '{ scans, nextCursor }', schema: z.object({ scans: z.array(ScanSummaryItem), nextCursor: z.string().nullable() }) },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route<ScanScheduleQuery>({
    method: 'GET',
    path: `${BASE}/schedule`,
    summary: 'The scheduled scan; schedule "off" when none (Viewer or above)',
    auth: 'session',
    operation: 'ScanSchedule',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { schedule: data.scanSchedule } }),
    responses: { 200: { description: 'Schedule', schema: z.object({ schedule: Schedule }) }, ...sessionErrors },
  }),
  route<SetScanScheduleMutation>({
    method: 'PUT',
    path: `${BASE}/schedule`,
    summary:
      'Scan daily or weekly (first run one interval from now), or "off" (Admin or above). A scheduled scan that finds a new ' +
      'violation or unmapped cookie notifies the members and sends scan.completed to the webhook',
    auth: 'session',
    operation: 'SetScanSchedule',
    requestBody: z.object({ schedule: z.enum(['off', 'daily', 'weekly']), ...scanTarget, urls: scanTarget.urls.optional().describe('required unless off') }),
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['schedule', 'urls', 'followLinks']) }),
    respond: (data) => ({ status: 200, body: { schedule: data.setScanSchedule } }),
    responses: { 200: { description: 'Saved', schema: z.object({ schedule: Schedule }) }, ...validationError, ...sessionErrors },
  }),
  route<ScanQuery>({
    method: 'GET',
    path: `${BASE}/:scanId`,
    summary:
      'One scan with its pages and findings (Viewer or above). format=json|csv|html with download=1 (or format csv/html) serves ' +
      'the report, hashed like publish evidence (hashes.reportHash); a report exists once the scan is done (404 before)',
    auth: 'session',
    operation: 'Scan',
    queryParams: z.object({
      format: z.enum(FORMATS).optional().describe('json (default), csv or html: the report'),
      download: z.enum(['1', '0']).optional().describe('1: the report as an attachment'),
    }),
    variables: ({ params }) => ({ projectId: params.projectId, scanId: params.scanId }),
    respond: (data, { query, services }): RestResponse => {
      const format = (query.format ?? 'json') as Format;
      if (!FORMATS.includes(format)) {
        return errorResponse('validation_failed', 'Validation failed', { details: [{ path: ['format'], message: `Must be one of ${FORMATS.join(', ')}` }] });
      }
      const download = query.download === '1';
      if (format === 'json' && !download) return { status: 200, body: { scan: scanBody(data.scan) } };
      const report = data.scan.report as ScanReport | null;
      if (!report) return errorResponse('not_found', 'The scan has no report yet');
      const document = { project: data.project, report, generatedAt: services.now() };
      const body = format === 'json' ? `${JSON.stringify({ report }, null, 2)}\n` : format === 'csv' ? renderReportCsv(document) : renderReportHtml(document);
      return {
        status: 200,
        body,
        headers: {
          'Content-Type': CONTENT_TYPES[format],
          'Content-Disposition': `${download ? 'attachment' : 'inline'}; filename="site-scan-${data.project.slug}-${data.scan.id}.${format}"`,
          'Cache-Control': 'private, no-store',
          'X-Content-Type-Options': 'nosniff',
          ...(format === 'html' && htmlPageHeaders(EVIDENCE_HTML_CSP)),
        },
      };
    },
    responses: {
      200: {
        description: '{ scan } by default; the report with format=json&download=1 ({ report }), format=csv or format=html',
        content: {
          'application/json': z
            .union([z.object({ scan: ScanDetail }), z.object({ report: ScanReportBody }).describe('format=json&download=1: the report, as downloaded')])
            .describe('{ scan } without download=1; { report } with format=json&download=1'),
          'text/csv': z.string().describe('format=csv: the report as CSV'),
          'text/html': z.string().describe('format=html: the report as a printable self-contained page'),
        },
        headers: { 'Content-Disposition': 'inline or attachment (download=1), with a filename; on the report' },
      },
      400: { description: 'Unknown format (validation_failed)', schema: ErrorBody },
      ...sessionErrors,
    },
  }),
  route<ScanArtifactQuery>({
    method: 'GET',
    path: `${BASE}/:scanId/artifacts/:name`,
    summary:
      'A screenshot (image/jpeg) or HAR file (application/json, no bodies) of the scan, as an attachment (Viewer or above). ' +
      'ETag is its sha256, which the report lists (docs/scanner.md "Artifacts"); 404 for a name the scan has not',
    auth: 'session',
    operation: 'ScanArtifact',
    requestHeaders: conditionalHeaders,
    variables: ({ params }) => ({ projectId: params.projectId, scanId: params.scanId, name: params.name }),
    respond: (data, req): RestResponse => {
      const artifact = data.scan.artifact;
      if (!artifact?.contentBase64) return errorResponse('not_found', 'The scan has no artifact of that name');
      const headers = {
        'Content-Type': artifact.contentType,
        'Content-Disposition': `attachment; filename="${artifactFileName(data.scan.id, artifact.name)}"`,
        ETag: `"${artifact.sha256}"`,
        'Cache-Control': 'private, no-cache',
        'X-Content-Type-Options': 'nosniff',
      };
      if (etagMatches(req.headers['if-none-match'], headers.ETag)) return { status: 304, headers };
      return { status: 200, body: Buffer.from(artifact.contentBase64, 'base64'), headers };
    },
    responses: {
      200: {
        description: 'The file, as an attachment; ETag is its sha256 in quotes',
        content: {
          'image/jpeg': z.string().describe('page-<n>-before.jpg: the viewport of the before visit, banner included'),
          'application/json': z.record(z.string(), z.unknown()).describe('page-<n>-<visit>.har: HAR 1.2 of the visit, without bodies'),
        },
        headers: { ETag: 'the sha256 of the bytes, quoted', 'Content-Disposition': 'attachment, with a filename' },
      },
      304: { description: 'If-None-Match matched the ETag' },
      ...sessionErrors,
    },
  }),
  route<AddCookiesToDraftMutation>({
    method: 'POST',
    path: '/api/platform/projects/:projectId/consent/experience/cookies',
    summary:
      "Add cookie names (e.g. a scan's unmapped cookies) to the draft experience's `cookies` of the given purposes (Admin or " +
      'above): a draft edit audited as consent.experience_updated; names already listed stay as they are',
    auth: 'session',
    operation: 'AddCookiesToDraft',
    requestBody: z.object({ cookies: z.array(z.object({ name: z.string(), purposeKey: z.string() })).describe('1 to 50') }),
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['cookies']) }),
    respond: (data) => ({ status: 200, body: { experience: data.addCookiesToDraft } }),
    responses: {
      200: { description: 'The draft experience', schema: z.object({ experience: z.record(z.string(), z.unknown()) }) },
      ...validationError,
      ...sessionErrors,
    },
  }),
];
