// stub.js, the integrations' part: a small classic script the page loads synchronously before the core, first in
// <head>, that writes each vendor's denied default while it is evaluated, before the vendor's own script can act
// (extensions.md section 12). Which vendors: the types the script tag names, `data-integrations="microsoft-uet
// meta-pixel"` (any script tag before it that has the attribute), on a visitor's first page too, and the types of
// the last configuration the core saw (local storage, STORED_TYPES). `ConsentStub.init(options)` does the same
// for `init({ integrations })`: the core calls it first thing in init. (A TCF stub may share this file: sdk/rollup.config.mjs.)
import { integrationDefaults, STORED_TYPES } from './integrations-vendors';

// globalThis: nothing happens without a document (server rendering).
const d = globalThis.document;
if (d) {
  let stored: string | null = null;
  try {
    stored = localStorage.getItem(STORED_TYPES);
  } catch {
    // storage blocked: the attribute alone
  }
  const named = d.querySelector('script[data-integrations]')?.getAttribute('data-integrations');
  integrationDefaults(`${named || ''} ${stored || ''}`.split(/[\s,]+/).filter(Boolean));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const w = globalThis as any;
  (w.ConsentStub ||= {}).init = (options?: { integrations?: unknown }) => Array.isArray(options?.integrations) && integrationDefaults(options.integrations);
}
