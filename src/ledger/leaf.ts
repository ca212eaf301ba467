import { hash } from 'node:crypto';
import { leafHash } from '../../verify/ledger.mjs';
import { exportedReceipt, type ReceiptView } from '../receipts/service.js';

const json = JSON.stringify;

/**
 * The canonical JSON (RFC 8785) of a receipt as exported, written out for the receipt's fixed shape: the same
 * text as `canonicalize(exportedReceipt(receipt))`, which the verifier computes, at a fifth of the cost (every
 * receipt is hashed on the consent POST's path, issue 32's throughput goal). Keys in RFC 8785's order (UTF-16
 * code units, as `Array.prototype.sort`), the optional ones only when the SDK sent them, as the export does;
 * strings and numbers through JSON.stringify, as `canonicalize` does. `test/ledger-leaf.test.ts` holds the two
 * equal on generated receipts. Null for anything not of a receipt's shape (a choice that is not a boolean):
 * the general serializer decides those.
 */
export function canonicalReceipt(receipt: ReceiptView): string | null {
  const choices = receipt.choices as Record<string, unknown>;
  if (typeof choices !== 'object' || choices === null || Array.isArray(choices)) return null;
  let decided = '';
  for (const purpose of Object.keys(choices).sort()) {
    const value = choices[purpose];
    if (typeof value !== 'boolean') return null;
    decided += `${decided ? ',' : ''}${json(purpose)}:${value}`;
  }
  const { action, gpc, gpp, jurisdiction, locale, tcString, addtlConsent, source, subjectHash } = receipt;
  // Issue 39: `tcf` only on receipts that have a TC string, so every older leaf keeps its hash.
  const tcf = tcString === null ? '' : `"tcf":{${addtlConsent === null ? '' : `"addtlConsent":${json(addtlConsent)},`}"tcString":${json(tcString)}},`;
  // Issue 45: `source` only on receipts that have one (so every older leaf keeps its hash), keys in RFC 8785 order.
  const from =
    source === null
      ? ''
      : `"source":{${source.appId === undefined ? '' : `"appId":${json(source.appId)},`}${source.appVersion === undefined ? '' : `"appVersion":${json(source.appVersion)},`}` +
        `"platform":${json(source.platform)},"sdk":${json(source.sdk)},"sdkVersion":${json(source.sdkVersion)}},`;
  return (
    `{${action === null ? '' : `"action":${json(action)},`}"choices":{${decided}},"consentHash":${json(receipt.consentHash)},` +
    `"createdAt":${json(receipt.createdAt.toISOString())},${gpc === null ? '' : `"gpc":${gpc},`}${gpp === null ? '' : `"gpp":${json(gpp)},`}` +
    `"id":${json(receipt.id)},"installationId":${json(receipt.installationId)},${jurisdiction === null ? '' : `"jurisdiction":${json(jurisdiction)},`}` +
    `${locale === null ? '' : `"locale":${json(locale)},`}"sdkVersion":${json(receipt.sdkVersion)},${from}` +
    // Issue 47: only on receipts made for a signed-in person, so every older leaf keeps its hash.
    `${subjectHash === null ? '' : `"subjectHash":${json(subjectHash)},`}${tcf}"versionId":${json(receipt.versionId)},` +
    `"versionNumber":${json(receipt.versionNumber)}}`
  );
}

/** A receipt's ledger leaf (verify/ledger.mjs: SHA-256 of 0x00 and its canonical JSON as exported). */
export function receiptLeafHash(receipt: ReceiptView): Buffer {
  const canonical = canonicalReceipt(receipt);
  if (canonical !== null) return hash('sha256', `\0${canonical}`, 'buffer');
  const { id, versionId, versionNumber, consentHash, choices, installationId, sdkVersion, createdAt, locale, gpc, jurisdiction, action, gpp, tcString, addtlConsent, source, subjectHash } =
    receipt;
  // Only the view's own fields: a writer's receipt carries more (project, key, decision) that are not exported.
  return leafHash(
    exportedReceipt({ id, versionId, versionNumber, consentHash, choices, installationId, sdkVersion, createdAt, locale, gpc, jurisdiction, action, gpp, tcString, addtlConsent, source, subjectHash }),
  );
}
