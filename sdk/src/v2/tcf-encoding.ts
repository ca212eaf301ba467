// The TC string and Google's AC string, from the IAB's @iabtechlabtcf/core: what the browser's tcf.js and the
// headless core (@consent/core/tcf, sdk/core/src/tcf.ts) both encode. No DOM here: the core runs in apps.
import { GVL, PurposeRestriction, RestrictionType, Segment, TCModel, TCString } from '@iabtechlabtcf/core';
import type { Purpose, ReceiptBody, TcfSettings } from './api';
export { gdprApplies } from './gdpr';

export type Texts = { id: number; name: string; description?: string };
export interface Vendor {
  id: number;
  name: string;
  purposes: number[];
  legIntPurposes: number[];
  flexiblePurposes: number[];
  specialPurposes: number[];
  features: number[];
  specialFeatures: number[];
  cookieMaxAgeSeconds?: number | null;
  usesNonCookieAccess?: boolean;
  deviceStorageDisclosureUrl?: string;
  urls?: { langId: string; privacy: string; legIntClaim?: string }[];
  dataRetention?: { stdRetention?: number; purposes?: Record<string, number> };
  dataDeclaration?: number[];
}
/** `GET /api/sdk/v2/tcf/vendor-list?locale=`: the live version's vendors and ATPs, texts in the visitor's language. */
export interface VendorList {
  vendorListVersion: number;
  tcfPolicyVersion: number;
  purposes: Record<string, Texts>;
  specialPurposes: Record<string, Texts>;
  features: Record<string, Texts>;
  specialFeatures: Record<string, Texts>;
  stacks: Record<string, Texts & { purposes: number[]; specialFeatures: number[] }>;
  dataCategories: Record<string, Texts>;
  vendors: Record<string, Vendor>;
  googleAtps: { id: number; name: string; policyUrl?: string }[];
}

/** What the visitor granted: TCF ids, the site's own purposes that no TCF purpose maps, and Google's ATPs. */
export interface Choice {
  purposes: number[];
  /** Purposes whose legitimate interest the visitor did not object to. */
  legInt: number[];
  specialFeatures: number[];
  vendors: number[];
  vendorLegInt: number[];
  atps: number[];
  /** Keys of the site's optional purposes that purposeMap leaves unmapped. */
  own: string[];
}
export type Strings = NonNullable<ReceiptBody['tcf']>;


export const ids = (o: Record<string, unknown> | undefined) => Object.keys(o || {}).map(Number);
const sorted = (list: Iterable<number>) => [...new Set(list)].sort((a, b) => a - b);
/** The TC string holds at most 390 days of a decision (TCF Policies: renew at least every 13 months). */
const MAX_DAYS = 390;

/** Every purpose and vendor legitimate interest, no consent: the string while the banner shows, and Reject all's base. */
export const choiceOf = (list: VendorList, settings: TcfSettings, all: boolean, own: string[] = []): Choice => ({
  purposes: all ? ids(list.purposes) : [],
  legInt: all ? ids(list.purposes) : [],
  specialFeatures: all ? settings.specialFeatures : [],
  vendors: all ? ids(list.vendors) : [],
  vendorLegInt: all ? ids(list.vendors) : [],
  atps: all ? settings.googleAtps : [],
  own,
});

/** The GVL the IAB's library encodes against, from our vendor list (vendors keyed by id, as the IAB's file has them). */
export function gvlOf(list: VendorList): GVL {
  const vendors = Array.isArray(list.vendors) ? Object.fromEntries(list.vendors.map((v: Vendor) => [v.id, v])) : list.vendors;
  return new GVL({ gvlSpecificationVersion: 3, lastUpdated: new Date(0), ...list, vendors } as unknown as ConstructorParameters<typeof GVL>[0]);
}

/**
 * The TC string (core, disclosed vendors, and the publisher TC segment when the project has `publisher`) and
 * Google's AC string for a choice: `2~<consented>~dv.<disclosed, not consented>`.
 */
export function encode(gvl: GVL, settings: TcfSettings, choice: Choice, locale: string): Strings {
  const m = new TCModel(gvl);
  m.cmpId = settings.cmpId;
  m.cmpVersion = settings.cmpVersion;
  m.isServiceSpecific = true;
  m.publisherCountryCode = settings.publisherCountryCode;
  try {
    m.consentLanguage = locale.slice(0, 2).toUpperCase();
  } catch {
    // A language the TCF does not list: the default, EN.
  }
  const vendors = ids(gvl.vendors);
  m.vendorsDisclosed.set(vendors);
  m.purposeConsents.set(choice.purposes);
  // The library clears what TCF v2.2 forbids (legitimate interest for purposes 1 and 3 to 6).
  m.purposeLegitimateInterests.set(choice.legInt);
  m.specialFeatureOptins.set(choice.specialFeatures);
  m.vendorConsents.set(choice.vendors.filter((id) => vendors.includes(id)));
  m.vendorLegitimateInterests.set(choice.vendorLegInt.filter((id) => vendors.includes(id)));
  const types = { notAllowed: RestrictionType.NOT_ALLOWED, requireConsent: RestrictionType.REQUIRE_CONSENT, requireLegitimateInterest: RestrictionType.REQUIRE_LI };
  for (const r of settings.restrictions || []) for (const v of r.vendorIds) m.publisherRestrictions.add(v, new PurposeRestriction(r.purposeId, types[r.type]));
  const segments = [Segment.CORE, Segment.VENDORS_DISCLOSED];
  const publisher = settings.publisher;
  if (publisher) {
    segments.push(Segment.PUBLISHER_TC);
    m.publisherConsents.set(publisher.purposes.filter((id) => choice.purposes.includes(id)));
    m.publisherLegitimateInterests.set(publisher.legitimateInterests.filter((id) => choice.legInt.includes(id)));
  }
  const atps = sorted(settings.googleAtps);
  const consented = atps.filter((id) => choice.atps.includes(id));
  return {
    tcString: TCString.encode(m, { segments }),
    addtlConsent: `2~${consented.join('.')}~dv.${atps.filter((id) => !consented.includes(id)).join('.')}`,
  };
}

/** A draft purpose is granted when every TCF purpose mapped to it has consent; an unmapped one by its own switch. */
export function grants(settings: TcfSettings, choice: Choice, p: Purpose): boolean {
  const mapped = settings.purposeMap[p.key];
  return p.required || (mapped?.length ? mapped.every((id) => choice.purposes.includes(id)) : choice.own.includes(p.key));
}

/**
 * A stored TC string still answers (`tcloaded`) unless the banner must come back: no current decision in the core
 * (new consentHash, reconsentAfterDays), another CMP, a vendor this version discloses that the string did not,
 * or older than 390 days.
 */
export function stillValid(tcString: string, settings: TcfSettings, days: number): boolean {
  try {
    const m = TCString.decode(tcString);
    const age = Date.now() - +m.lastUpdated!;
    return m.cmpId == settings.cmpId && settings.vendors.every((id) => m.vendorsDisclosed.has(id)) && age <= Math.min(days || MAX_DAYS, MAX_DAYS) * 86_400_000;
  } catch {
    return false;
  }
}

