import { TCString, type TCModel, type Vector } from '@iabtechlabtcf/core';
import { z } from 'zod';
import { invalidBody } from '../sdk/errors.js';
import { RESTRICTION_TYPE_NUMBER, TCF_RESTRICTION_TYPES } from './settings.js';

// TC strings and Google AC strings on receipts (docs/tcf.md, "Receipts"): checked against the version when the
// SDK posts them, decoded for support and audits. Decoding is @iabtechlabtcf/core's, the IAB's own library.

export const MAX_TC_STRING_LENGTH = 8192;
export const MAX_AC_STRING_LENGTH = 8192;

/** The optional `tcf` of POST /api/sdk/v1/consent. */
export const tcfReceiptInput = z
  .object({
    tcString: z
      .string()
      .min(1, 'tcString must not be empty')
      .max(MAX_TC_STRING_LENGTH, `tcString must be at most ${MAX_TC_STRING_LENGTH} characters`)
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'tcString must be a TC string (base64url segments joined by dots)')
      .describe('The TC string the banner produced (core, disclosed vendors and, when the version has publisher purposes, publisher TC segments)'),
    addtlConsent: z
      .string()
      .max(MAX_AC_STRING_LENGTH, `addtlConsent must be at most ${MAX_AC_STRING_LENGTH} characters`)
      .optional()
      .describe("Google's Additional Consent string: 2~<consented ids>~dv.<disclosed ids> (or v1's 1~<ids>)"),
  })
  .strict()
  .describe('IAB TCF: the strings the TCF banner produced; checked against the version (docs/tcf.md)');

export type TcfReceipt = z.output<typeof tcfReceiptInput>;

/** What a version's receipts are checked against: its published TCF settings. */
export interface VersionTcf {
  cmpId: number;
  vendorListVersion: number;
  vendors: ReadonlySet<number>;
  googleAtps: ReadonlySet<number>;
}

// The TC string's segment types ("Consent string and vendor list formats" v2.3): the first 3 bits of a segment
// (the core segment's version field, 000010, starts with 000).
const SEGMENT = { core: 0, disclosedVendors: 1, publisherTC: 3 } as const;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const segmentTypes = (tcString: string) => tcString.split('.').map((segment) => BASE64URL.indexOf(segment[0]!) >> 3);

function decodeTcString(tcString: string): TCModel {
  const types = segmentTypes(tcString);
  if (types[0] !== SEGMENT.core) throw invalidBody('tcf.tcString: the first segment must be the core segment');
  let model: TCModel;
  try {
    model = TCString.decode(tcString);
  } catch (error) {
    throw invalidBody(`tcf.tcString: not a TC string (${(error as Error).message})`);
  }
  if (model.version !== 2) throw invalidBody(`tcf.tcString: version ${model.version}; TCF v2 strings only`);
  return model;
}

/** Google's AC string: v2 `2~<consented>~dv.<disclosed>`, v1 `1~<consented>`; ids dot-separated, ascending per the spec. */
export function parseAddtlConsent(ac: string): { version: 1 | 2; consented: number[]; disclosed: number[] } | null {
  const match = /^(?:1~([0-9.]*)|2~([0-9.]*)~dv\.([0-9.]*))$/.exec(ac);
  if (!match) return null;
  const ids = (list: string | undefined) => (list ? list.split('.') : []);
  const numbers = (list: string | undefined) => ids(list).map(Number);
  const valid = (list: string | undefined) => ids(list).every((id) => /^[1-9][0-9]{0,9}$/.test(id));
  if (![match[1], match[2], match[3]].every(valid)) return null;
  return match[1] !== undefined
    ? { version: 1, consented: numbers(match[1]), disclosed: [] }
    : { version: 2, consented: numbers(match[2]), disclosed: numbers(match[3]) };
}

const idsOf = (vector: Vector) => [...vector.values()].filter((id) => vector.has(id)).sort((a, b) => a - b);

/**
 * Refuses (400 invalid_body) a TC string that is malformed, comes from another CMP, lacks the disclosed-vendors
 * segment (mandatory since TCF v2.3), was made with another GVL version than the one the version pinned, or names a
 * vendor the version does not disclose; and an AC string that is malformed or names a provider the version does not.
 */
export function checkTcfReceipt(tcf: TcfReceipt, version: VersionTcf | null): void {
  if (!version) throw invalidBody('tcf: this version does not use IAB TCF');
  if (!passed(version).has(tcf.tcString)) checkTcString(tcf.tcString, version);
  if (tcf.addtlConsent !== undefined) {
    const ac = parseAddtlConsent(tcf.addtlConsent);
    if (!ac) throw invalidBody('tcf.addtlConsent: not an Additional Consent string (2~<ids>~dv.<ids>)');
    const stranger = [...ac.consented, ...ac.disclosed].find((id) => !version.googleAtps.has(id));
    if (stranger !== undefined) throw invalidBody(`tcf.addtlConsent: provider ${stranger} is not one of this version's Google ATPs`);
  }
}

// TC strings a version's check already passed. Created and LastUpdated are days, so every visitor who accepts (or
// rejects) all on one day sends the same string: decoding it again (about 30 µs with the IAB's library) is skipped.
// Per version object (the SDK cache's, src/sdk/cache.ts), at most PASSED_MAX strings, forgotten all at once.
const PASSED_MAX = 1024;
const passedByVersion = new WeakMap<VersionTcf, Set<string>>();
function passed(version: VersionTcf): Set<string> {
  let strings = passedByVersion.get(version);
  if (!strings) passedByVersion.set(version, (strings = new Set()));
  return strings;
}

function checkTcString(tcString: string, version: VersionTcf): void {
  if (!segmentTypes(tcString).includes(SEGMENT.disclosedVendors)) {
    throw invalidBody('tcf.tcString: the disclosed vendors segment is missing (mandatory since TCF v2.3)');
  }
  const model = decodeTcString(tcString);
  if (model.cmpId !== version.cmpId) throw invalidBody(`tcf.tcString: CMP id ${model.cmpId} is not the version's (${version.cmpId})`);
  if (model.vendorListVersion !== version.vendorListVersion) {
    throw invalidBody(`tcf.tcString: vendor list version ${model.vendorListVersion} is not the one the version pinned (${version.vendorListVersion})`);
  }
  for (const vector of [model.vendorsDisclosed, model.vendorConsents, model.vendorLegitimateInterests]) {
    const stranger = idsOf(vector).find((id) => !version.vendors.has(id));
    if (stranger !== undefined) throw invalidBody(`tcf.tcString: vendor ${stranger} was not disclosed by this version`);
  }
  const strings = passed(version);
  if (strings.size >= PASSED_MAX) strings.clear();
  strings.add(tcString);
}

const RESTRICTION_NAME = Object.fromEntries(TCF_RESTRICTION_TYPES.map((name) => [RESTRICTION_TYPE_NUMBER[name], name]));

/** A receipt's strings decoded (GET /receipts/:receiptId/tcf, Receipt.tcf): for support and audits. */
export function decodeTcfReceipt(tcString: string, addtlConsent: string | null) {
  const model = TCString.decode(tcString);
  const types = segmentTypes(tcString);
  const restrictions = model.publisherRestrictions
    .getRestrictions()
    .map((restriction) => ({
      purposeId: restriction.purposeId,
      type: RESTRICTION_NAME[restriction.restrictionType] ?? String(restriction.restrictionType),
      vendorIds: model.publisherRestrictions.getVendors(restriction),
    }))
    .sort((a, b) => a.purposeId - b.purposeId || a.type.localeCompare(b.type));
  return {
    tcString,
    addtlConsent,
    version: model.version,
    cmpId: model.cmpId,
    cmpVersion: model.cmpVersion,
    consentScreen: model.consentScreen,
    consentLanguage: model.consentLanguage,
    vendorListVersion: model.vendorListVersion,
    policyVersion: model.policyVersion,
    isServiceSpecific: model.isServiceSpecific,
    useNonStandardTexts: model.useNonStandardTexts,
    purposeOneTreatment: model.purposeOneTreatment,
    publisherCountryCode: model.publisherCountryCode,
    created: model.created.toISOString(),
    lastUpdated: model.lastUpdated.toISOString(),
    purposeConsents: idsOf(model.purposeConsents),
    purposeLegitimateInterests: idsOf(model.purposeLegitimateInterests),
    specialFeatureOptins: idsOf(model.specialFeatureOptins),
    vendorConsents: idsOf(model.vendorConsents),
    vendorLegitimateInterests: idsOf(model.vendorLegitimateInterests),
    vendorsDisclosed: idsOf(model.vendorsDisclosed),
    publisherRestrictions: restrictions,
    publisher: types.includes(SEGMENT.publisherTC)
      ? {
          purposeConsents: idsOf(model.publisherConsents),
          purposeLegitimateInterests: idsOf(model.publisherLegitimateInterests),
          customPurposeConsents: idsOf(model.publisherCustomConsents),
          customPurposeLegitimateInterests: idsOf(model.publisherCustomLegitimateInterests),
        }
      : null,
    additionalConsent: addtlConsent === null ? null : parseAddtlConsent(addtlConsent),
  };
}

export type DecodedTcf = ReturnType<typeof decodeTcfReceipt>;
