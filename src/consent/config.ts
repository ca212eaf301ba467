import canonicalize from 'canonicalize';
import { sha256Hex } from '../auth/tokens.js';
import type { Translation } from './experience.js';

// The published configuration and its two hashes, exactly as decisions.md defines them.

export interface CategoryView {
  id: string;
  name: string;
  sortOrder: number;
}

export interface PurposeView {
  id: string;
  key: string;
  name: string;
  description: string;
  required: boolean;
  categoryId: string;
  sortOrder: number;
}

export interface NoticeView {
  title: string;
  description: string;
  acceptLabel: string;
  rejectLabel: string;
  manageLabel: string;
  companyName: string;
  logoUrl: string;
  primaryColor: string;
}

/** Exactly the SDK config response's `config` object. */
export interface ConsentConfig {
  purposes: PurposeView[];
  categories: CategoryView[];
  notice: NoticeView;
}

export const NOTICE_FIELDS = [
  'title',
  'description',
  'acceptLabel',
  'rejectLabel',
  'manageLabel',
  'companyName',
  'logoUrl',
  'primaryColor',
] as const satisfies readonly (keyof NoticeView)[];

export const EMPTY_NOTICE: NoticeView = Object.fromEntries(NOTICE_FIELDS.map((field) => [field, ''])) as unknown as NoticeView;

/** Lowercase hex SHA-256 of the RFC 8785 (JCS) canonical JSON of `value`. */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalize(value)!);
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The config a version publishes, in a deterministic order: purposes by
 * sortOrder then key, categories by sortOrder then name then id. Only the
 * contract's fields are copied, so nothing else from the rows can leak.
 */
export function buildConfig(draft: { categories: CategoryView[]; purposes: PurposeView[]; notice: NoticeView }): ConsentConfig {
  const purposes = draft.purposes
    .map(({ id, key, name, description, required, categoryId, sortOrder }) => ({ id, key, name, description, required, categoryId, sortOrder }))
    .sort((a, b) => a.sortOrder - b.sortOrder || byCodeUnits(a.key, b.key));
  const categories = draft.categories
    .map(({ id, name, sortOrder }) => ({ id, name, sortOrder }))
    .sort((a, b) => a.sortOrder - b.sortOrder || byCodeUnits(a.name, b.name) || byCodeUnits(a.id, b.id));
  const notice = Object.fromEntries(NOTICE_FIELDS.map((field) => [field, draft.notice[field]])) as unknown as NoticeView;
  return { purposes, categories, notice };
}

/**
 * A stored config (JSONB keeps keys in its own order) with the keys back in
 * the contract's order; array order and values are untouched.
 */
export function storedConfig(json: unknown): ConsentConfig {
  const stored = json as ConsentConfig;
  return {
    purposes: stored.purposes.map(({ id, key, name, description, required, categoryId, sortOrder }) => ({
      id,
      key,
      name,
      description,
      required,
      categoryId,
      sortOrder,
    })),
    categories: stored.categories.map(({ id, name, sortOrder }) => ({ id, name, sortOrder })),
    notice: Object.fromEntries(NOTICE_FIELDS.map((field) => [field, stored.notice[field]])) as unknown as NoticeView,
  };
}

/**
 * The consent surface: what a visitor agrees to. Branding (labels, colours,
 * logo, sort order, ids) is left out, so changing it does not re-prompt.
 * With translations (extensions.md section 2) the surface gains the translated
 * texts of every language; without any, the hash is exactly decisions.md's.
 */
export function consentHash(config: ConsentConfig, translations?: Record<string, Translation>): string {
  const categoryName = new Map(config.categories.map((category) => [category.id, category.name]));
  const purposes = config.purposes
    .map((purpose) => ({
      key: purpose.key,
      name: purpose.name,
      description: purpose.description,
      required: purpose.required,
      category: categoryName.get(purpose.categoryId) ?? '',
    }))
    .sort((a, b) => byCodeUnits(a.key, b.key));
  const surface = { purposes, notice: { title: config.notice.title, description: config.notice.description } };
  const translated = translatedSurface(config, translations ?? {});
  return canonicalHash(translated ? { ...surface, translations: translated } : surface);
}

/**
 * `{ <locale>: { notice: {title, description}, purposes: { <key>: {name, description} },
 * categories: { <category name>: name } } }` with only the fields present; a locale that
 * translates none of them (only labels or UI strings) is left out, and so is an empty result.
 */
function translatedSurface(config: ConsentConfig, translations: Record<string, Translation>) {
  const result: Record<string, Record<string, unknown>> = {};
  for (const [locale, translation] of Object.entries(translations)) {
    const entry: Record<string, unknown> = {};
    const notice = present({ title: translation.notice?.title, description: translation.notice?.description });
    if (notice) entry.notice = notice;
    const purposes: Record<string, unknown> = {};
    for (const [key, texts] of Object.entries(translation.purposes ?? {})) {
      const fields = present({ name: texts.name, description: texts.description });
      if (fields) purposes[key] = fields;
    }
    if (Object.keys(purposes).length) entry.purposes = purposes;
    const categories: Record<string, string> = {};
    for (const category of config.categories) {
      const name = translation.categories?.[category.id]?.name;
      if (name !== undefined) categories[category.name] = name;
    }
    if (Object.keys(categories).length) entry.categories = categories;
    if (Object.keys(entry).length) result[locale] = entry;
  }
  return Object.keys(result).length ? result : undefined;
}

function present(fields: Record<string, string | undefined>): Record<string, string> | undefined {
  const kept = Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return kept.length ? Object.fromEntries(kept) : undefined;
}

/**
 * Everything the SDK receives for a version (the source of its ETag). With IAB TCF settings (docs/tcf.md) they and
 * the pinned vendor list version are covered too; without, the hash is exactly decisions.md's.
 */
export function contentHash(number: number, config: ConsentConfig, tcf?: unknown): string {
  return canonicalHash(tcf === undefined ? { number, config } : { number, config, tcf });
}
