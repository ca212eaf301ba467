import canonicalize from 'canonicalize';
import { stringify } from 'csv-stringify/sync';
import { NOTICE_FIELDS } from '../consent/config.js';
import { CSV_CAST } from '../csv.js';
import type { Experience } from '../consent/experience.js';
import type { EvidenceDocument } from './html.js';
import { translationRows } from './translations.js';

/**
 * The package as CSV, three blocks (four with an experience) separated by an
 * empty line, each with its own header row (docs/consent.md):
 *   1. `field,value`: project, version, publisher, hashes, receipts, notice, experience settings (with
 *      `experience.jurisdictions.<id>.regions|mode` in rule order and `experience.gpp.*` when set), generatedAt
 *   2. purposes: key, name, description, required, category, sortOrder, id, categoryId
 *   3. categories: id, name, sortOrder
 *   4. translations (versions with an experience): locale, field, text
 * Text cells that a spreadsheet would run as a formula (= + - @ tab CR first)
 * get a leading apostrophe (src/csv.ts); numbers and booleans are written as they are.
 */
export function renderEvidenceCsv({ project, evidence, generatedAt }: EvidenceDocument): string {
  const { version, config, publishedBy, hashes } = evidence;
  const categoryName = new Map(config.categories.map((category) => [category.id, category.name]));
  const iso = (value: Date | string | null) => (value ? new Date(value).toISOString() : '');
  const fields: [string, string | number][] = [
    ['project.id', project.id],
    ['project.name', project.name],
    ['project.organizationId', project.organizationId],
    ['version.id', version.id],
    ['version.number', version.number],
    ['version.publishedAt', iso(version.publishedAt)],
    ['publishedBy.id', publishedBy.id],
    ['publishedBy.email', publishedBy.email],
    ['publishedBy.name', publishedBy.name],
    ['hashes.contentHash', hashes.contentHash],
    ['hashes.consentHash', hashes.consentHash],
    ['hashes.packageHash', hashes.packageHash],
    ['receiptsCount', evidence.receiptsCount],
    ['firstReceiptAt', iso(evidence.firstReceiptAt)],
    ...NOTICE_FIELDS.map((field): [string, string] => [`notice.${field}`, config.notice[field]]),
    ...experienceFields(evidence.experience),
    ['generatedAt', iso(generatedAt)],
  ];
  const purposes = config.purposes.map((purpose) => [
    purpose.key,
    purpose.name,
    purpose.description,
    purpose.required,
    categoryName.get(purpose.categoryId) ?? '',
    purpose.sortOrder,
    purpose.id,
    purpose.categoryId,
  ]);
  const categories = config.categories.map((category) => [category.id, category.name, category.sortOrder]);

  const options = { cast: CSV_CAST };
  return [
    stringify([['field', 'value'], ...fields], options),
    stringify([['purpose.key', 'purpose.name', 'purpose.description', 'purpose.required', 'purpose.category', 'purpose.sortOrder', 'purpose.id', 'purpose.categoryId'], ...purposes], options),
    stringify([['category.id', 'category.name', 'category.sortOrder'], ...categories], options),
    // A fourth block only for versions published with an experience.
    ...(evidence.experience
      ? [stringify([['translation.locale', 'translation.field', 'translation.text'], ...translationRows(evidence.experience, categoryName)], options)]
      : []),
  ].join('\n');
}

/** The experience's settings as `experience.*` rows (lists joined with a space). */
function experienceFields(experience: Experience | undefined): [string, string | number][] {
  if (!experience) return [];
  return [
    ['experience.defaultLocale', experience.defaultLocale],
    ['experience.locales', Object.keys(experience.translations).sort().join(' ')],
    ['experience.privacyPolicyUrl', experience.privacyPolicyUrl],
    ['experience.reconsentAfterDays', experience.reconsentAfterDays],
    ['experience.gpc.optOutPurposes', experience.gpc.optOutPurposes.join(' ')],
    ['experience.googleConsentMode.enabled', String(experience.googleConsentMode.enabled)],
    ...Object.entries(experience.googleConsentMode.signals).map(([signal, keys]): [string, string] => [
      `experience.googleConsentMode.signals.${signal}`,
      keys.join(' '),
    ]),
    ...Object.entries(experience.cookies).map(([key, names]): [string, string] => [`experience.cookies.${key}`, names.join(' ')]),
    ['experience.theme.colorScheme', experience.theme.colorScheme],
    ['experience.theme.borderRadius', experience.theme.borderRadius],
    // Only experiences that set them (older packages stay as they were); an empty list means the defaults.
    ...(experience.jurisdictions?.length === 0 ? [['experience.jurisdictions', ''] as [string, string]] : []),
    ...(experience.jurisdictions ?? []).flatMap((rule): [string, string][] => [
      [`experience.jurisdictions.${rule.id}.regions`, rule.regions.join(' ')],
      [`experience.jurisdictions.${rule.id}.mode`, rule.mode],
    ]),
    ...(experience.gpp
      ? ([
          ['experience.gpp.mspaCoveredTransaction', String(experience.gpp.mspaCoveredTransaction)],
          ['experience.gpp.mspaMode', experience.gpp.mspaMode],
        ] as [string, string][])
      : []),
    // IAB TCF (docs/tcf.md): the settings as canonical JSON, with the vendor list version the publish pinned.
    ...(experience.tcf ? [['experience.tcf', canonicalize(experience.tcf) ?? ''] as [string, string]] : []),
  ];
}
