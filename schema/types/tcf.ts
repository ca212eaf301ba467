// IAB TCF for the operator console (docs/tcf.md, "Console"): the newest held Global Vendor List and Google's ATPs,
// searched and paged for the TCF screen; what publishing would refuse in the draft's TCF settings (the go-live
// checklist); and the vendor-list answer tcf.js would get for the settings being edited (the preview).
import type { Declarations } from '@iabtechlabtcf/core';
import { atpConnection, vendorConnection, type ConsoleVendor } from '../../src/tcf/console-lists.js';
import { tcfDraftIssues } from '../../src/tcf/draft.js';
import { vendorListAnswer } from '../../src/tcf/sdk-vendor-list.js';
import { readAcProviders, readVendorList, type AcProvider, type StoredVendorList } from '../../src/tcf/vendor-list.js';
import { builder } from '../builder.js';
import { ConsentConfiguration } from './consent.js';

const FIRST = 'Page size, 1 to 100 (default 20)';
const AFTER = 'The endCursor of the previous page';

const TcfDeclaration = builder.simpleObject('TcfDeclaration', {
  description: 'A purpose, special purpose, feature or special feature of the vendor list (its English text)',
  fields: (t) => ({ id: t.int(), name: t.string(), description: t.string() }),
});

const TcfStandardTexts = builder.simpleObject('TcfStandardTexts', {
  description: 'The IAB’s standard texts a CMP shows as they are (TCF v2.4, Policies 5.0.b)',
  fields: (t) => ({ features: t.string({ nullable: true, description: 'Introduces the features (shown above them, without controls)' }) }),
});

const TcfVendor = builder.objectRef<ConsoleVendor>('TcfVendor').implement({
  description: 'A vendor of the Global Vendor List, as declared there',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    purposes: t.exposeIntList('purposes', { description: 'Purposes on consent' }),
    legIntPurposes: t.exposeIntList('legIntPurposes', { description: 'Purposes on legitimate interest' }),
    flexiblePurposes: t.exposeIntList('flexiblePurposes', { description: 'Purposes whose basis a publisher restriction may switch' }),
    specialPurposes: t.exposeIntList('specialPurposes'),
    features: t.exposeIntList('features'),
    specialFeatures: t.exposeIntList('specialFeatures'),
    deletedDate: t.string({ nullable: true, description: 'Set when the vendor leaves the list (then it is not listed once past)', resolve: (v) => (v.deletedDate ? String(v.deletedDate) : null) }),
  }),
});

const TcfAtp = builder.objectRef<AcProvider>('TcfAtp').implement({
  description: "A provider of Google's Additional Consent list (an ATP not on the GVL)",
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    policyUrl: t.exposeString('policyUrl'),
    domains: t.exposeStringList('domains'),
  }),
});

const VendorConnection = builder.connectionObject(
  { type: TcfVendor, name: 'TcfVendorConnection', fields: (t) => ({ totalCount: t.int({ description: 'Vendors matching the filters', resolve: (c) => (c as unknown as { totalCount: number }).totalCount }) }) },
  { name: 'TcfVendorConnectionEdge' },
);
const AtpConnection = builder.connectionObject(
  { type: TcfAtp, name: 'TcfAtpConnection', fields: (t) => ({ totalCount: t.int({ description: 'Providers matching the search', resolve: (c) => (c as unknown as { totalCount: number }).totalCount }) }) },
  { name: 'TcfAtpConnectionEdge' },
);

const declarations = (map: Declarations['purposes']) =>
  Object.values(map)
    .map(({ id, name, description }) => ({ id, name, description }))
    .sort((a, b) => a.id - b.id);

const TcfVendorList = builder.objectRef<StoredVendorList>('TcfVendorList').implement({
  description: 'The newest Global Vendor List the service holds: the one the next publish pins',
  fields: (t) => ({
    version: t.int({ resolve: (list) => list.version }),
    tcfPolicyVersion: t.int({ resolve: (list) => list.tcfPolicyVersion }),
    lastUpdated: t.string({ resolve: (list) => String(list.content.lastUpdated) }),
    purposes: t.field({ type: [TcfDeclaration], resolve: (list) => declarations(list.content.purposes) }),
    specialPurposes: t.field({ type: [TcfDeclaration], resolve: (list) => declarations(list.content.specialPurposes) }),
    features: t.field({ type: [TcfDeclaration], resolve: (list) => declarations(list.content.features) }),
    specialFeatures: t.field({ type: [TcfDeclaration], resolve: (list) => declarations(list.content.specialFeatures) }),
    standardTexts: t.field({
      type: TcfStandardTexts,
      nullable: true,
      description: 'The IAB’s standard texts of the list (GVL `standardTexts`, TCF v2.4), in English; null when the list has none',
      resolve: (list) => list.content.standardTexts ?? null,
    }),
    vendors: t.field({
      type: VendorConnection,
      description: 'Vendors not deleted, by id; the filters combine (and)',
      args: {
        first: t.arg.int({ description: FIRST }),
        after: t.arg.string({ description: AFTER }),
        search: t.arg.string({ description: 'Name contains it (any case), or it is the vendor id' }),
        purpose: t.arg.int({ description: 'Declares this purpose (consent or legitimate interest)' }),
        specialFeature: t.arg.int({ description: 'Declares this special feature' }),
        legitimateInterest: t.arg.boolean({ description: 'Claims legitimate interest (for `purpose` when given, else for any purpose); false: does not' }),
        ids: t.arg.intList({ description: 'Only these vendor ids' }),
      },
      resolve: (list, args, ctx) => vendorConnection(list, args, ctx.services.now()) as never,
    }),
    googleAtps: t.field({
      type: AtpConnection,
      description: "Google's Additional Consent providers (the live list; empty while none is held), by id",
      args: {
        first: t.arg.int({ description: FIRST }),
        after: t.arg.string({ description: AFTER }),
        search: t.arg.string({ description: 'Name contains it (any case), or it is the provider id' }),
        ids: t.arg.intList({ description: 'Only these provider ids' }),
      },
      resolve: async (_list, args, ctx) => atpConnection((await readAcProviders(ctx.prisma)) ?? [], args) as never,
    }),
    googleAtpListHeld: t.boolean({
      description: "Whether Google's Additional Consent providers list is held",
      resolve: async (_list, _args, ctx) => (await readAcProviders(ctx.prisma)) !== null,
    }),
    sdkAnswer: t.field({
      type: 'JSON',
      description:
        'What GET /api/sdk/v2/tcf/vendor-list would answer with these vendors and ATPs from this list, texts in `language` ' +
        '(ISO 639-1; English when its file is not held): the console’s TCF preview feeds it to the real tcf.js',
      args: { vendors: t.arg.intList({ required: true }), googleAtps: t.arg.intList({ required: true }), language: t.arg.string() },
      resolve: (list, args, ctx) => vendorListAnswer(ctx.prisma, list, args, (args.language ?? 'en').split('-')[0]!.toLowerCase()),
    }),
  }),
});

const ConsentIssue = builder.simpleObject('ConsentIssue', {
  description: 'Something that blocks publishing, at its path in the experience (as updateConsentExperience’s validation_failed details say it; publishConsent’s start with experience)',
  fields: (t) => ({ path: t.stringList(), message: t.string() }),
});

builder.queryFields((t) => ({
  tcfVendorList: t.field({
    type: TcfVendorList,
    nullable: true,
    description: 'The newest Global Vendor List held (what the next publish pins); null while none is held (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' as const } }),
    resolve: (_root, _args, ctx) => readVendorList(ctx.prisma),
  }),
}));

builder.objectFields(ConsentConfiguration, (t) => ({
  tcfFileProblems: t.stringList({
    description:
      'Files of the IAB or Google the service could not fetch or refused at its last try (each message names the URL), ' +
      'while projects use TCF; empty when every file was read. The console’s TCF checklist shows them',
    resolve: async (_parent, _args, ctx) =>
      (await ctx.prisma.tcfFetchState.findMany({ where: { lastError: { not: null } }, orderBy: { resource: 'asc' } })).map((row) => row.lastError!),
  }),
  tcfIssues: t.field({
    type: [ConsentIssue],
    description:
      'What publishing would refuse in the draft’s IAB TCF settings, checked against the newest vendor list held ' +
      '(the same check as publishConsent; empty without TCF). The console’s go-live checklist shows them',
    resolve: async (parent, _args, ctx) => {
      const keys = new Set(parent.draft.purposes.map((purpose) => purpose.key));
      const { issues } = await tcfDraftIssues(ctx.prisma, parent.experience?.tcf, keys, true);
      return issues.map((issue) => ({ path: issue.path.map(String), message: issue.message }));
    },
  }),
}));
