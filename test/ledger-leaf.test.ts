// The writer's own canonical JSON of a receipt (src/ledger/leaf.ts) must be byte for byte what the verifier
// computes with the general RFC 8785 serializer from the exported receipt: otherwise every root the service
// signs would fail `consent-verify`. Generated receipts, including unusual text, purposes and absent fields.
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalReceipt, receiptLeafHash } from '../src/ledger/leaf.js';
import { exportedReceipt, type ReceiptView } from '../src/receipts/service.js';
import { leafHash } from '../verify/ledger.mjs';

// Any text PostgreSQL can hold (whole code points, no NUL), as visitors' SDKs may send it.
const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((value) => !value.includes('\0'));
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const receipt: fc.Arbitrary<ReceiptView> = fc.record({
  id: fc.uuid(),
  versionId: text,
  versionNumber: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  consentHash: text,
  // Purpose keys in any order and script, numeric-looking ones too (objects list those first).
  choices: fc.dictionary(fc.oneof(text, fc.integer({ min: 0, max: 999 }).map(String)), fc.boolean(), { maxKeys: 8 }),
  installationId: text,
  sdkVersion: nullable(text),
  createdAt: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59.999Z'), noInvalidDate: true }),
  locale: nullable(text),
  gpc: nullable(fc.boolean()),
  jurisdiction: nullable(text),
  action: nullable(fc.constantFrom('accept_all', 'reject_all', 'custom', 'opt_out', 'gpc')),
  gpp: nullable(text),
  // Issue 47: a subject hash is 64 hex characters; any text is checked all the same.
  subjectHash: nullable(text),
})
  // Issue 39: an AC string only beside a TC string, as the consent route stores them.
  .chain((r) =>
  fc.record({ tcString: nullable(text), addtlConsent: nullable(text) }).map((tcf) => ({ ...r, tcString: tcf.tcString, addtlConsent: tcf.tcString === null ? null : tcf.addtlConsent })),
)
  // Issue 45: a source, its optional app fields present or absent (its text is bounded by the route; any here).
  .chain((r) =>
    nullable(
      fc.record(
        { sdk: fc.constantFrom('browser' as const, 'core' as const, 'react-native' as const), sdkVersion: text, platform: fc.constantFrom('web' as const, 'ios' as const, 'android' as const, 'other' as const), appId: text, appVersion: text },
        { requiredKeys: ['sdk', 'sdkVersion', 'platform'] },
      ),
    ).map((source) => ({ ...r, source })),
  );

describe('the ledger’s receipt serializer', () => {
  it('writes what canonicalize writes for the exported receipt, and hashes to the verifier’s leaf', () => {
    fc.assert(
      fc.property(receipt, (r) => {
        expect(canonicalReceipt(r)).toBe(canonicalize(exportedReceipt(r)));
        expect(receiptLeafHash(r).equals(leafHash(exportedReceipt(r)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes only the exported fields of a writer’s receipt, and leaves other shapes to the general serializer', () => {
    const view: ReceiptView = {
      id: '019ac000-0000-7000-8000-000000000000',
      versionId: 'v',
      versionNumber: 1,
      consentHash: 'h',
      choices: { analytics: 'yes', nested: { a: 1 } },
      installationId: 'i',
      sdkVersion: null,
      createdAt: new Date('2026-11-26T00:00:00.000Z'),
      locale: null,
      gpc: null,
      jurisdiction: null,
      action: null,
      gpp: null,
      tcString: null,
      addtlConsent: null,
      source: null,
      subjectHash: null,
    };
    expect(canonicalReceipt(view)).toBeNull();
    const written = { ...view, projectId: 'p', apiKeyId: 'k', decision: 'custom' };
    expect(receiptLeafHash(written).equals(leafHash(exportedReceipt(view)))).toBe(true);
    const boolean = { ...written, choices: { analytics: true } };
    expect(receiptLeafHash(boolean).equals(leafHash(exportedReceipt({ ...view, choices: { analytics: true } })))).toBe(true);
  });
});
