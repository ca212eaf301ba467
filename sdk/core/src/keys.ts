// The IAB in-app keys the core may write (docs/apps.md, "The in-app keys"): what is not set now is named for
// removal. Here, not in tcf.ts, so that a project without TCF or GPP learns them without loading the IAB chunk.
const TCF_KEYS = [
  'IABTCF_CmpSdkID',
  'IABTCF_CmpSdkVersion',
  'IABTCF_PolicyVersion',
  'IABTCF_gdprApplies',
  'IABTCF_PublisherCC',
  'IABTCF_PurposeOneTreatment',
  'IABTCF_UseNonStandardTexts',
  'IABTCF_TCString',
  'IABTCF_VendorConsents',
  'IABTCF_VendorLegitimateInterests',
  'IABTCF_PurposeConsents',
  'IABTCF_PurposeLegitimateInterests',
  'IABTCF_SpecialFeaturesOptIns',
  'IABTCF_PublisherConsent',
  'IABTCF_PublisherLegitimateInterests',
  'IABTCF_PublisherCustomPurposesConsents',
  'IABTCF_PublisherCustomPurposesLegitimateInterests',
  'IABTCF_AddtlConsent',
  // One per TCF purpose (1 to 11) that could carry a publisher restriction.
  ...Array.from({ length: 11 }, (_, i) => `IABTCF_PublisherRestrictions${i + 1}`),
];
const GPP_KEYS = ['IABGPP_HDR_Version', 'IABGPP_HDR_Sections', 'IABGPP_HDR_GppString', 'IABGPP_GppSID'];
/** The GPP sections the core can write: tcfeuv2 (2), usnat (7) and the states' (8 to 22 today). */
const GPP_SECTION_IDS = [2, ...Array.from({ length: 16 }, (_, i) => i + 7)];
export const ALL_KEYS = [...TCF_KEYS, ...GPP_KEYS, ...GPP_SECTION_IDS.map((id) => `IABGPP_${id}_String`)];

