// @consent/core/tcf: what the IAB's libraries do for an app, loaded by the core only for projects that need it
// (its own chunk, outside the core's 12 KiB): the TC string and Google's AC string encoded exactly as the browser's
// tcf.js does (sdk/src/v2/tcf-encoding.ts, @iabtechlabtcf/core), the GPP string as gpp.js does (@iabgpp/cmpapi), and
// the IAB's in-app keys with the IAB's types. Where we read each key and type: docs/apps.md, "The in-app keys".
import { GppModel, TcfEuV2, UsNat } from '@iabgpp/cmpapi';
import { TCString, type TCModel } from '@iabtechlabtcf/core';
import type { SdkConfig } from '../../src/v2/api';
import { optedOut } from '../../src/v2/consent';
import { encode as encodeGpp } from '../../src/v2/gpp';
import { choiceOf, encode, gvlOf, ids, type Choice, type Strings, type VendorList } from '../../src/v2/tcf-encoding';
import { ALL_KEYS } from './keys';
import type { InAppKeys } from './public';

type Action = 'accept_all' | 'reject_all' | 'custom';

/**
 * The strings a decision's receipt carries. TCF: Accept all and Reject all as tcf.js makes them (docs/tcf.md, "What
 * goes into the string"); a custom choice by purpose key consents to the TCF purposes the granted keys map to
 * (purposeMap), keeps legitimate interests (no objection was asked for), and gives the disclosed vendors and
 * Google's providers consent only when some purpose was granted. GPP: the opt-out state, as gpp.js encodes it.
 */
export async function stringsFor(config: SdkConfig, choices: Record<string, boolean>, action: Action, vendorList: () => Promise<unknown>, tcfApplies: boolean): Promise<{ tcf?: Strings; gpp?: string }> {
  const settings = config.experience.tcf;
  if (!settings?.enabled || !tcfApplies) return { gpp: encodeGpp(config, optedOut(config, choices), false) };
  const list = (await vendorList()) as VendorList;
  const optional = config.config.purposes.filter((p) => !p.required);
  const own = optional.filter((p) => !settings.purposeMap[p.key]?.length && choices[p.key]).map((p) => p.key);
  let choice: Choice;
  if (action != 'custom') choice = choiceOf(list, settings, action == 'accept_all', own);
  else {
    const purposes = [...new Set(optional.filter((p) => choices[p.key]).flatMap((p) => settings.purposeMap[p.key] || []))];
    const some = purposes.length > 0;
    choice = { purposes, legInt: ids(list.purposes), specialFeatures: [], vendors: some ? ids(list.vendors) : [], vendorLegInt: ids(list.vendors), atps: some ? settings.googleAtps : [], own };
  }
  return { tcf: encode(gvlOf(list), settings, choice, config.locale) };
}

/** TCF purposes and special features the policy defines (TCF v2.2+): the 0/1 strings are at least this long. */
const PURPOSES = 11;
const SPECIAL_FEATURES = 2;

/** The IAB's "binary string": the character at index n is 1 when id n+1 is in the vector. */
const bits = (v: TCModel['vendorConsents'], length: number) => Array.from({ length: Math.max(length, v.maxId) }, (_, i) => (v.has(i + 1) ? '1' : '0')).join('');

/**
 * The in-app keys for the current state. TCF projects: the CMP keys once the core runs (IABTCF_CmpSdkID tells
 * vendors a CMP is present; gdprApplies 0 outside the EEA, UK and Switzerland), the TC data from the decision's TC
 * string (decoded by the IAB's library, so the keys always agree with the string), and GPP's tcfeuv2 section. US
 * opt-out: GPP's usnat (and the state's section) from the current choices. Everything else is named for removal.
 */
export function inAppKeys(config: SdkConfig | undefined, tcf: Strings | undefined, choices: Record<string, boolean>, tcfApplies: boolean, gppApplies: boolean): InAppKeys {
  const set: Record<string, string | number> = {};
  const settings = config?.experience.tcf;
  let gpp: GppModel | undefined;
  let applicable: number[] = [];
  if (settings?.enabled) {
    set.IABTCF_CmpSdkID = settings.cmpId;
    set.IABTCF_CmpSdkVersion = settings.cmpVersion;
    set.IABTCF_gdprApplies = tcfApplies ? 1 : 0;
    set.IABTCF_PublisherCC = settings.publisherCountryCode;
    if (tcfApplies && tcf) {
      const m = TCString.decode(tcf.tcString);
      const vendors = m.vendorsDisclosed.maxId;
      set.IABTCF_PolicyVersion = Number(m.policyVersion);
      set.IABTCF_PurposeOneTreatment = m.purposeOneTreatment ? 1 : 0;
      set.IABTCF_UseNonStandardTexts = m.useNonStandardTexts ? 1 : 0;
      set.IABTCF_TCString = tcf.tcString;
      set.IABTCF_VendorConsents = bits(m.vendorConsents, vendors);
      set.IABTCF_VendorLegitimateInterests = bits(m.vendorLegitimateInterests, vendors);
      set.IABTCF_PurposeConsents = bits(m.purposeConsents, PURPOSES);
      set.IABTCF_PurposeLegitimateInterests = bits(m.purposeLegitimateInterests, PURPOSES);
      set.IABTCF_SpecialFeaturesOptIns = bits(m.specialFeatureOptins, SPECIAL_FEATURES);
      if (settings.publisher) {
        set.IABTCF_PublisherConsent = bits(m.publisherConsents, PURPOSES);
        set.IABTCF_PublisherLegitimateInterests = bits(m.publisherLegitimateInterests, PURPOSES);
      }
      // The restriction type (0 not allowed, 1 require consent, 2 require legitimate interest) per vendor, `_` where none.
      for (const purpose of m.publisherRestrictions.getPurposes()) {
        set[`IABTCF_PublisherRestrictions${purpose}`] = Array.from({ length: vendors }, (_, i) => {
          const type = m.publisherRestrictions.getRestrictionType(i + 1, purpose);
          return type === undefined ? '_' : String(type);
        }).join('');
      }
      set.IABTCF_AddtlConsent = tcf.addtlConsent;
      gpp = new GppModel();
      gpp.decodeSection(TcfEuV2.NAME, tcf.tcString);
      applicable = [TcfEuV2.ID];
    }
  }
  if (!gpp && gppApplies && config) {
    gpp = new GppModel(encodeGpp(config, optedOut(config, choices), false));
    // usnat is the section in force (the national approach), as gpp.js publishes it; the state's rides along.
    applicable = [UsNat.ID];
  }
  if (gpp) {
    const sections: number[] = gpp.getSectionIds();
    set.IABGPP_HDR_Version = String(gpp.getHeader().Version ?? 1);
    set.IABGPP_HDR_Sections = sections.join('_');
    set.IABGPP_HDR_GppString = gpp.encode();
    set.IABGPP_GppSID = applicable.join('_');
    for (const id of sections) set[`IABGPP_${id}_String`] = gpp.encodeSectionById(id);
  }
  return { set, remove: ALL_KEYS.filter((k) => !(k in set)) };
}
