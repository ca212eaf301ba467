import Negotiator from 'negotiator';
import type { CategoryView, ConsentConfig, NoticeView, PurposeView } from '../consent/config.js';
import { canonicalLocale, DEFAULT_EXPERIENCE, type Experience } from '../consent/experience.js';
import { DEFAULT_GPP, placeLocation, type GppSettings, type Placement } from '../consent/jurisdictions.js';
import { locationCode, parseLocationCode } from '../consent/regions.js';
import { builtInUiStrings, languageOf, textDirection, type UiStrings } from '../consent/ui-strings.js';
import type { PublishedVersion } from '../consent/versions.js';
import type { Services } from '../services.js';
import { authenticateSdk, authenticateSdkFromMemory } from './access.js';
import { consumeConfigAllowance, type SdkCallerInfo } from './config.js';
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
  /** The settings the SDK uses: the rules stay on the server (they decide `mode`), GPP has its defaults filled. */
  experience: Omit<Experience, 'defaultLocale' | 'translations' | 'jurisdictions' | 'gpp'> & { gpp: GppSettings };
}

export interface SdkConfigV2 {
  projectId: string;
  version: PublishedVersion;
  localized: LocalizedVersion;
  /** The locale came from Accept-Language (no `locale` asked for): the answer carries `Vary: Accept-Language`. */
  variesByLanguage: boolean;
  /** Where the visitor is and the consent mode there (frozen, one per version and location). */
  placement: Placement;
  /** A `jurisdiction` override was honoured: a testing answer, never stored by caches. */
  overridden: boolean;
}

export interface LocaleRequest {
  /** The `locale` query parameter, as sent. */
  locale?: string | undefined;
  acceptLanguage?: string | undefined;
  /** The values of the GEO_COUNTRY_HEADER and GEO_REGION_HEADER headers, as sent (docs/jurisdictions.md). */
  country?: string | undefined;
  region?: string | undefined;
  /** The `jurisdiction` query parameter: replaces the location when `overrideAllowed`. */
  jurisdiction?: string | undefined;
  /** Development (NODE_ENV not production), or the request carries a valid operator session. */
  overrideAllowed?: boolean;
}


export async function sdkConfigV2(services: Services, caller: SdkCallerInfo, request: LocaleRequest): Promise<SdkConfigV2> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  return served(services, keyId, project, caller.address, request);
}

/** The same from memory (see sdkConfigFromMemory): undefined when the full path must decide. */
export function sdkConfigV2FromMemory(services: Services, caller: SdkCallerInfo, request: LocaleRequest): Promise<SdkConfigV2> | undefined {
  const found = authenticateSdkFromMemory(services, caller.token, caller.origin);
  return found && served(services, found.keyId, found.project, caller.address, request);
}

function served(services: Services, keyId: string, project: ProjectAccess, address: string, request: LocaleRequest): Promise<SdkConfigV2> {
  return consumeConfigAllowance(services, keyId, address).then(() => {
    const version = project.version;
    if (!version) throw noPublishedVersion();
    const experience = version.experience ?? DEFAULT_EXPERIENCE;
    const variesByLanguage = request.locale === undefined;
    const locale = chosenLocale(version, experience, request, variesByLanguage);
    const overridden = request.jurisdiction !== undefined && request.overrideAllowed === true;
    const location = overridden ? parseLocationCode(request.jurisdiction) : locationCode(request.country, request.region);
    return {
      projectId: project.projectId,
      version,
      localized: localize(version, experience, locale),
      variesByLanguage,
      placement: placementOf(version, experience, location),
      overridden,
    };
  });
}

const placements = new WeakMap<PublishedVersion, Map<string | null, Placement>>();

/**
 * The rule for a location, made once per version and location code. Bounded without a limit of its own:
 * only valid codes (about 310) and null get here.
 */
function placementOf(version: PublishedVersion, experience: Experience, location: string | null): Placement {
  let byLocation = placements.get(version);
  if (!byLocation) placements.set(version, (byLocation = new Map()));
  let placement = byLocation.get(location);
  if (!placement) {
    const { jurisdiction, mode } = placeLocation(experience.jurisdictions, location);
    placement = Object.freeze({ jurisdiction: jurisdiction && Object.freeze(jurisdiction), mode });
    byLocation.set(location, placement);
  }
  return placement;
}

const MAX_REMEMBERED_CHOICES = 256;
const localeChoices = new WeakMap<PublishedVersion, Map<string, string>>();

/**
 * The locale for a request, remembered per version and distinct `locale`/`Accept-Language` value: parsing
 * tags and q-values cost the hot path as much as everything else together (bench/sdk-config.ts, v2 cases).
 */
function chosenLocale(version: PublishedVersion, experience: Experience, request: LocaleRequest, byLanguage: boolean): string {
  let choices = localeChoices.get(version);
  if (!choices) localeChoices.set(version, (choices = new Map()));
  const key = byLanguage ? `a${request.acceptLanguage ?? ''}` : `l${request.locale}`;
  let locale = choices.get(key);
  if (locale === undefined) {
    locale = byLanguage ? negotiateLocale(experience, request.acceptLanguage) : (resolveLocale(experience, request.locale!) ?? experience.defaultLocale);
    // Bounded: a client sending ever new headers only ever costs the parsing again.
    if (choices.size >= MAX_REMEMBERED_CHOICES) choices.clear();
    choices.set(key, locale);
  }
  return locale;
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
    const { defaultLocale: _defaultLocale, translations, jurisdictions: _rules, gpp, ...settings } = experience;
    const translation = translations[locale];
    localized = Object.freeze({
      locale,
      locales: localesOf(experience),
      dir: textDirection(locale),
      config: translateConfig(version.config, translation, locale !== experience.defaultLocale),
      ui: withOverrides(builtInUiStrings(locale), translation?.ui as Partial<UiStrings> | undefined),
      experience: { ...settings, gpp: { ...DEFAULT_GPP, ...gpp } },
    });
    byLocale.set(locale, localized);
  }
  return localized;
}

/**
 * The locale's built-in UI strings with the project's over them. An empty string overrides nothing: the answer
 * always carries every string, in the locale (the SDK has no words of its own to fall back on).
 */
function withOverrides(builtIn: UiStrings, overrides: Partial<UiStrings> | undefined): UiStrings {
  const ui = { ...builtIn };
  for (const [key, text] of Object.entries(overrides ?? {})) if (text) ui[key as keyof UiStrings] = text;
  return ui;
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
