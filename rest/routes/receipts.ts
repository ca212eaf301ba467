import { z } from 'zod';
import { exportLedger } from '../../src/ledger/service.js';
import { exportReceipts, wireReceipt } from '../../src/receipts/service.js';
import { RECEIPT_ACTIONS, receiptSource } from '../../src/sdk/consent.js';
import { STATS_INTERVALS, STATS_PLATFORMS } from '../../src/stats/service.js';
import { route, type RouteDef } from '../route.js';
import { sessionErrors, timestamp, validationError } from '../schemas.js';

const Receipt = z
  .object({
    id: z.string(),
    versionId: z.string(),
    versionNumber: z.number().int(),
    consentHash: z.string(),
    choices: z.record(z.string(), z.boolean()),
    installationId: z.string(),
    sdkVersion: z.string().nullable(),
    createdAt: timestamp,
    locale: z.string().optional().describe('BCP 47 tag the visitor saw; only when the SDK sent it'),
    gpc: z.boolean().optional().describe('The browser sent Global Privacy Control; only when the SDK sent it'),
    jurisdiction: z.string().optional().describe('Location code the SDK acted on (DE, US-CA); only when the SDK sent it'),
    action: z.enum(RECEIPT_ACTIONS).optional().describe('What the visitor did; only when the SDK sent it'),
    gpp: z.string().optional().describe('The GPP string the SDK produced; only when the SDK sent it'),
    tcf: z
      .object({ tcString: z.string(), addtlConsent: z.string().optional() })
      .optional()
      .describe('IAB TCF: the TC string and Google AC string the banner produced; only when the SDK sent them (docs/tcf.md)'),
    source: receiptSource.optional().describe('Where the receipt came from (SDK, version, platform, app); only when the SDK sent it'),
    subjectHash: z
      .string()
      .optional()
      .describe('HMAC(project pepper, sub) of the signed-in person it was made for (an opaque hash); only when signed in (docs/subjects.md)'),
  })
  .meta({ id: 'Receipt' });

const ids = z.array(z.number().int());
const DecodedTcf = z
  .object({
    tcString: z.string(),
    addtlConsent: z.string().nullable(),
    version: z.number().int(),
    cmpId: z.number().int(),
    cmpVersion: z.number().int(),
    consentScreen: z.number().int(),
    consentLanguage: z.string(),
    vendorListVersion: z.number().int(),
    policyVersion: z.number().int(),
    isServiceSpecific: z.boolean(),
    useNonStandardTexts: z.boolean(),
    purposeOneTreatment: z.boolean(),
    publisherCountryCode: z.string(),
    created: timestamp,
    lastUpdated: timestamp,
    purposeConsents: ids,
    purposeLegitimateInterests: ids,
    specialFeatureOptins: ids,
    vendorConsents: ids,
    vendorLegitimateInterests: ids,
    vendorsDisclosed: ids,
    publisherRestrictions: z.array(z.object({ purposeId: z.number().int(), type: z.string(), vendorIds: ids })),
    publisher: z
      .object({ purposeConsents: ids, purposeLegitimateInterests: ids, customPurposeConsents: ids, customPurposeLegitimateInterests: ids })
      .nullable()
      .describe('The publisher TC segment; null when the string has none'),
    additionalConsent: z
      .object({ version: z.number().int(), consented: ids, disclosed: ids })
      .nullable()
      .describe('The AC string: consented and disclosed-only Google ATP ids; null without one'),
  })
  .meta({ id: 'DecodedTcf' });

const base = '/api/platform/projects/:projectId/receipts';

const statsCounts = {
  receipts: z.number().int(),
  acceptedAll: z.number().int(),
  rejectedAll: z.number().int(),
  customised: z.number().int(),
  gpc: z.number().int(),
  purposes: z.record(z.string(), z.number().int()).describe('Purpose key → receipts that granted it'),
  actions: z
    .object(Object.fromEntries(RECEIPT_ACTIONS.map((action) => [action, z.number().int()])) as Record<(typeof RECEIPT_ACTIONS)[number], z.ZodNumber>)
    .describe('Receipts whose SDK reported each action (receipts without an action are not counted here)'),
  jurisdictions: z.record(z.string(), z.number().int()).describe('Location code (DE, US-CA) → receipts whose SDK reported it'),
  platforms: z
    .record(z.string(), z.number().int())
    .describe('Source platform (web, ios, android, other; unknown: receipts without a source) → receipts (issue 45)'),
};
const ConsentStatsBody = z
  .object({
    buckets: z.array(z.object({ start: z.iso.date().describe('First UTC day of the bucket'), ...statsCounts })),
    totals: z.object(statsCounts),
  })
  .meta({ id: 'ConsentStats' });

/** `limit` arrives as text; numbers go to GraphQL as Int, anything else fails its coercion as validation_failed. */
const intOrRaw = (value: string | undefined) => (value !== undefined && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

const CONTENT_TYPES = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  ledger: 'application/x-ndjson; charset=utf-8',
} as const;

export const receiptsRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: `${base}/:receiptId/tcf`,
    summary: 'A receipt’s IAB TC string and Google AC string, decoded by the IAB’s library (Viewer or above; docs/tcf.md)',
    auth: 'session',
    operation: 'ReceiptTcf',
    variables: ({ params }) => ({ projectId: params.projectId, receiptId: params.receiptId }),
    respond: (data) => ({ status: 200, body: data.receiptTcf }),
    responses: {
      200: { description: 'The decoded strings', schema: DecodedTcf },
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: base,
    summary: 'Receipts newest first, by cursor (Viewer or above)',
    auth: 'session',
    operation: 'Receipts',
    queryParams: z.object({
      limit: z.number().int().min(1).max(200).default(50).optional(),
      cursor: z.string().optional(),
      from: timestamp.optional().describe('inclusive'),
      to: timestamp.optional().describe('exclusive'),
      installationId: z.string().optional(),
    }),
    variables: ({ params, query }) => ({
      projectId: params.projectId,
      limit: intOrRaw(query.limit),
      cursor: query.cursor,
      from: query.from,
      to: query.to,
      installationId: query.installationId,
    }),
    respond: (data) => ({ status: 200, body: { ...data.receipts, receipts: data.receipts.receipts.map(wireReceipt) } }),
    responses: {
      200: { description: 'A page of receipts', schema: z.object({ receipts: z.array(Receipt), nextCursor: z.string().nullable() }) },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: `${base}/export`,
    summary:
      'Download every receipt in a time range, oldest first (csv or ndjson), streamed in constant memory; format=ledger: ' +
      'the sealed receipts with their inclusion paths and signed checkpoints, for consent-verify (docs/ledger.md)',
    auth: 'session',
    operation: 'ReceiptsExport',
    queryParams: z.object({
      format: z.enum(['csv', 'ndjson', 'ledger']).default('csv').optional(),
      from: timestamp.optional().describe('inclusive (ledger: of the checkpoints’ createdAt)'),
      to: timestamp.optional().describe('exclusive; default: when the export starts'),
    }),
    variables: ({ params, query }) => ({ projectId: params.projectId, format: query.format, from: query.from, to: query.to }),
    respond: (data, req) => {
      const plan = data.receiptsExport;
      const request = { ...plan, from: plan.from && new Date(plan.from), to: new Date(plan.to) };
      return {
        status: 200,
        headers: {
          'Content-Type': CONTENT_TYPES[plan.format as keyof typeof CONTENT_TYPES],
          'Content-Disposition': `attachment; filename="${plan.filename}"`,
          'Cache-Control': 'no-store',
        },
        stream: plan.format === 'ledger' ? exportLedger(req.services, request) : exportReceipts(req.services, request),
      };
    },
    responses: {
      200: {
        description: 'The export file (attachment): CSV with a header row, or NDJSON (one receipt object per line)',
        content: { 'text/csv': z.string(), 'application/x-ndjson': z.string() },
      },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: `${base}/stats`,
    summary: 'Consent analytics: receipts per UTC day, week or month and how they answered (Viewer or above)',
    auth: 'session',
    operation: 'ConsentStats',
    queryParams: z.object({
      from: z.iso.date().optional().describe('First UTC day, YYYY-MM-DD, inclusive; default: 29 days before `to`'),
      to: z.iso.date().optional().describe('Last UTC day, YYYY-MM-DD, inclusive; default: today (UTC); at most 5 years after `from`'),
      interval: z.enum(STATS_INTERVALS).default('day').optional().describe('Bucket size; weeks start on Monday'),
      versionId: z.string().optional().describe('Only receipts of this version of the project'),
      platform: z.enum(STATS_PLATFORMS).optional().describe('Only receipts from this platform (their source’s; unknown: receipts without a source)'),
    }),
    variables: ({ params, query }) => ({
      projectId: params.projectId,
      from: query.from,
      to: query.to,
      interval: query.interval,
      versionId: query.versionId,
      platform: query.platform,
    }),
    respond: (data) => ({ status: 200, body: data.consentStats }),
    responses: {
      200: {
        description:
          'Buckets oldest first, empty ones with zeros, and their totals. Counted from a daily rollup kept in each receipt’s ' +
          'transaction. acceptedAll: every optional purpose granted (also when the version has none); rejectedAll: every optional ' +
          'purpose denied; customised: the rest; gpc: the browser sent Global Privacy Control; actions and jurisdictions: as the SDK ' +
          'reported them on the receipts (docs/analytics.md)',
        schema: ConsentStatsBody,
      },
      ...validationError,
      ...sessionErrors,
    },
  }),
];
