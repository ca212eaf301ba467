import Negotiator from 'negotiator';
import type { CategoryView, ConsentConfig, NoticeView, PurposeView } from '../consent/config.js';
import { canonicalLocale, DEFAULT_EXPERIENCE, type Experience } from '../consent/experience.js';
import { builtInUiStrings, languageOf, textDirection, type UiStrings } from '../consent/ui-strings.js';
import type { PublishedVersion } from '../consent/versions.js';
import type { Services } from '../services.js';
import { authenticateSdk, authenticateSdkFromMemory } from './access.js';
import type { ProjectAccess } from './cache.js';
import { noPublishedVersion } from './errors.js';

// GET /api/sdk/v2/config (extensions.md section 3): the v1 answer's version with its texts
// resolved for one locale, the UI strings of that locale and the experience settings.

/** What a version looks like in one locale. Made once per (version, locale) and frozen: it keys the answer cache. */
export interface LocalizedVersion {
  locale: string;
  locales: string[];
  dir: 'ltr' | 'rtl';
  config: ConsentConfig;
  ui: UiStrings;
  experience: Omit<Experience, 'defaultLocale' | 'translations'>;
}

export interface SdkConfigV2 {
  projectId: string;
  version: PublishedVersion;
  localized: LocalizedVersion;
  /** The locale came from Accept-Language (no `locale` asked for): the answer carries `Vary: Accept-Language`. */
  variesByLanguage: boolean;
}

export interface LocaleRequest {
  /** The `locale` query parameter, as sent. */
  locale?: string | undefined;
  acceptLanguage?: string | undefined;
}

interface SdkCallerInfo {
  token: string | undefined;
  origin: string | undefined;
}

export async function sdkConfigV2(services: Services, caller: SdkCallerInfo, request: LocaleRequest): Promise<SdkConfigV2> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  return served(services, keyId, project, request);
}

/** The same from memory (see sdkConfigFromMemory): undefined when the full path must decide. */
export function sdkConfigV2FromMemory(services: Services, caller: SdkCallerInfo, request: LocaleRequest): Promise<SdkConfigV2> | undefined {
  const found = authenticateSdkFromMemory(services, caller.token, caller.origin);
  return found && served(services, found.keyId, found.project, request);
}

function served(services: Services, keyId: string, project: ProjectAccess, request: LocaleRequest): Promise<SdkConfigV2> {
  // One allowance for both versions of the config: a client gains nothing by alternating.
  const limit = { name: 'sdk-config', points: services.config.rateLimits.sdkConfigPerMinute, durationSeconds: 60 };
  return services.rateLimits.consume(limit, keyId).then(() => {
    const version = project.version;
    if (!version) throw noPublishedVersion();
    const experience = version.experience ?? DEFAULT_EXPERIENCE;
    const variesByLanguage = request.locale === undefined;
    const locale = variesByLanguage
      ? negotiateLocale(experience, request.acceptLanguage)
      : (resolveLocale(experience, request.locale!) ?? experience.defaultLocale);
    return { projectId: project.projectId, version, localized: localize(version, experience, locale), variesByLanguage };
  });
}

/** The version's locales: the default first, then the translated ones in code-unit order. */
function localesOf(experience: Experience): string[] {
  const translated = Object.keys(experience.translations)
    .filter((tag) => tag !== experience.defaultLocale)
    .sort();
  return [experience.defaultLocale, ...translated];
}

/**
 * A requested tag against the version's locales: the exact tag (any case), then its language
 * (`de-CH` → `de`), then another region of that language (`de-CH` → `de-AT`). Undefined when
 * none fits; a malformed tag fits nothing. Never an error: v2 falls back.
 */
export function resolveLocale(experience: Experience, requested: string): string | undefined {
  const tag = canonicalLocale(requested);
  if (!tag) return undefined;
  const locales = localesOf(experience);
  const lower = tag.toLowerCase();
  const exact = locales.find((locale) => locale.toLowerCase() === lower);
  if (exact) return exact;
  const language = languageOf(tag);
  return locales.find((locale) => locale.toLowerCase() === language) ?? locales.find((locale) => languageOf(locale) === language);
}

/** Accept-Language in the visitor's order of preference (q-values); the first that fits wins. */
function negotiateLocale(experience: Experience, acceptLanguage: string | undefined): string {
  if (acceptLanguage) {
    for (const range of new Negotiator({ headers: { 'accept-language': acceptLanguage } }).languages()) {
      if (range === '*') break;
      const locale = resolveLocale(experience, range);
      if (locale) return locale;
    }
  }
  return experience.defaultLocale;
}

const localizedVersions = new WeakMap<PublishedVersion, Map<string, LocalizedVersion>>();

/** The version in `locale`, made once per instance while the version is cached. */
export function localize(version: PublishedVersion, experience: Experience, locale: string): LocalizedVersion {
  let byLocale = localizedVersions.get(version);
  if (!byLocale) {
    byLocale = new Map();
    localizedVersions.set(version, byLocale);
  }
  let localized = byLocale.get(locale);
  if (!localized) {
    const { defaultLocale: _defaultLocale, translations, ...settings } = experience;
    const translation = translations[locale];
    localized = Object.freeze({
      locale,
      locales: localesOf(experience),
      dir: textDirection(locale),
      config: translateConfig(version.config, translation, locale !== experience.defaultLocale),
      ui: { ...builtInUiStrings(locale), ...(translation?.ui as Partial<UiStrings> | undefined) },
      experience: settings,
    });
    byLocale.set(locale, localized);
  }
  return localized;
}

/**
 * The v1 `config` shape with the locale's texts. Titles, descriptions and names not translated
 * keep the published text. Button labels not translated are empty in another language than the
 * default, so the SDK shows its `ui` strings in the visitor's language instead of a label in the
 * default one.
 */
function translateConfig(config: ConsentConfig, translation: Experience['translations'][string] | undefined, otherLanguage: boolean): ConsentConfig {
  if (!translation && !otherLanguage) return config;
  const notice: NoticeView = { ...config.notice };
  if (otherLanguage) notice.acceptLabel = notice.rejectLabel = notice.manageLabel = '';
  for (const [field, text] of Object.entries(translation?.notice ?? {})) if (text !== undefined) notice[field as keyof NoticeView] = text;
  const purposes: PurposeView[] = config.purposes.map((purpose) => {
    const texts = translation?.purposes?.[purpose.key];
    return texts ? { ...purpose, name: texts.name ?? purpose.name, description: texts.description ?? purpose.description } : purpose;
  });
  const categories: CategoryView[] = config.categories.map((category) => {
    const name = translation?.categories?.[category.id]?.name;
    return name === undefined ? category : { ...category, name };
  });
  return { purposes, categories, notice };
}
