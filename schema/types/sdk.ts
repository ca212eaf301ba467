import { sdkTcfVendorList } from '../../src/tcf/sdk-vendor-list.js';
import { publishableKeyStatus } from '../../src/sdk/access.js';
import type { PublishedVersion } from '../../src/consent/versions.js';
import { sdkConfig, type SdkConfig } from '../../src/sdk/config.js';
import { sdkConfigV2, type SdkConfigV2 } from '../../src/sdk/config-v2.js';
import { cookieDeclaration } from '../../src/scanner/declaration.js';
import type { Placement } from '../../src/consent/jurisdictions.js';
import { recordConsent, type ConsentAck } from '../../src/sdk/consent.js';
import { latestDecision, type SdkDecision } from '../../src/sdk/decision.js';
import { getAllowedOrigins, updateAllowedOrigins, type AllowedOrigins } from '../../src/sdk/origins.js';
import type { SdkRefusalRow } from '../../src/sdk/refusals.js';
import { builder } from '../builder.js';

// --- Allowed origins (operator side) ---

export const AllowedOriginsRef = builder.objectRef<AllowedOrigins>('AllowedOrigins').implement({
  description: 'Which browser origins may call the SDK API with this project’s keys',
  fields: (t) => ({
    enforce: t.exposeBoolean('enforce'),
    origins: t.exposeStringList('origins'),
  }),
});

export const SdkRefusalRef = builder.objectRef<SdkRefusalRow>('SdkRefusal').implement({
  description:
    'The last SDK request of one kind the service refused for the project (recorded at most once a minute per kind), ' +
    'so the console can say why a site does not show the banner',
  fields: (t) => ({
    kind: t.exposeString('kind', {
      description:
        'The SDK error code the site got: revoked_key, origin_not_allowed, or invalid_key (an unknown key that starts like one of the project’s keys)',
    }),
    origin: t.exposeString('origin', { nullable: true, description: 'The Origin header of the refused request; null when it had none' }),
    keyPrefix: t.exposeString('keyPrefix', { nullable: true, description: 'The first 14 characters of the key the site sent (pk_live_ and 6)' }),
    seenAt: t.expose('seenAt', { type: 'DateTime', description: 'When it was refused (the latest, to within a minute)' }),
  }),
});

const AllowedOriginsInput = builder.inputType('AllowedOriginsInput', {
  fields: (t) => ({ enforce: t.boolean(), origins: t.stringList() }),
});

builder.queryField('allowedOrigins', (t) =>
  t.field({
    type: AllowedOriginsRef,
    description: 'The project’s allowed origins (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => getAllowedOrigins(ctx.services, String(args.projectId)),
  }),
);

builder.mutationField('updateAllowedOrigins', (t) =>
  t.field({
    type: AllowedOriginsRef,
    description: 'Sets enforcement and/or replaces the origin list (Admin or above)',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: AllowedOriginsInput, required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'ADMIN' } }),
    resolve: (_root, args, ctx) =>
      updateAllowedOrigins(ctx.services, String(args.projectId), {
        ...(args.input.enforce != null && { enforce: args.input.enforce }),
        ...(args.input.origins != null && { origins: args.input.origins }),
      }),
  }),
);

// --- The browser SDK API: authenticated by a publishable key (Bearer), never by an operator session ---

const SdkVersion = builder.objectRef<PublishedVersion>('SdkVersion').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeInt('number'),
    publishedAt: t.expose('publishedAt', { type: 'DateTime' }),
    contentHash: t.exposeString('contentHash'),
    consentHash: t.exposeString('consentHash'),
  }),
});

const SdkConfigRef = builder.objectRef<SdkConfig>('SdkConfig').implement({
  description: 'The latest published consent version of the key’s project',
  fields: (t) => ({
    projectId: t.exposeID('projectId'),
    version: t.expose('version', { type: SdkVersion }),
    config: t.expose('config', { type: 'JSON', description: '{purposes, categories, notice} exactly as published' }),
  }),
});

const SdkJurisdiction = builder.objectRef<NonNullable<Placement['jurisdiction']>>('SdkJurisdiction').implement({
  description: 'A visitor location and the jurisdiction rule that matched it',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'DE, US, US-CA, …' }),
    rule: t.exposeString('rule', { nullable: true, description: 'The id of the first rule matching the location; null when none did' }),
  }),
});

const SdkConfigV2Ref = builder.objectRef<SdkConfigV2>('SdkConfigV2').implement({
  description: 'SDK API v2: the latest published version with its texts in one locale, the UI strings and the experience settings',
  fields: (t) => ({
    projectId: t.exposeID('projectId'),
    version: t.expose('version', { type: SdkVersion }),
    locale: t.string({ description: 'The locale served (exact tag, then language, then the default)', resolve: (c) => c.localized.locale }),
    locales: t.stringList({ description: 'Every locale of the version, the default first', resolve: (c) => c.localized.locales }),
    dir: t.string({ description: 'ltr or rtl (ar, he, fa, ur)', resolve: (c) => c.localized.dir }),
    config: t.field({ type: 'JSON', description: '{purposes, categories, notice} in the locale', resolve: (c) => c.localized.config }),
    ui: t.field({ type: 'JSON', description: 'The UI strings in the locale (built in, overridden by the project)', resolve: (c) => c.localized.ui }),
    experience: t.field({
      type: 'JSON',
      description: '{privacyPolicyUrl, reconsentAfterDays, gpc, googleConsentMode, cookies, theme}',
      resolve: (c) => c.localized.experience,
    }),
    variesByLanguage: t.exposeBoolean('variesByLanguage', { description: 'The locale was chosen from acceptLanguage' }),
    jurisdiction: t.field({
      type: SdkJurisdiction,
      nullable: true,
      description: 'Where the visitor is (from the CDN headers, or the override) and the rule matching it; null without a location',
      resolve: (c) => c.placement.jurisdiction,
    }),
    mode: t.string({
      description: 'The consent mode there: opt-in, opt-out, notice or none (docs/jurisdictions.md)',
      resolve: (c) => c.placement.mode,
    }),
    overridden: t.exposeBoolean('overridden', { description: 'The `jurisdiction` argument replaced the location (a testing answer)' }),
  }),
});

export const SdkDecisionRef = builder.objectRef<SdkDecision>('SdkDecision').implement({
  description: 'The latest receipt of an installation, or of the subject it is signed in as (docs/subjects.md)',
  fields: (t) => ({
    versionId: t.exposeID('versionId'),
    consentHash: t.exposeString('consentHash'),
    choices: t.expose('choices', { type: 'JSON', description: 'Purpose key → granted, as recorded' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const ConsentReceiptAck = builder.objectRef<ConsentAck>('ConsentReceiptAck').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    id: t.exposeID('id'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const KeyStatus = builder.enumType('PublishableKeyStatus', { values: ['ACTIVE', 'REVOKED', 'UNKNOWN'] as const });

builder.queryFields((t) => ({
  sdkConfig: t.field({
    type: SdkConfigRef,
    description: 'SDK: the published config for the Bearer publishable key (or `key`, for compatibility)',
    args: { key: t.arg.string() },
    resolve: (_root, args, ctx) => sdkConfig(ctx.services, { token: ctx.bearer ?? args.key ?? undefined, origin: ctx.origin, address: ctx.ip }),
  }),
  sdkConfigV2: t.field({
    type: SdkConfigV2Ref,
    description: 'SDK v2: the published config in a locale (`locale`, else `acceptLanguage`, else the default locale)',
    args: {
      key: t.arg.string(),
      locale: t.arg.string(),
      acceptLanguage: t.arg.string(),
      jurisdiction: t.arg.string({
        description: 'A location code (US-CA) replacing the CDN’s, for testing: only in development or with an operator session; ignored otherwise',
      }),
    },
    resolve: (_root, args, ctx) =>
      sdkConfigV2(
        ctx.services,
        // An operator's bearer (testing the override) is no publishable key: the key then comes in `key`.
        { token: (ctx.viewer && args.key) || (ctx.bearer ?? args.key ?? undefined), origin: ctx.origin, address: ctx.ip },
        {
          locale: args.locale ?? undefined,
          acceptLanguage: args.acceptLanguage ?? undefined,
          country: ctx.geo?.country,
          region: ctx.geo?.region,
          jurisdiction: args.jurisdiction ?? undefined,
          overrideAllowed: !ctx.services.config.production || ctx.viewer !== null,
        },
      ),
  }),
  sdkCookieDeclaration: t.field({
    type: 'JSON',
    description:
      'SDK v2: the cookie declaration for the privacy page: the live version’s purposes with their cookies and storage keys, as the ' +
      'latest finished scan saw them (docs/scanner.md, "Cookie declaration"); key, origin and allowance as the config',
    args: { key: t.arg.string(), locale: t.arg.string(), acceptLanguage: t.arg.string() },
    resolve: (_root, args, ctx) =>
      cookieDeclaration(
        ctx.services,
        { token: ctx.bearer ?? args.key ?? undefined, origin: ctx.origin, address: ctx.ip },
        { locale: args.locale ?? undefined, acceptLanguage: args.acceptLanguage ?? undefined },
      ),
  }),
  sdkDecision: t.field({
    type: SdkDecisionRef,
    nullable: true,
    description: 'SDK v2: the latest decision recorded for an installation (null when none), e.g. on the hosted preferences page',
    args: { key: t.arg.string(), installationId: t.arg.string() },
    resolve: (_root, args, ctx) =>
      latestDecision(ctx.services, { token: ctx.bearer ?? args.key ?? undefined, origin: ctx.origin, address: ctx.ip }, args.installationId ?? undefined),
  }),
  sdkTcfVendorList: t.field({
    type: 'JSON',
    description:
      'SDK v2, IAB TCF: the live version’s vendors and Google ATPs from the vendor list it pinned, the IAB’s texts in the locale’s language (docs/tcf.md)',
    args: { key: t.arg.string(), locale: t.arg.string() },
    resolve: (_root, args, ctx) =>
      sdkTcfVendorList(ctx.services, { token: ctx.bearer ?? args.key ?? undefined, origin: ctx.origin, address: ctx.ip }, args.locale ?? undefined),
  }),
  publishableKeyStatus: t.field({
    type: KeyStatus,
    description: 'Whether a publishable key is active, revoked or unknown (hosted preferences page)',
    args: { key: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => publishableKeyStatus(ctx.services, args.key),
  }),
}));

builder.mutationField('recordConsent', (t) =>
  t.field({
    type: ConsentReceiptAck,
    description: 'SDK: stores an append-only consent receipt for the Bearer publishable key',
    args: {
      input: t.arg({ type: 'JSON', required: true }),
      idempotencyKey: t.arg.string({
        description:
          'The Idempotency-Key header (issue 45): a repeat within 24 hours answers the first receipt; another body is idempotency_conflict',
      }),
    },
    resolve: (_root, args, ctx) =>
      recordConsent(ctx.services, { token: ctx.bearer, origin: ctx.origin, address: ctx.ip }, args.input, args.idempotencyKey ?? null),
  }),
);
