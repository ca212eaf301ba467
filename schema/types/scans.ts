// The site scanner (extensions.md section 7, docs/scanner.md): scans and their findings, the schedule,
// and adding the cookies a scan found to the draft. `Project.scans` (the connection) lives in graph.ts.
import type { Finding } from '../../src/scanner/findings.js';
import { addCookiesToDraft } from '../../src/scanner/draft-cookies.js';
import {
  findingsOfScan,
  getScan,
  getScanSchedule,
  listScans,
  reportOf,
  setScanSchedule,
  startScan,
  summaryOfScan,
  type ScanArtifactRow,
  type ScanRow,
  type ScheduleView,
} from '../../src/scanner/service.js';
import { graphLoaders } from '../../src/graph/loaders.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

const ScanSubject = builder.simpleObject('ScanSubject', {
  description: 'What a finding is about',
  fields: (t) => ({
    kind: t.string({ description: 'cookie, storage, request (a host) or page' }),
    name: t.string({ description: 'The cookie name, storage key, host, or the page URL' }),
  }),
});

export const ScanFinding = builder.objectRef<Finding>('ScanFinding').implement({
  description: 'One finding with its evidence (docs/scanner.md, "Findings")',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'before_consent, after_reject, unclassified_request, unmapped, sdk_missing, banner_missing, insecure_form, no_https_redirect, tls_invalid, gcm_missing_default, gcm_granted_before_decision, gcm_granted_after_reject or gcm_not_updated_after_accept' }),
    pageUrl: t.exposeString('pageUrl'),
    subject: t.field({ type: ScanSubject, resolve: (finding) => finding.subject }),
    category: t.exposeString('category', { nullable: true, description: 'necessary, functional, analytics, marketing or unknown; null for page findings' }),
    vendor: t.exposeString('vendor', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    suggestedPurposeKey: t.exposeString('suggestedPurposeKey', { nullable: true, description: 'unmapped cookies: the draft purpose their category suggests' }),
    evidence: t.field({ type: 'JSON', description: 'The visit and what the browser reported (cookie, storage key or request)', resolve: (finding) => finding.evidence }),
  }),
});

export const ScanArtifact = builder.objectRef<ScanArtifactRow>('ScanArtifact').implement({
  description: 'A screenshot of a page as the visitor first saw it, or a HAR file of a visit (docs/scanner.md, "Artifacts")',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'page-<n>-before.jpg (screenshot) or page-<n>-<visit>.har; n counts the scanned pages from 1' }),
    contentType: t.exposeString('contentType', { description: 'image/jpeg or application/json (HAR 1.2, without bodies)' }),
    size: t.exposeInt('size', { description: 'Bytes' }),
    sha256: t.exposeString('sha256', { description: 'Lowercase hex SHA-256 of the bytes, as listed in the report (artifacts.files)' }),
    contentBase64: t.string({
      nullable: true,
      description: 'The bytes, base64; only on `Scan.artifact(name)` (null in the `artifacts` list). REST serves them raw',
      resolve: (artifact) => (artifact.bytes ? Buffer.from(artifact.bytes).toString('base64') : null),
    }),
  }),
});

export const Scan = builder.objectRef<ScanRow>('Scan').implement({
  description: 'A scan of pages of the site: three visits each, in Chromium (docs/scanner.md)',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    projectId: t.exposeID('projectId'),
    status: t.exposeString('status', { description: 'queued, running, done or failed' }),
    trigger: t.exposeString('trigger', { description: 'manual or schedule' }),
    urls: t.exposeStringList('urls'),
    followLinks: t.exposeInt('followLinks'),
    attempts: t.exposeInt('attempts', { description: 'Runs started: 2 when the first died with its instance' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    versionNumber: t.exposeInt('versionNumber', { nullable: true, description: 'The version that was live when the scan ran' }),
    error: t.exposeString('error', { nullable: true, description: 'Why a scan failed (or why its first run did)' }),
    reportHash: t.exposeString('reportHash', { nullable: true, description: 'SHA-256 of the canonical JSON of the report without hashes.reportHash' }),
    summary: t.field({ type: 'JSON', nullable: true, resolve: (scan) => summaryOfScan(scan) }),
    pages: t.field({
      type: 'JSON',
      description: 'Each page with its three visits (cookies, storage keys, requests to other sites, refused requests, WebSockets), its links and forms; [] until done. Read one scan at a time',
      resolve: async (scan, _args, ctx) => reportOf(await full(scan, ctx))?.pages ?? [],
    }),
    findings: t.field({
      type: [ScanFinding],
      description: '[] until done. Read one scan at a time',
      resolve: async (scan, _args, ctx) => findingsOfScan(await full(scan, ctx)),
    }),
    report: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The whole report as downloaded (with browser, catalogue and hashes); null until done',
      resolve: async (scan, _args, ctx) => reportOf(await full(scan, ctx)),
    }),
    artifacts: t.field({
      type: [ScanArtifact],
      description: 'Its screenshots and HAR files, without their bytes (read one with `artifact`); [] until done',
      resolve: (scan, _args, ctx) => graphLoaders(ctx).scanArtifacts.load(scan.id),
    }),
    artifact: t.field({
      type: ScanArtifact,
      nullable: true,
      description: 'One screenshot or HAR file with its bytes (contentBase64); null for a name the scan has not',
      args: { name: t.arg.string({ required: true }) },
      resolve: (scan, args, ctx) => graphLoaders(ctx).scanArtifact.load({ scanId: scan.id, name: args.name }),
    }),
  }),
});

/** A scan read in a list has no report: read it whole when a report field is asked for. */
async function full(scan: ScanRow, ctx: { prisma: Parameters<typeof getScan>[0] }): Promise<ScanRow> {
  if (scan.report !== undefined || scan.status !== 'done') return scan;
  return getScan(ctx.prisma, scan.projectId, scan.id);
}

const ScanList = builder.simpleObject('ScanList', {
  fields: (t) => ({ scans: t.field({ type: [Scan] }), nextCursor: t.string({ nullable: true }) }),
});

export const ScanSchedule = builder.objectRef<ScheduleView>('ScanSchedule').implement({
  fields: (t) => ({
    schedule: t.exposeString('schedule', { description: 'off, daily or weekly' }),
    urls: t.exposeStringList('urls'),
    followLinks: t.exposeInt('followLinks'),
    nextRunAt: t.expose('nextRunAt', { type: 'DateTime', nullable: true }),
  }),
});

const StartScanInput = builder.inputType('StartScanInput', {
  fields: (t) => ({
    urls: t.stringList({ description: '1 to 20 absolute http(s) URLs' }),
    followLinks: t.int({ description: 'Same-site links to follow, breadth first: 0 to 50 more pages (default 0)' }),
  }),
});

const ScanScheduleInput = builder.inputType('ScanScheduleInput', {
  fields: (t) => ({
    schedule: t.string({ description: 'off, daily or weekly' }),
    urls: t.stringList(),
    followLinks: t.int(),
  }),
});

const DraftCookieInput = builder.inputType('DraftCookieInput', {
  fields: (t) => ({ name: t.string(), purposeKey: t.string() }),
});

const AddCookiesToDraftInput = builder.inputType('AddCookiesToDraftInput', {
  fields: (t) => ({ cookies: t.field({ type: [DraftCookieInput] }) }),
});

const projectScope = (role: 'ADMIN' | 'VIEWER') => (_root: unknown, args: { projectId: string | number }) => ({
  projectRole: { projectId: String(args.projectId), role },
});

builder.queryFields((t) => ({
  scans: t.field({
    type: ScanList,
    description: 'Scans, newest first, by cursor (Viewer or above); without pages and findings: read one scan for those',
    args: { projectId: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    authScopes: projectScope('VIEWER'),
    resolve: (_root, args, ctx) => listScans(ctx.prisma, String(args.projectId), { limit: args.limit, cursor: args.cursor }),
  }),
  scan: t.field({
    type: Scan,
    description: 'One scan with its report (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }), scanId: t.arg.id({ required: true }) },
    authScopes: projectScope('VIEWER'),
    resolve: (_root, args, ctx) => getScan(ctx.prisma, String(args.projectId), String(args.scanId)),
  }),
  scanSchedule: t.field({
    type: ScanSchedule,
    description: 'The scheduled scan, schedule "off" when none (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('VIEWER'),
    resolve: (_root, args, ctx) => getScanSchedule(ctx.prisma, String(args.projectId)),
  }),
}));

builder.mutationFields((t) => ({
  startScan: t.field({
    type: Scan,
    description:
      'Queues a scan (Admin or above). 409 conflict while one is queued or running, 429 rate_limited over the daily quota, ' +
      '503 scanner_unavailable when this instance has no Chromium',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: StartScanInput, required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => startScan(ctx.services, String(args.projectId), args.input),
  }),
  setScanSchedule: t.field({
    type: ScanSchedule,
    description: 'Daily or weekly scans of the given pages, or off (Admin or above)',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: ScanScheduleInput, required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => setScanSchedule(ctx.services, String(args.projectId), args.input),
  }),
  addCookiesToDraft: t.field({
    type: 'JSON',
    description:
      "Adds cookie names to the draft experience's `cookies` lists of the given purposes (Admin or above): a draft edit, " +
      'audited as consent.experience_updated; names already listed are kept as they are. Answers the experience',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: AddCookiesToDraftInput, required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => addCookiesToDraft(ctx.services, String(args.projectId), args.input),
  }),
}));
