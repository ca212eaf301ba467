// The consent editor's model: the draft as edited in the form, what it sends to replaceConsentDraft, the
// config the SDK would receive in a locale (for the live preview, before saving) and the difference from the
// latest published version.
import type { ConsentEditorQuery } from '../graphql/generated';

export type ServerDraft = ConsentEditorQuery['consentConfiguration']['draft'];
export type Notice = ServerDraft['notice'];

export interface CategoryRow {
  /** The category's id, or a client ref (`new-1`) for one not saved yet. */
  ref: string;
  saved: boolean;
  name: string;
}

export interface PurposeRow {
  ref: string;
  saved: boolean;
  key: string;
  name: string;
  description: string;
  required: boolean;
  /** A CategoryRow.ref. */
  category: string;
}

export interface DraftForm {
  categories: CategoryRow[];
  purposes: PurposeRow[];
  notice: Notice;
}

export interface Translation {
  notice?: Partial<Record<'title' | 'description' | 'acceptLabel' | 'rejectLabel' | 'manageLabel', string>>;
  purposes?: Record<string, { name?: string; description?: string }>;
  categories?: Record<string, { name?: string }>;
  ui?: Record<string, string>;
}

/** The experience object as the API takes and returns it (fields it does not know are kept as they came). */
export interface Experience {
  defaultLocale: string;
  translations: Record<string, Translation>;
  privacyPolicyUrl: string;
  reconsentAfterDays: number;
  gpc: { optOutPurposes: string[] };
  googleConsentMode: { enabled: boolean; signals: Record<string, string[]> };
  cookies: Record<string, string[]>;
  theme: { colorScheme: 'light' | 'dark' | 'auto'; borderRadius?: number };
  [other: string]: unknown;
}

/** The vendors' consent APIs and their signals, the server's own list (docs/integrations.md). */
export { INTEGRATION_NAMES, INTEGRATION_SIGNALS, INTEGRATION_TYPES, ALWAYS_GRANTED_SIGNALS } from '../../../src/consent/integrations';
export interface Integration {
  type: string;
  signals: Record<string, string[]>;
}

/** The signals the Consent Mode form maps, the server's own list. */
export { GOOGLE_CONSENT_SIGNALS as GOOGLE_SIGNALS } from '../../../src/consent/google-signals';

export function formFromDraft(draft: ServerDraft): DraftForm {
  const categories = [...draft.categories].sort((a, b) => a.sortOrder - b.sortOrder).map((c) => ({ ref: c.id, saved: true, name: c.name }));
  const purposes = [...draft.purposes]
    .sort((a, b) => a.sortOrder - b.sortOrder || (a.key < b.key ? -1 : 1))
    .map((p) => ({ ref: p.id, saved: true, key: p.key, name: p.name, description: p.description, required: p.required, category: p.categoryId }));
  return { categories, purposes, notice: { ...draft.notice } };
}

/** The replaceConsentDraft input: saved rows by id, new ones by ref; order is sortOrder. */
export function draftInput(form: DraftForm) {
  return {
    categories: form.categories.map((c, i) => ({ id: c.saved ? c.ref : null, ref: c.saved ? null : c.ref, name: c.name, sortOrder: i })),
    purposes: form.purposes.map((p, i) => ({
      id: p.saved ? p.ref : null,
      key: p.key,
      name: p.name,
      description: p.description,
      required: p.required,
      categoryId: p.category,
      sortOrder: i,
    })),
    notice: { ...form.notice },
  };
}

interface SdkPurpose {
  id: string;
  key: string;
  name: string;
  description: string;
  required: boolean;
  categoryId: string;
  sortOrder: number;
}

/**
 * The config the SDK would get in `locale` for the form as it is now (the service's rule, src/sdk/config-v2.ts:
 * a translation overrides texts; in another language than the default, untranslated button labels are empty
 * so the SDK shows its own words in that language).
 */
export function localConfig(form: DraftForm, experience: Experience, locale: string) {
  const translation = experience.translations[locale];
  const other = locale !== experience.defaultLocale;
  const notice = { ...form.notice };
  if (other) notice.acceptLabel = notice.rejectLabel = notice.manageLabel = '';
  for (const [field, text] of Object.entries(translation?.notice ?? {})) if (text) (notice as Record<string, string>)[field] = text;
  const categories = form.categories.map((c, i) => ({ id: c.ref, name: translation?.categories?.[c.ref]?.name || c.name, sortOrder: i }));
  const purposes: SdkPurpose[] = form.purposes.map((p, i) => {
    const texts = translation?.purposes?.[p.key];
    return { id: p.ref, key: p.key, name: texts?.name || p.name, description: texts?.description || p.description, required: p.required, categoryId: p.category, sortOrder: i };
  });
  return { purposes, categories, notice };
}

export interface PublishedConfig {
  purposes: SdkPurpose[];
  categories: { id: string; name: string; sortOrder: number }[];
  notice: Notice;
}

const NOTICE_LABELS: Record<keyof Omit<Notice, '__typename'>, string> = {
  title: 'Notice title',
  description: 'Notice text',
  acceptLabel: 'Accept button',
  rejectLabel: 'Reject button',
  manageLabel: 'Manage button',
  companyName: 'Company name',
  logoUrl: 'Logo',
  primaryColor: 'Colour',
};

const EXPERIENCE_LABELS: Record<string, string> = {
  defaultLocale: 'Default language',
  translations: 'Translations',
  privacyPolicyUrl: 'Privacy policy link',
  reconsentAfterDays: 'Ask again after (days)',
  gpc: 'Global Privacy Control',
  googleConsentMode: 'Google Consent Mode',
  cookies: 'Cookies',
  theme: 'Theme',
  integrations: 'Integrations',
  cookieDomain: 'Shared cookie domain',
};

/** Stable JSON (keys sorted), to compare objects the database may return in another key order. */
export function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface Change {
  kind: 'added' | 'removed' | 'changed';
  what: string;
  detail?: string;
}

/** What publishing the saved draft would change against the latest version, in words. */
export function differences(draft: ServerDraft, experience: unknown, latest: { config: unknown; experience: unknown } | null): Change[] {
  if (!latest) return [];
  const before = latest.config as PublishedConfig;
  const changes: Change[] = [];
  const categoryName = (list: { id: string; name: string }[], id: string) => list.find((c) => c.id === id)?.name ?? '';
  const oldPurposes = new Map(before.purposes.map((p) => [p.key, p]));
  const newPurposes = new Map(draft.purposes.map((p) => [p.key, p]));
  for (const [key, p] of newPurposes) {
    const old = oldPurposes.get(key);
    if (!old) {
      changes.push({ kind: 'added', what: `Purpose “${p.name}” (${key})` });
      continue;
    }
    const fields: string[] = [];
    if (old.name !== p.name) fields.push(`name “${old.name}” → “${p.name}”`);
    if (old.description !== p.description) fields.push('description');
    if (old.required !== p.required) fields.push(p.required ? 'now required' : 'now optional');
    const oldCategory = categoryName(before.categories, old.categoryId);
    const newCategory = categoryName(draft.categories, p.categoryId);
    if (oldCategory !== newCategory) fields.push(`category “${oldCategory}” → “${newCategory}”`);
    if (old.sortOrder !== p.sortOrder) fields.push('position');
    if (fields.length) changes.push({ kind: 'changed', what: `Purpose “${p.name}” (${key})`, detail: fields.join(', ') });
  }
  for (const [key, p] of oldPurposes) if (!newPurposes.has(key)) changes.push({ kind: 'removed', what: `Purpose “${p.name}” (${key})` });
  const oldNames = new Set(before.categories.map((c) => c.name));
  const newNames = new Set(draft.categories.map((c) => c.name));
  for (const name of newNames) if (!oldNames.has(name)) changes.push({ kind: 'added', what: `Category “${name}”` });
  for (const name of oldNames) if (!newNames.has(name)) changes.push({ kind: 'removed', what: `Category “${name}”` });
  for (const [field, label] of Object.entries(NOTICE_LABELS)) {
    const a = before.notice[field as keyof Notice];
    const b = draft.notice[field as keyof Notice];
    if (a !== b) changes.push({ kind: 'changed', what: label, detail: field === 'description' ? undefined : `“${a}” → “${b}”` });
  }
  const oldExperience = (latest.experience ?? {}) as Record<string, unknown>;
  const newExperience = (experience ?? {}) as Record<string, unknown>;
  if (latest.experience === null) {
    // Published without an experience (the defaults then): report what a reader would notice.
    const locales = Object.keys((newExperience.translations ?? {}) as object);
    if (locales.length) changes.push({ kind: 'added', what: 'Translations', detail: locales.join(', ') });
    if ((newExperience.googleConsentMode as { enabled?: boolean } | undefined)?.enabled) changes.push({ kind: 'added', what: 'Google Consent Mode' });
    return changes;
  }
  for (const key of new Set([...Object.keys(oldExperience), ...Object.keys(newExperience)])) {
    if (stable(oldExperience[key]) === stable(newExperience[key])) continue;
    const label = EXPERIENCE_LABELS[key] ?? key;
    if (key === 'translations') {
      const a = Object.keys((oldExperience[key] ?? {}) as object);
      const b = Object.keys((newExperience[key] ?? {}) as object);
      const added = b.filter((l) => !a.includes(l));
      const removed = a.filter((l) => !b.includes(l));
      const detail = [added.length ? `added ${added.join(', ')}` : '', removed.length ? `removed ${removed.join(', ')}` : '', !added.length && !removed.length ? 'texts' : '']
        .filter(Boolean)
        .join('; ');
      changes.push({ kind: 'changed', what: label, detail });
    } else {
      changes.push({ kind: oldExperience[key] === undefined ? 'added' : 'changed', what: label });
    }
  }
  return changes;
}
