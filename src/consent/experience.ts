import canonicalize from 'canonicalize';
import { z } from 'zod';
import { validationFailed, type ValidationIssue } from '../errors.js';
import type { Db } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import type { Draft } from './draft.js';
import { withProjectLock } from './draft.js';
import { gppInput, jurisdictionsInput } from './jurisdictions.js';
import { UI_STRING_KEYS } from './ui-strings.js';
import { isHttpsUrl, LIMITS, PURPOSE_KEY } from './validation.js';
import { recordAudit } from '../audit/record.js';
import { fetchListsIfMissing, tcfDraftIssues } from '../tcf/draft.js';
import { tcfSettingsInput } from '../tcf/settings.js';

// The experience: settings and translations published with each version (docs/consent.md, "Experience").
// PUT replaces the whole object; a field left out takes its default. Objects are strict, so a
// misspelt field is a 400 with its path rather than silently ignored.

export const EXPERIENCE_LIMITS = {
  locales: 50,
  localeTag: 35,
  uiString: 500,
  cookiesPerPurpose: 50,
  cookieName: 256,
  reconsentAfterDays: 395,
  borderRadius: 24,
} as const;

import { GOOGLE_CONSENT_SIGNALS, type GoogleConsentSignal } from './google-signals.js';
import { INTEGRATION_SIGNALS, INTEGRATION_TYPES, type IntegrationType } from './integrations.js';
import { cookieDomainInput, cookieDomainIssue } from './cookie-domain.js';

export { GOOGLE_CONSENT_SIGNALS, type GoogleConsentSignal };

/** Well-formed BCP 47 in canonical case (`de`, `de-AT`, `pt-BR`, `zh-Hant`); Intl checks the grammar. */
export function canonicalLocale(tag: string): string | undefined {
  if (tag.length > EXPERIENCE_LIMITS.localeTag) return undefined;
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

const localeTag = z.string().superRefine((tag, ctx) => {
  const canonical = canonicalLocale(tag);
  if (canonical === undefined) ctx.addIssue({ code: 'custom', message: 'Must be a BCP 47 language tag (de, de-AT, pt-BR), at most 35 characters' });
  else if (canonical !== tag) ctx.addIssue({ code: 'custom', message: `Write the tag in canonical form: ${canonical}` });
});

const text = (max: number) => z.string().max(max, `At most ${max} characters`);
const purposeKey = z.string().regex(PURPOSE_KEY, 'Must be a purpose key (^[a-z][a-z0-9_]{0,63}$)');
const purposeKeys = z.array(purposeKey).max(LIMITS.purposes, `At most ${LIMITS.purposes} purposes`);
const httpsUrlOrEmpty = text(2048).refine((value) => value === '' || isHttpsUrl(value), 'Must be an https URL or empty');
// RFC 6265 cookie-name characters; `*` at the end matches a prefix (`_ga_*`).
const cookieName = z.string().regex(/^[!#$%&'+\-.^_`|~0-9A-Za-z]{1,255}\*?$/, 'Must be a cookie name, optionally ending in *');

/** A record over a fixed set of keys, any of them left out; an unknown key is refused at its own path. */
function recordOf<Value extends z.ZodType>(keys: readonly string[], value: Value, what: string) {
  return z.record(z.string(), value).superRefine((record, ctx) => {
    for (const key of Object.keys(record)) {
      if (!keys.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `Unknown ${what}; one of ${keys.join(', ')}` });
    }
  });
}

const translationInput = z
  .object({
    notice: z
      .object({
        title: text(LIMITS.noticeTitle).optional(),
        description: text(LIMITS.noticeDescription).optional(),
        acceptLabel: text(LIMITS.noticeLabel).optional(),
        rejectLabel: text(LIMITS.noticeLabel).optional(),
        manageLabel: text(LIMITS.noticeLabel).optional(),
      })
      .strict()
      .default({}),
    purposes: z
      .record(purposeKey, z.object({ name: text(LIMITS.purposeName).optional(), description: text(LIMITS.purposeDescription).optional() }).strict())
      .default({}),
    categories: z.record(z.string().min(1).max(100), z.object({ name: text(LIMITS.categoryName).optional() }).strict()).default({}),
    ui: recordOf(UI_STRING_KEYS, text(EXPERIENCE_LIMITS.uiString), 'UI string').default({}),
  })
  .strict();

const signalsInput = recordOf(GOOGLE_CONSENT_SIGNALS, purposeKeys, 'Google Consent Mode signal').default({});

/** One vendor's consent API and the purposes each of its signals follows (docs/integrations.md). */
const integrationInput = z
  .object({
    type: z.enum(INTEGRATION_TYPES as [IntegrationType, ...IntegrationType[]]),
    signals: z.record(z.string(), purposeKeys).default({}).describe('Each signal of the type with the purposes it needs; a signal left out or empty stays denied'),
  })
  .strict()
  .superRefine((integration, ctx) => {
    const known: readonly string[] = INTEGRATION_SIGNALS[integration.type];
    for (const signal of Object.keys(integration.signals)) {
      if (!known.includes(signal)) ctx.addIssue({ code: 'custom', path: ['signals', signal], message: `Unknown ${integration.type} signal; one of ${known.join(', ')}` });
    }
  });

const integrationsInput = z
  .array(integrationInput)
  .max(INTEGRATION_TYPES.length, `At most ${INTEGRATION_TYPES.length} integrations`)
  .superRefine((integrations, ctx) => {
    integrations.forEach((integration, i) => {
      if (integrations.findIndex((other) => other.type === integration.type) < i) ctx.addIssue({ code: 'custom', path: [i, 'type'], message: `${integration.type} is listed twice` });
    });
  });

/** The experience as written (also its OpenAPI shape); `experienceInput` completes it. */
export const experienceObject = z
  .object({
    defaultLocale: localeTag.default('en'),
    translations: z
      .record(localeTag, translationInput)
      .refine((translations) => Object.keys(translations).length <= EXPERIENCE_LIMITS.locales, `At most ${EXPERIENCE_LIMITS.locales} locales`)
      .default({}),
    privacyPolicyUrl: httpsUrlOrEmpty.default(''),
    reconsentAfterDays: z
      .number()
      .int('Must be an integer')
      .min(0, 'At least 0 (0 = never)')
      .max(EXPERIENCE_LIMITS.reconsentAfterDays, `At most ${EXPERIENCE_LIMITS.reconsentAfterDays} (13 months)`)
      .default(365),
    gpc: z.object({ optOutPurposes: purposeKeys.default([]) }).strict().default({ optOutPurposes: [] }),
    googleConsentMode: z
      .object({ enabled: z.boolean().default(false), signals: signalsInput })
      .strict()
      .default({ enabled: false, signals: {} }),
    cookies: z
      .record(purposeKey, z.array(cookieName).max(EXPERIENCE_LIMITS.cookiesPerPurpose, `At most ${EXPERIENCE_LIMITS.cookiesPerPurpose} cookies`))
      .default({}),
    theme: z
      .object({
        colorScheme: z.enum(['light', 'dark', 'auto']).default('light'),
        borderRadius: z
          .number()
          .int('Must be an integer')
          .min(0, 'At least 0')
          .max(EXPERIENCE_LIMITS.borderRadius, `At most ${EXPERIENCE_LIMITS.borderRadius}`)
          .default(8),
      })
      .strict()
      .default({ colorScheme: 'light', borderRadius: 8 }),
    // Absent stays absent (so experiences from before them read back unchanged): the SDK config
    // applies DEFAULT_JURISDICTIONS and DEFAULT_GPP instead (src/consent/jurisdictions.ts).
    jurisdictions: jurisdictionsInput
      .optional()
      .describe('Which consent mode applies where, first match wins (docs/jurisdictions.md); absent or empty: the default rules'),
    gpp: gppInput.optional().describe('IAB GPP / MSPA settings of the site; absent: not covered, mode none'),
    // Absent stays absent, so experiences without it keep their hashes (docs/tcf.md).
    tcf: tcfSettingsInput.optional().describe('IAB TCF v2.3 and Google Additional Consent (docs/tcf.md); absent: no TCF'),
    // Absent stays absent, as jurisdictions: versions published before them keep their bytes and hashes.
    integrations: integrationsInput
      .optional()
      .describe('Vendor consent APIs the SDK drives (docs/integrations.md): microsoft-uet, microsoft-clarity, meta-pixel, tiktok-pixel, shopify, wordpress'),
    cookieDomain: cookieDomainInput
      .optional()
      .describe('A registrable domain (or a subdomain of one) over the allowed origins of one site: the SDK shares the installation and the decision in a first-party cookie there'),
  })
  .strict();

// Every signal is listed, so consumers never meet a missing one.
export const experienceInput = experienceObject.transform((experience) => ({
    ...experience,
    googleConsentMode: {
      enabled: experience.googleConsentMode.enabled,
      signals: Object.fromEntries(GOOGLE_CONSENT_SIGNALS.map((signal) => [signal, experience.googleConsentMode.signals[signal] ?? []])) as Record<
        GoogleConsentSignal,
        string[]
      >,
    },
    // Every signal of a type is listed, as for Consent Mode.
    ...(experience.integrations && {
      integrations: experience.integrations.map(({ type, signals }) => ({
        type,
        signals: Object.fromEntries(INTEGRATION_SIGNALS[type].map((signal) => [signal, signals[signal] ?? []])),
      })),
    }),
  }));

export type Experience = z.output<typeof experienceInput>;
export type Translation = Experience['translations'][string];

/** What GET answers before a PUT (and what v2 serves for a version without an experience). */
export const DEFAULT_EXPERIENCE: Experience = experienceInput.parse({});

/** The draft's experience as stored, or null when the project never set one. */
export async function readExperience(db: Db, projectId: string): Promise<Experience | null> {
  const row = await db.consentExperience.findUnique({ where: { projectId }, select: { settings: true } });
  return row ? (row.settings as unknown as Experience) : null;
}

/** The drafts' experiences of many projects in one statement (the operator graph batches projects). */
export async function readExperiences(db: Db, projectIds: readonly string[]): Promise<Map<string, Experience>> {
  const rows = await db.consentExperience.findMany({ where: { projectId: { in: [...projectIds] } }, select: { projectId: true, settings: true } });
  return new Map(rows.map((row) => [row.projectId, row.settings as unknown as Experience]));
}

/** PUT /consent/experience: validated, checked against the draft, stored whole. */
export async function putExperience(services: Services, projectId: string, input: unknown): Promise<Experience> {
  const experience = parseInput(experienceInput, input);
  await fetchListsIfMissing(services, experience.tcf, [experience.defaultLocale, ...Object.keys(experience.translations)]);
  return withProjectLock(services, projectId, async (tx) => {
    const purposes = await tx.purpose.findMany({ where: { projectId }, select: { key: true } });
    const categories = await tx.category.findMany({ where: { projectId }, select: { id: true } });
    const issues = experienceReferenceIssues(experience, { purposes, categories });
    issues.push(...(await tcfDraftIssues(tx, experience.tcf, new Set(purposes.map((purpose) => purpose.key)))).issues);
    if (experience.cookieDomain) {
      const { allowedOrigins } = await tx.project.findUniqueOrThrow({ where: { id: projectId }, select: { allowedOrigins: true } });
      const refused = cookieDomainIssue(experience.cookieDomain, allowedOrigins);
      if (refused) issues.push({ path: ['cookieDomain'], message: refused });
    }
    if (issues.length) throw validationFailed(issues);
    const settings = experience as unknown as Prisma.InputJsonObject;
    const before = await readExperience(tx, projectId);
    await tx.consentExperience.upsert({ where: { projectId }, create: { projectId, settings }, update: { settings } });
    await recordAudit(tx, { action: 'consent.experience_updated', projectId, target: { type: 'experience', id: projectId }, changes: { experience: { before, after: experience } } });
    return experience;
  });
}

/**
 * Purpose keys and category ids the experience names but the draft does not have
 * (checked at PUT and again at publish: the draft may have changed in between).
 */
export function experienceReferenceIssues(
  experience: Experience,
  draft: { purposes: Pick<Draft['purposes'][number], 'key'>[]; categories: Pick<Draft['categories'][number], 'id'>[] },
): ValidationIssue[] {
  const keys = new Set(draft.purposes.map((purpose) => purpose.key));
  const categoryIds = new Set(draft.categories.map((category) => category.id));
  const issues: ValidationIssue[] = [];
  const unknownKey = (path: (string | number)[], key: string) =>
    keys.has(key) || issues.push({ path, message: `Unknown purpose key ${key}` });
  for (const [locale, translation] of Object.entries(experience.translations)) {
    for (const key of Object.keys(translation.purposes)) unknownKey(['translations', locale, 'purposes', key], key);
    for (const id of Object.keys(translation.categories)) {
      if (!categoryIds.has(id)) issues.push({ path: ['translations', locale, 'categories', id], message: `Unknown category id ${id}` });
    }
  }
  experience.gpc.optOutPurposes.forEach((key, i) => unknownKey(['gpc', 'optOutPurposes', i], key));
  for (const [signal, signalKeys] of Object.entries(experience.googleConsentMode.signals)) {
    signalKeys.forEach((key, i) => unknownKey(['googleConsentMode', 'signals', signal, i], key));
  }
  for (const key of Object.keys(experience.cookies)) unknownKey(['cookies', key], key);
  experience.integrations?.forEach((integration, i) => {
    for (const [signal, signalKeys] of Object.entries(integration.signals)) {
      signalKeys.forEach((key, j) => unknownKey(['integrations', i, 'signals', signal, j], key));
    }
  });
  return issues;
}

/**
 * Whether two stored experiences (or their absence) differ; JSONB key order does not count, nor the GVL version a
 * publish pinned in `tcf` (the draft never has one).
 */
export const experienceChanged = (a: unknown, b: unknown) => canonicalize(withoutPin(a)) !== canonicalize(withoutPin(b));

function withoutPin(experience: unknown): unknown {
  const tcf = (experience as { tcf?: { vendorListVersion?: number } } | null | undefined)?.tcf;
  if (!tcf || tcf.vendorListVersion === undefined) return experience ?? null;
  const { vendorListVersion: _pinned, ...settings } = tcf;
  return { ...(experience as object), tcf: settings };
}
