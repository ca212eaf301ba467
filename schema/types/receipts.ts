import { listReceipts, planExport, type ExportRequest, type ReceiptView } from '../../src/receipts/service.js';
import { builder } from '../builder.js';
import { receiptTcf } from '../../src/tcf/receipt-tcf.js';
import { decodeTcfReceipt } from '../../src/tcf/tc-string.js';
import { Node } from './node.js';

const ReceiptSourceRef = builder.objectRef<NonNullable<ReceiptView['source']>>('ReceiptSource').implement({
  description: 'Where a receipt came from, as its SDK said (issue 45)',
  fields: (t) => ({
    sdk: t.exposeString('sdk', { description: 'browser, core or react-native' }),
    sdkVersion: t.exposeString('sdkVersion', { description: 'The SDK package’s version' }),
    platform: t.exposeString('platform', { description: 'web, ios, android or other' }),
    appId: t.exposeString('appId', { nullable: true, description: 'The app’s bundle id or package name, when sent' }),
    appVersion: t.exposeString('appVersion', { nullable: true, description: 'The app’s version, when sent' }),
  }),
});

export const Receipt = builder.objectRef<ReceiptView>('Receipt').implement({
  interfaces: [Node],
  description: 'An append-only consent receipt (no IP, e-mail or fingerprint is ever stored)',
  fields: (t) => ({
    id: t.exposeID('id'),
    versionId: t.exposeID('versionId'),
    versionNumber: t.exposeInt('versionNumber'),
    consentHash: t.exposeString('consentHash'),
    choices: t.expose('choices', { type: 'JSON', description: 'Purpose key → granted, as recorded' }),
    installationId: t.exposeString('installationId'),
    sdkVersion: t.exposeString('sdkVersion', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    locale: t.exposeString('locale', { nullable: true, description: 'BCP 47 tag of the language the visitor saw, when the SDK sent it' }),
    gpc: t.exposeBoolean('gpc', { nullable: true, description: 'The browser sent Global Privacy Control, when the SDK said' }),
    jurisdiction: t.exposeString('jurisdiction', { nullable: true, description: 'Location code the SDK acted on (DE, US-CA), when it said' }),
    action: t.exposeString('action', {
      nullable: true,
      description: 'What the visitor did (accept_all, reject_all, custom, opt_out, gpc), when the SDK said',
    }),
    gpp: t.exposeString('gpp', { nullable: true, description: 'The GPP string the SDK produced, when it sent one' }),
    tcString: t.exposeString('tcString', { nullable: true, description: 'The IAB TC string the TCF banner produced, when the SDK sent one (docs/tcf.md)' }),
    addtlConsent: t.exposeString('addtlConsent', { nullable: true, description: "Google's Additional Consent string, when the SDK sent one" }),
    source: t.expose('source', {
      type: ReceiptSourceRef,
      nullable: true,
      description: 'Where the receipt came from (SDK, version, platform, app), when the SDK sent it',
    }),
    subjectHash: t.exposeString('subjectHash', {
      nullable: true,
      description: 'HMAC(project pepper, sub) of the signed-in person it was made for; null when the installation was not signed in (docs/subjects.md)',
    }),
    tcf: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The TC string and AC string decoded by the IAB’s library (purposes, vendors, legitimate interests, special features, publisher ' +
        'restrictions, publisher segment, AC providers); null without a TC string',
      resolve: (receipt) => (receipt.tcString === null ? null : decodeTcfReceipt(receipt.tcString, receipt.addtlConsent)),
    }),
  }),
});

const ReceiptPage = builder.simpleObject('ReceiptPage', {
  fields: (t) => ({
    receipts: t.field({ type: [Receipt] }),
    nextCursor: t.string({ nullable: true }),
  }),
});

const ReceiptExport = builder.objectRef<ExportRequest>('ReceiptExport').implement({
  description: 'What a receipts export will contain; REST streams it as a download',
  fields: (t) => ({
    projectId: t.exposeID('projectId'),
    format: t.exposeString('format'),
    from: t.expose('from', { type: 'DateTime', nullable: true }),
    to: t.expose('to', { type: 'DateTime' }),
    filename: t.exposeString('filename'),
  }),
});

builder.queryFields((t) => ({
  receipts: t.field({
    type: ReceiptPage,
    description: 'Receipts newest first, by cursor (Viewer or above); from inclusive, to exclusive',
    args: {
      projectId: t.arg.id({ required: true }),
      limit: t.arg.int(),
      cursor: t.arg.string(),
      from: t.arg.string(),
      to: t.arg.string(),
      installationId: t.arg.string(),
    },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, ...input }, ctx) => listReceipts(ctx.services, String(projectId), withoutNulls(input)),
  }),
  receiptTcf: t.field({
    type: 'JSON',
    description: 'A receipt’s TC string and AC string decoded (Viewer or above); not_found without a TC string',
    args: { projectId: t.arg.id({ required: true }), receiptId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, receiptId }, ctx) => receiptTcf(ctx.services, String(projectId), String(receiptId)),
  }),
  receiptsExport: t.field({
    type: ReceiptExport,
    description: 'Authorises and describes a receipts export (csv or ndjson, oldest first; ledger: with checkpoints and inclusion paths)',
    args: { projectId: t.arg.id({ required: true }), format: t.arg.string(), from: t.arg.string(), to: t.arg.string() },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, ...input }, ctx) => planExport(ctx.services, String(projectId), withoutNulls(input)),
  }),
}));

/** GraphQL nulls mean "not given" for these optional filters. */
function withoutNulls(input: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));
}
