import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import { PURPOSE_KEY } from '../consent/validation.js';
import { isCountryCode } from '../consent/regions.js';
import type { Vendor } from '@iabtechlabtcf/core';
import type { StoredVendorList } from './vendor-list.js';

// The `tcf` object of the experience (extensions.md section 11; docs/tcf.md): a project's IAB TCF v2.3 settings,
// saved in the draft and published with the version, which adds the pinned `vendorListVersion`.

// IDs are 16-bit in the TC string (vendor ids, MaxVendorId); purposes 1..24, special features 1..12 (the segment's widths).
const vendorId = z.number().int('Must be an integer').min(1, 'Must be a positive vendor id').max(65535, 'At most 65535');
const purposeId = z.number().int('Must be an integer').min(1, 'Must be a TCF purpose id (1 to 24)').max(24, 'Must be a TCF purpose id (1 to 24)');
const specialFeatureId = z.number().int('Must be an integer').min(1, 'Must be a special feature id (1 to 12)').max(12, 'Must be a special feature id (1 to 12)');
const uniqueIds = <T extends z.ZodType<number>>(id: T, max: number) =>
  z
    .array(id)
    .max(max, `At most ${max}`)
    .refine((ids) => new Set(ids).size === ids.length, 'Each id at most once');

export const TCF_RESTRICTION_TYPES = ['notAllowed', 'requireConsent', 'requireLegitimateInterest'] as const;
/** The IAB's RestrictionType numbers (the TC string's 2-bit field). */
export const RESTRICTION_TYPE_NUMBER = { notAllowed: 0, requireConsent: 1, requireLegitimateInterest: 2 } as const;

export const tcfSettingsInput = z
  .object({
    enabled: z.boolean().default(false),
    cmpId: z
      .number()
      .int('Must be an integer')
      .min(2, 'Must be your IAB-registered CMP id (an integer above 1)')
      .max(4095, 'At most 4095 (12 bits in the TC string)')
      .nullable()
      .default(null)
      .describe("The operator's IAB-registered CMP id (their own registration or their provider's); required when enabled, never defaulted"),
    cmpVersion: z.number().int('Must be an integer').min(1, 'At least 1').max(4095, 'At most 4095 (12 bits)').default(1),
    publisherCountryCode: z
      .string()
      .regex(/^[A-Z]{2}$/, 'Must be an ISO 3166-1 alpha-2 country code in capitals (FR, DE)')
      .refine((code) => code === 'AA' || isCountryCode(code), 'Must be an assigned ISO 3166-1 alpha-2 country code, or AA')
      .default('AA')
      .describe('The country of the publisher (ISO 3166-1 alpha-2); AA when unknown, as the IAB says'),
    vendors: uniqueIds(vendorId, 2000).default([]).describe('GVL vendor ids disclosed by the banner'),
    googleAtps: uniqueIds(z.number().int('Must be an integer').min(1, 'Must be a positive provider id'), 2000)
      .default([])
      .describe("Google Additional Consent provider ids (ATPs not on the GVL), encoded in the AC string"),
    specialFeatures: uniqueIds(specialFeatureId, 12).default([]).describe('Special features the banner asks opt-in for'),
    restrictions: z
      .array(
        z
          .object({
            purposeId,
            vendorIds: uniqueIds(vendorId, 2000).min(1, 'At least one vendor'),
            type: z.enum(TCF_RESTRICTION_TYPES, { message: `Must be one of ${TCF_RESTRICTION_TYPES.join(', ')}` }),
          })
          .strict(),
      )
      .max(100, 'At most 100 restrictions')
      .default([])
      .describe('Publisher restrictions (the core segment’s PubRestrictions)'),
    publisher: z
      .object({ purposes: uniqueIds(purposeId, 24).default([]), legitimateInterests: uniqueIds(purposeId, 24).default([]) })
      .strict()
      .nullable()
      .default(null)
      .describe('The publisher TC segment: purposes asked on consent and on legitimate interest; null: no segment'),
    purposeMap: z
      .record(z.string().regex(PURPOSE_KEY, 'Must be a purpose key'), uniqueIds(purposeId, 24))
      .default({})
      .describe('Draft purpose key → TCF purpose ids; the draft purpose is granted when every one of them has consent'),
  })
  .strict();

/** The settings as a published version carries them (the SDK v2 config's `experience.tcf`). */
export const publishedTcfSettings = tcfSettingsInput.extend({
  vendorListVersion: z.number().int().optional().describe('The Global Vendor List version the publish pinned (when enabled)'),
});

export type TcfSettings = z.output<typeof tcfSettingsInput>;
/** As published: the settings and the GVL version they were published with. */
export type PublishedTcf = TcfSettings & { vendorListVersion: number };

/**
 * Why the IAB's library would leave a restriction for this vendor out of the TC string, or null when it keeps it
 * (@iabtechlabtcf/core 1.5.21, `PurposeRestrictionVector.isOkToHave`; CMP API v2 and the string format say a
 * restriction only switches a flexible purpose's basis or forbids a declared purpose). Refused when the experience is
 * saved, so a restriction never vanishes from the string unsaid.
 */
export function droppedRestriction(type: TcfSettings['restrictions'][number]['type'], purposeId: number, vendor: Vendor): string | null {
  const onConsent = vendor.purposes.includes(purposeId);
  const onLegInt = vendor.legIntPurposes.includes(purposeId);
  const name = `Vendor ${vendor.id}`;
  if (type === 'notAllowed') return onConsent || onLegInt ? null : `${name} does not declare purpose ${purposeId}, so there is nothing to forbid`;
  const flexible = vendor.flexiblePurposes.includes(purposeId);
  if (type === 'requireConsent') {
    if (flexible && onLegInt) return null;
    if (onConsent) return `${name} already declares purpose ${purposeId} under consent`;
    return flexible ? `${name} does not declare purpose ${purposeId}` : `${name} does not declare purpose ${purposeId} as flexible, so its legal basis cannot be changed`;
  }
  if (flexible && onConsent) return null;
  if (onLegInt) return `${name} already declares purpose ${purposeId} under legitimate interest`;
  return flexible ? `${name} does not declare purpose ${purposeId}` : `${name} does not declare purpose ${purposeId} as flexible, so its legal basis cannot be changed`;
}

/**
 * What the settings name that the draft or the vendor lists do not hold (at PUT and again at publish, against the
 * vendor list publishing would pin). Paths are relative to the experience.
 */
export function tcfReferenceIssues(
  tcf: TcfSettings,
  purposeKeys: ReadonlySet<string>,
  lists: { vendorList: StoredVendorList | null; acProviderIds: ReadonlySet<number> | null },
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const at = (...path: (string | number)[]) => ['tcf', ...path];
  if (tcf.enabled && tcf.cmpId === null) {
    issues.push({ path: at('cmpId'), message: 'Required when TCF is enabled: your IAB-registered CMP id (docs/tcf.md says where to get one)' });
  }
  for (const key of Object.keys(tcf.purposeMap)) {
    if (!purposeKeys.has(key)) issues.push({ path: at('purposeMap', key), message: `Unknown purpose key ${key}` });
  }
  const list = lists.vendorList;
  const vendorIssue = (path: (string | number)[], id: number) => {
    if (!list) return issues.push({ path, message: 'No Global Vendor List is held yet: it is fetched when TCF is enabled, or imported (docs/tcf.md)' });
    const vendor = list.content.vendors[String(id)];
    if (!vendor) return issues.push({ path, message: `Vendor ${id} is not in the Global Vendor List version ${list.version}` });
    if (vendor.deletedDate && new Date(vendor.deletedDate) <= new Date()) {
      return issues.push({ path, message: `Vendor ${id} was deleted from the Global Vendor List (${vendor.deletedDate})` });
    }
  };
  tcf.vendors.forEach((id, i) => vendorIssue(at('vendors', i), id));
  const chosen = new Set(tcf.vendors);
  tcf.restrictions.forEach((restriction, r) =>
    restriction.vendorIds.forEach((id, i) => {
      if (!chosen.has(id)) issues.push({ path: at('restrictions', r, 'vendorIds', i), message: `Vendor ${id} is not one of tcf.vendors` });
    }),
  );
  if (list) {
    const known = (kind: 'purposes' | 'specialFeatures', id: number) => String(id) in list.content[kind];
    const checkPurpose = (path: (string | number)[], id: number) =>
      known('purposes', id) || issues.push({ path, message: `Purpose ${id} is not in the Global Vendor List version ${list.version}` });
    tcf.specialFeatures.forEach((id, i) => known('specialFeatures', id) || issues.push({ path: at('specialFeatures', i), message: `Special feature ${id} is not in the Global Vendor List version ${list.version}` }));
    tcf.restrictions.forEach((restriction, r) => checkPurpose(at('restrictions', r, 'purposeId'), restriction.purposeId));
    tcf.restrictions.forEach((restriction, r) =>
      restriction.vendorIds.forEach((id, i) => {
        const vendor = list.content.vendors[String(id)];
        const reason = vendor && chosen.has(id) && droppedRestriction(restriction.type, restriction.purposeId, vendor);
        if (reason) issues.push({ path: at('restrictions', r, 'vendorIds', i), message: `${reason}: the TC string could not carry this restriction` });
      }),
    );
    tcf.publisher?.purposes.forEach((id, i) => checkPurpose(at('publisher', 'purposes', i), id));
    tcf.publisher?.legitimateInterests.forEach((id, i) => checkPurpose(at('publisher', 'legitimateInterests', i), id));
    for (const [key, ids] of Object.entries(tcf.purposeMap)) ids.forEach((id, i) => checkPurpose(at('purposeMap', key, i), id));
  }
  tcf.googleAtps.forEach((id, i) => {
    if (!lists.acProviderIds) issues.push({ path: at('googleAtps', i), message: "No Google Additional Consent providers list is held yet" });
    else if (!lists.acProviderIds.has(id)) issues.push({ path: at('googleAtps', i), message: `Provider ${id} is not in Google's Additional Consent providers list` });
  });
  return issues;
}
