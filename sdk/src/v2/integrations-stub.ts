// stub.js, the integrations' part: a small classic script the page loads synchronously before the core, first in
// <head>, that writes each vendor's denied default while it is evaluated, before the vendor's own script can act
// (extensions.md section 12). Which vendors: the types the script tag names, `data-integrations="microsoft-uet
// meta-pixel"` (any script tag before it that has the attribute), on a visitor's first page too, and the types of
// the last configuration the core saw (local storage, STORED_TYPES). `ConsentStub.init(options)` does the same
// for `init({ integrations })`: the core calls it first thing in init. TCF's stub shares the file (stub.ts), and its
// 1 KiB min+gzip: written for size. A browser-only classic script: no guard for server rendering.
import { integrationDefaults, STORED_TYPES } from './integrations-vendors';
import { w } from './page';

let stored;
try {
  stored = localStorage[STORED_TYPES];
} catch {
  // storage blocked: the attribute alone
}
// join() reads null and undefined as empty strings; an empty name among the types does nothing.
integrationDefaults([document.querySelector<HTMLScriptElement>('script[data-integrations]')?.dataset.integrations, stored].join(' ').split(/[\s,]+/));
w.ConsentStub = {
  init: (options?: { integrations?: unknown }) => Array.isArray(options?.integrations) && integrationDefaults(options.integrations),
};
