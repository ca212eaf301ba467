import type { Declarations, Vendor } from '@iabtechlabtcf/core';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import { authenticateSdk } from '../sdk/access.js';
import { consumeConfigAllowance, type SdkCallerInfo } from '../sdk/config.js';
import { resolveLocale } from '../sdk/config-v2.js';
import { noPublishedVersion } from '../sdk/errors.js';
import type { Db } from '../db/prisma.js';
import type { PublishedTcf, TcfSettings } from './settings.js';
import { readAcProviders, readTranslation, readVendorList, type AcProvider, type StandardTexts, type StoredVendorList } from './vendor-list.js';

export const tcfNotEnabled = () => new AppError('tcf_not_enabled', 'The live version of this project does not use IAB TCF');
export const vendorListMissing = () =>
  new AppError('tcf_vendor_list_missing', 'The vendor list the live version pinned is not held by this installation');

/** GET /api/sdk/v2/tcf/vendor-list: what the live version's TCF banner needs, its texts in one language. */
export interface SdkVendorList {
  vendorListVersion: number;
  tcfPolicyVersion: number;
  /** The ISO 639-1 language of the texts (the TC string's ConsentLanguage): the visitor's, or en when the IAB's file is not held. */
  language: string;
  purposes: Declarations['purposes'];
  specialPurposes: Declarations['specialPurposes'];
  features: Declarations['features'];
  specialFeatures: Declarations['specialFeatures'];
  stacks: Declarations['stacks'];
  dataCategories: NonNullable<Declarations['dataCategories']>;
  /** The IAB's standard texts (TCF v2.4): `features` introduces the features; English when the translation has none. */
  standardTexts: StandardTexts;
  vendors: Record<string, Vendor>;
  googleAtps: AcProvider[];
}

/**
 * Key, origin and rate limit as the v2 config. The vendors are the live version's, from the GVL version it pinned
 * (so the banner discloses exactly what receipts are checked against); the IAB's texts in the language of the
 * requested locale as the experience resolves it (exact tag, then language, then the default locale).
 */
export async function sdkTcfVendorList(services: Services, caller: SdkCallerInfo, locale: string | undefined): Promise<SdkVendorList> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  await consumeConfigAllowance(services, keyId, caller.address);
  const version = project.version;
  if (!version) throw noPublishedVersion();
  const tcf = version.experience?.tcf as PublishedTcf | undefined;
  if (!tcf?.enabled || tcf.vendorListVersion === undefined) throw tcfNotEnabled();
  const experience = version.experience!;
  const db = services.db.prisma;
  const list = await readVendorList(db, tcf.vendorListVersion);
  if (!list) throw vendorListMissing();
  const resolved = (locale && resolveLocale(experience, locale)) || experience.defaultLocale;
  return vendorListAnswer(db, list, tcf, resolved.split('-')[0]!.toLowerCase());
}

/**
 * The answer for a list and the settings' vendors and ATPs, the IAB's texts in `language` (ISO 639-1) when its
 * file is held, English otherwise. Also what the console's TCF preview feeds tcf.js for the draft (docs/tcf.md).
 */
export async function vendorListAnswer(
  db: Db,
  list: StoredVendorList,
  tcf: Pick<TcfSettings, 'vendors' | 'googleAtps'>,
  language: string,
): Promise<SdkVendorList> {
  const translation = language === 'en' ? null : await readTranslation(db, language);
  const texts: Declarations & { standardTexts?: StandardTexts } = translation ?? list.content;
  const providers = tcf.googleAtps.length ? ((await readAcProviders(db)) ?? []) : [];
  const atps = new Set(tcf.googleAtps);
  return {
    vendorListVersion: list.version,
    tcfPolicyVersion: list.tcfPolicyVersion,
    language: translation ? language : 'en',
    purposes: texts.purposes,
    specialPurposes: texts.specialPurposes,
    features: texts.features,
    specialFeatures: texts.specialFeatures,
    stacks: texts.stacks,
    dataCategories: texts.dataCategories ?? {},
    standardTexts: texts.standardTexts ?? list.content.standardTexts ?? {},
    vendors: Object.fromEntries(tcf.vendors.flatMap((id) => (list.content.vendors[id] ? [[String(id), list.content.vendors[id]!]] : []))),
    googleAtps: providers.filter((provider) => atps.has(provider.id)),
  };
}
