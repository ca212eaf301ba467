// GraphQL types, queries and mutations of the consent domain: the draft
// (categories, purposes, notice), publishing and the published versions.
import { buildConfig, consentHash, storedConfig, type NoticeView } from '../../src/consent/config.js';
import { consentConfiguration } from '../../src/consent/configuration.js';
import { draftPreview } from '../../src/consent/preview.js';
import {
  createCategory,
  createPurpose,
  deleteCategory,
  deletePurpose,
  putNotice,
  replaceDraft,
  updateCategory,
  updatePurpose,
  type Draft,
} from '../../src/consent/draft.js';
import { DEFAULT_JURISDICTIONS, type JurisdictionRule } from '../../src/consent/jurisdictions.js';
import { DEFAULT_EXPERIENCE, putExperience, readExperience, type Experience } from '../../src/consent/experience.js';
import { publishDraft, type PublishedVersion } from '../../src/consent/versions.js';
import { builder } from '../builder.js';
import { Node } from './node.js';

export const ConsentCategory = builder.prismaObject('Category', {
  name: 'ConsentCategory',
  interfaces: [Node],
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    sortOrder: t.exposeInt('sortOrder'),
  }),
});

export const ConsentPurpose = builder.prismaObject('Purpose', {
  name: 'ConsentPurpose',
  interfaces: [Node],
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    required: t.exposeBoolean('required'),
    categoryId: t.exposeID('categoryId'),
    sortOrder: t.exposeInt('sortOrder'),
  }),
});

export const ConsentNotice = builder.objectRef<NoticeView>('ConsentNotice').implement({
  description: 'The notice text and branding; unset fields are empty strings',
  fields: (t) => ({
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    acceptLabel: t.exposeString('acceptLabel'),
    rejectLabel: t.exposeString('rejectLabel'),
    manageLabel: t.exposeString('manageLabel'),
    companyName: t.exposeString('companyName'),
    logoUrl: t.exposeString('logoUrl'),
    primaryColor: t.exposeString('primaryColor'),
  }),
});

/** A published, immutable version. `config` is exactly the SDK config response's `config`. */
export const ConsentVersion = builder.prismaObject('ConsentVersion', {
  interfaces: [Node],
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeInt('number'),
    publishedAt: t.expose('publishedAt', { type: 'DateTime' }),
    contentHash: t.exposeString('contentHash', { description: 'SHA-256 of canonical {number, config}; the SDK ETag' }),
    consentHash: t.exposeString('consentHash', { description: 'SHA-256 of the consent surface; receipts must match it' }),
    config: t.field({
      type: 'JSON',
      description: '{purposes, categories, notice} as the SDK receives it',
      select: { config: true },
      resolve: (version) => storedConfig(version.config),
    }),
    experience: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The experience published with the version (null when the project had none)',
      select: { experience: true },
      resolve: (version) => version.experience,
    }),
  }),
});

const JurisdictionRuleRef = builder.objectRef<Readonly<JurisdictionRule>>('JurisdictionRule').implement({
  description: 'Which consent mode applies where; the first rule matching the visitor’s location wins',
  fields: (t) => ({
    id: t.exposeString('id'),
    regions: t.stringList({ description: 'Countries (DE), US states (US-CA), EEA, US, UK or *', resolve: (rule) => [...rule.regions] }),
    mode: t.exposeString('mode', { description: 'opt-in, opt-out, notice or none' }),
  }),
});

const ConsentDraft = builder.objectRef<Draft>('ConsentDraft').implement({
  description: 'The editable configuration; never served to the SDK',
  fields: (t) => ({
    categories: t.field({ type: [ConsentCategory], resolve: (draft) => draft.categories }),
    purposes: t.field({ type: [ConsentPurpose], resolve: (draft) => draft.purposes }),
    notice: t.field({ type: ConsentNotice, resolve: (draft) => draft.notice }),
  }),
});

export const ConsentConfiguration = builder
  .objectRef<{ draft: Draft; experience: Experience | null; latestVersion: PublishedVersion | null; hasUnpublishedChanges: boolean }>(
    'ConsentConfiguration',
  )
  .implement({
    fields: (t) => ({
      draft: t.field({ type: ConsentDraft, resolve: (parent) => parent.draft }),
      experience: t.field({
        type: 'JSON',
        description: 'The draft experience settings and translations (the defaults until set)',
        resolve: (parent) => parent.experience ?? DEFAULT_EXPERIENCE,
      }),
      latestVersion: t.field({ type: ConsentVersion, nullable: true, resolve: (parent) => parent.latestVersion }),
      hasUnpublishedChanges: t.exposeBoolean('hasUnpublishedChanges', {
        description: 'Publishing now would change the published config (before the first publish: the draft is not empty)',
      }),
      draftConsentHash: t.string({
        description:
          'The consentHash the draft would publish with; when it differs from latestVersion.consentHash, visitors who ' +
          'answered the latest version are asked again (the console shows it before publishing)',
        resolve: (parent) => consentHash(buildConfig(parent.draft), parent.experience?.translations),
      }),
      jurisdictions: t.field({
        type: [JurisdictionRuleRef],
        description: 'The jurisdiction rules the SDK would apply after a publish: the draft’s own, or the default rules when it sets none',
        resolve: (parent) => (parent.experience?.jurisdictions?.length ? parent.experience.jurisdictions : DEFAULT_JURISDICTIONS),
      }),
      jurisdictionsAreDefault: t.boolean({
        description: 'The draft sets no jurisdiction rules: the service’s default rules apply (docs/jurisdictions.md)',
        resolve: (parent) => !parent.experience?.jurisdictions?.length,
      }),
    }),
  });

const NoticeInput = builder.inputType('ConsentNoticeInput', {
  description: 'Replaces the whole notice: a field left out becomes the empty string',
  fields: (t) => ({
    title: t.string(),
    description: t.string(),
    acceptLabel: t.string(),
    rejectLabel: t.string(),
    manageLabel: t.string(),
    companyName: t.string(),
    logoUrl: t.string({ description: 'https URL or empty' }),
    primaryColor: t.string({ description: '#rrggbb or empty' }),
  }),
});
const CategoryInput = builder.inputType('ConsentCategoryInput', {
  fields: (t) => ({ name: t.string(), sortOrder: t.int() }),
});
const PurposeInput = builder.inputType('ConsentPurposeInput', {
  fields: (t) => ({
    key: t.string({ description: '^[a-z][a-z0-9_]{0,63}$, unique within the project' }),
    name: t.string(),
    description: t.string(),
    required: t.boolean(),
    categoryId: t.id(),
    sortOrder: t.int(),
  }),
});
const DraftCategoryInput = builder.inputType('ConsentDraftCategoryInput', {
  fields: (t) => ({
    id: t.id({ description: 'An existing category; leave out to create one' }),
    ref: t.string({ description: 'A client reference; purposes of the same request may use it as categoryId' }),
    name: t.string(),
    sortOrder: t.int(),
  }),
});
const DraftPurposeInput = builder.inputType('ConsentDraftPurposeInput', {
  fields: (t) => ({
    id: t.id({ description: 'An existing purpose; leave out to create one' }),
    key: t.string(),
    name: t.string(),
    description: t.string(),
    required: t.boolean(),
    categoryId: t.string({ description: 'A category id kept by this request, or a ref of it' }),
    sortOrder: t.int(),
  }),
});
const DraftInput = builder.inputType('ConsentDraftInput', {
  description: 'The whole draft: rows with an id are kept, rows without are created, rows left out are deleted',
  fields: (t) => ({
    categories: t.field({ type: [DraftCategoryInput] }),
    purposes: t.field({ type: [DraftPurposeInput] }),
    notice: t.field({ type: NoticeInput }),
  }),
});

const CategoryPayload = builder.simpleObject('ConsentCategoryPayload', {
  fields: (t) => ({ category: t.field({ type: ConsentCategory }) }),
});
const PurposePayload = builder.simpleObject('ConsentPurposePayload', {
  fields: (t) => ({ purpose: t.field({ type: ConsentPurpose }) }),
});
const NoticePayload = builder.simpleObject('ConsentNoticePayload', {
  fields: (t) => ({ notice: t.field({ type: ConsentNotice }) }),
});
const DeletedPayload = builder.simpleObject('ConsentDeletedPayload', { fields: (t) => ({ id: t.id() }) });
const PublishPayload = builder.simpleObject('PublishConsentPayload', {
  fields: (t) => ({ version: t.field({ type: ConsentVersion }) }),
});

const viewer = (projectId: string | number) => ({ projectRole: { projectId: String(projectId), role: 'VIEWER' as const } });
const admin = (projectId: string | number) => ({ projectRole: { projectId: String(projectId), role: 'ADMIN' as const } });

builder.queryFields((t) => ({
  consentConfiguration: t.field({
    type: ConsentConfiguration,
    description: 'The draft, the latest published version and whether they differ (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => viewer(args.projectId),
    resolve: (_root, args, ctx) => consentConfiguration(ctx.prisma, String(args.projectId)),
  }),
  consentVersions: t.prismaField({
    type: ['ConsentVersion'],
    description: 'Published versions, newest first (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => viewer(args.projectId),
    resolve: (query, _root, args, ctx) =>
      ctx.prisma.consentVersion.findMany({ ...query, where: { projectId: String(args.projectId) }, orderBy: { number: 'desc' } }),
  }),
  consentPreview: t.field({
    type: 'JSON',
    description:
      'What GET /api/sdk/v2/config would answer if the draft were published now, in `locale` (the default locale when ' +
      'absent or not translated): the console renders it with the real SDK (Viewer or above). version.id is "draft"',
    args: { projectId: t.arg.id({ required: true }), locale: t.arg.string() },
    authScopes: (_root, args) => viewer(args.projectId),
    resolve: async (_root, args, ctx) =>
      draftPreview(String(args.projectId), await consentConfiguration(ctx.prisma, String(args.projectId)), args.locale ?? undefined, ctx.services.now()),
  }),
  consentExperience: t.field({
    type: 'JSON',
    description: 'The draft experience: settings and translations published with the next version (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => viewer(args.projectId),
    resolve: async (_root, args, ctx) => (await readExperience(ctx.prisma, String(args.projectId))) ?? DEFAULT_EXPERIENCE,
  }),
}));

builder.mutationFields((t) => ({
  createConsentCategory: t.field({
    type: CategoryPayload,
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: CategoryInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({ category: await createCategory(ctx.services, String(args.projectId), args.input) }),
  }),
  updateConsentCategory: t.field({
    type: CategoryPayload,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: CategoryInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({
      category: await updateCategory(ctx.services, String(args.projectId), String(args.id), args.input),
    }),
  }),
  deleteConsentCategory: t.field({
    type: DeletedPayload,
    description: 'Refused (conflict) while purposes use the category',
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: (_root, args, ctx) => deleteCategory(ctx.services, String(args.projectId), String(args.id)),
  }),
  createConsentPurpose: t.field({
    type: PurposePayload,
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: PurposeInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({ purpose: await createPurpose(ctx.services, String(args.projectId), args.input) }),
  }),
  updateConsentPurpose: t.field({
    type: PurposePayload,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: PurposeInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({
      purpose: await updatePurpose(ctx.services, String(args.projectId), String(args.id), args.input),
    }),
  }),
  deleteConsentPurpose: t.field({
    type: DeletedPayload,
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: (_root, args, ctx) => deletePurpose(ctx.services, String(args.projectId), String(args.id)),
  }),
  updateConsentNotice: t.field({
    type: NoticePayload,
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: NoticeInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({ notice: await putNotice(ctx.services, String(args.projectId), args.input) }),
  }),
  updateConsentExperience: t.field({
    type: 'JSON',
    description: 'Replaces the whole draft experience; a field left out takes its default (Admin or above)',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: 'JSON', required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: (_root, args, ctx) => putExperience(ctx.services, String(args.projectId), args.input),
  }),
  replaceConsentDraft: t.field({
    type: ConsentConfiguration,
    description: 'Replaces the whole draft in one transaction',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: DraftInput, required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => {
      await replaceDraft(ctx.services, String(args.projectId), args.input);
      return consentConfiguration(ctx.prisma, String(args.projectId));
    },
  }),
  publishConsent: t.field({
    type: PublishPayload,
    description: 'Publishes the draft as the next immutable numbered version',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => admin(args.projectId),
    resolve: async (_root, args, ctx) => ({
      version: await publishDraft(ctx.services, String(args.projectId), ctx.access.requireViewer().id),
    }),
  }),
}));
