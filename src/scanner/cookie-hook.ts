// Who wrote `document.cookie`: an init script wraps the setter in every frame and hands the cookie text and
// the JavaScript stack of the write to the scanner; the scanner (not the page) reads the top http(s) frame of
// the stack as the script that set it. The page must not be able to forge that:
// - the channel is a CDP binding (`Runtime.addBinding`) under a random name per visit, which the init script
//   takes into its closure and deletes from `window` before any page script runs (Playwright's exposeBinding
//   is not used: its bindings stay callable from the page through `__playwright__binding__controller__`);
// - the hook uses only builtins it captured before the page ran, and reads the stack with
//   `Error.prepareStackTrace` cleared (a page that made it an accessor gets no attribution, not a forged one);
// - parsing (name, deletion, frames) happens here, in Node.
import { randomBytes } from 'node:crypto';
import type { BrowserContext, CDPSession } from 'playwright-core';

export interface CookieWrite {
  name: string;
  /** The script on top of the stack; null when the stack named none. */
  scriptUrl: string | null;
}

const MAX_TEXT = 4096;
const MAX_STACK = 8192;

function hookSource(binding: string): string {
  return `(() => {
  const report = window[${JSON.stringify(binding)}];
  try { delete window[${JSON.stringify(binding)}]; } catch (e) {}
  if (typeof report !== 'function') return;
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  if (!d || !d.set || !d.get) return;
  const E = Error, apply = Reflect.apply, slice = String.prototype.slice, toText = String, stringify = JSON.stringify;
  const own = Object.getOwnPropertyDescriptor, setter = d.set, getter = d.get;
  Object.defineProperty(Document.prototype, 'cookie', {
    configurable: true, enumerable: d.enumerable,
    get() { return apply(getter, this, []); },
    set(value) {
      try {
        const text = apply(slice, toText(value), [0, ${MAX_TEXT}]);
        let stack = null;
        const prepare = own(E, 'prepareStackTrace'), limit = own(E, 'stackTraceLimit');
        if ((!prepare || ('value' in prepare && prepare.writable)) && (!limit || ('value' in limit && limit.writable))) {
          try {
            E.prepareStackTrace = undefined;
            E.stackTraceLimit = 20;
            const s = new E().stack;
            if (typeof s === 'string') stack = apply(slice, s, [0, ${MAX_STACK}]);
          } finally {
            if (prepare) E.prepareStackTrace = prepare.value; else delete E.prepareStackTrace;
            if (limit) E.stackTraceLimit = limit.value;
          }
        }
        report(stringify([text, stack]));
      } catch (e) {}
      return apply(setter, this, [value]);
    },
  });
})();`;
}

/** The first http(s) script of a V8 stack ("    at fn (https://host/a.js:1:2)"), this hook's own frame aside. */
function topScript(stack: string | null): string | null {
  const frames = (stack ?? '').match(/https?:\/\/[^\s()]+?:\d+:\d+/g) ?? [];
  return frames.length ? frames[0]!.replace(/:\d+:\d+$/, '') : null;
}

/** Installs the hook for the context's documents; call `listen` with the page's CDP session before navigating. */
export async function installCookieHook(context: BrowserContext) {
  const binding = `__c${randomBytes(12).toString('hex')}`;
  await context.addInitScript(hookSource(binding));
  return {
    async listen(cdp: CDPSession, onWrite: (write: CookieWrite) => void): Promise<void> {
      cdp.on('Runtime.bindingCalled', (event) => {
        if (event.name !== binding) return;
        let text: unknown, stack: unknown;
        try {
          [text, stack] = JSON.parse(event.payload) as unknown[];
        } catch {
          return;
        }
        if (typeof text !== 'string' || (stack !== null && typeof stack !== 'string')) return;
        if (/expires=thu, 01 jan 1970|max-age=(0|-)/i.test(text)) return; // a deletion sets nothing
        const name = text.split('=')[0]!.trim().slice(0, 256);
        if (name) onWrite({ name, scriptUrl: topScript(stack) });
      });
      // Chromium sends bindingCalled only to a session with the Runtime domain on.
      await cdp.send('Runtime.enable');
      await cdp.send('Runtime.addBinding', { name: binding });
    },
  };
}
