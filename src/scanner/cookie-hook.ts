// Who wrote a cookie or a storage key, and when: an init script wraps `document.cookie`'s setter,
// `cookieStore.set` and `Storage.prototype.setItem` in every frame and hands each write (its text, the JavaScript
// stack of the write, the document's URL) to the scanner; the scanner (not the page) reads the caller's frame of
// the stack as the script that wrote it. The page must not be able to forge that:
// - the channel is a CDP binding (`Runtime.addBinding`) under a random name per visit, which the init script
//   takes into its closure and deletes from `window` before any page script runs (Playwright's exposeBinding
//   is not used: its bindings stay callable from the page through `__playwright__binding__controller__`);
// - the hook uses only builtins it captured before the page ran, and reads the stack with
//   `Error.prepareStackTrace` cleared (a page that made it an accessor gets no attribution, not a forged one);
// - parsing (name, attributes, deletion, frames) happens here, in Node;
// - a document reports at most MAX_WRITES writes (a page writing 25,000 keys does not send 25,000 messages).
import { randomBytes } from 'node:crypto';
import type { BrowserContext, CDPSession } from 'playwright-core';

export interface HookedWrite {
  type: 'cookie' | 'storage';
  name: string;
  /** Storage writes: which area; null for cookies. */
  area: 'local' | 'session' | null;
  /** Cookies: the attributes as written, without the value (`path=/; max-age=63072000`); null for storage. */
  attributes: string | null;
  /**
   * The caller's script (without query or position); null when the stack named none (an inline script the SDK
   * released by inserting a copy has no URL of its own). `stackRead` false: the page kept the stack from us.
   */
  scriptUrl: string | null;
  stackRead: boolean;
  /** The URL of the document that wrote it. */
  documentUrl: string;
}

const MAX_TEXT = 4096;
const MAX_STACK = 8192;
const MAX_WRITES = 500;
/** Frames above the writer's on the stack: `stackNow`, `send`, the wrapper (cookie setter, cookieStore.set, setItem). */
const OWN_FRAMES = 3;

function hookSource(binding: string): string {
  return `(() => {
  const report = window[${JSON.stringify(binding)}];
  try { delete window[${JSON.stringify(binding)}]; } catch (e) {}
  if (typeof report !== 'function') return;
  const E = Error, apply = Reflect.apply, slice = String.prototype.slice, toText = String, stringify = JSON.stringify;
  const own = Object.getOwnPropertyDescriptor, define = Object.defineProperty, loc = location;
  const hrefOf = own(Location.prototype, 'href') || own(loc, 'href');
  let budget = ${MAX_WRITES};
  const cap = (value, max) => apply(slice, toText(value), [0, max]);
  function stackNow() {
    const prepare = own(E, 'prepareStackTrace'), limit = own(E, 'stackTraceLimit');
    if (!((!prepare || ('value' in prepare && prepare.writable)) && (!limit || ('value' in limit && limit.writable)))) return null;
    try {
      E.prepareStackTrace = undefined;
      E.stackTraceLimit = 20;
      const s = new E().stack;
      return typeof s === 'string' ? apply(slice, s, [0, ${MAX_STACK}]) : null;
    } finally {
      if (prepare) E.prepareStackTrace = prepare.value; else delete E.prepareStackTrace;
      if (limit) E.stackTraceLimit = limit.value;
    }
  }
  function send(type, text, area) {
    try {
      if (budget <= 0) return;
      budget--;
      const stack = stackNow();
      let href = '';
      try { href = toText(hrefOf && hrefOf.get ? apply(hrefOf.get, loc, []) : loc.href); } catch (e) {}
      report(stringify([type, cap(text, ${MAX_TEXT}), area, stack, cap(href, ${MAX_TEXT})]));
    } catch (e) {}
  }
  const d = own(Document.prototype, 'cookie');
  if (d && d.set && d.get) {
    const setter = d.set, getter = d.get;
    define(Document.prototype, 'cookie', {
      configurable: true, enumerable: d.enumerable,
      get() { return apply(getter, this, []); },
      set(value) { send('cookie', value, null); return apply(setter, this, [value]); },
    });
  }
  if (typeof CookieStore !== 'undefined' && CookieStore.prototype.set) {
    const set = CookieStore.prototype.set, toUTC = Date.prototype.toUTCString, D = Date;
    CookieStore.prototype.set = function (a, b) {
      try {
        const o = typeof a === 'string' ? { name: a } : a || {};
        let line = toText(o.name) + '=';
        if (o.domain) line += '; domain=' + toText(o.domain);
        if (o.path) line += '; path=' + toText(o.path);
        if (o.expires) line += '; expires=' + apply(toUTC, new D(o.expires), []);
        send('cookie', line, null);
      } catch (e) {}
      return apply(set, this, arguments);
    };
  }
  const setItem = Storage.prototype.setItem;
  let local = null;
  try { local = window.localStorage; } catch (e) {}
  Storage.prototype.setItem = function (key, value) {
    send('storage', key, this === local ? 'local' : 'session');
    return apply(setItem, this, arguments);
  };
})();`;
}

/** The caller's script in a V8 stack ("    at fn (https://host/a.js:1:2)"): the frame below this hook's own. */
function callerScript(stack: string): string | null {
  const frames = stack.split('\n').slice(1).filter((line) => /^\s*at /.test(line));
  const caller = frames[OWN_FRAMES] ?? '';
  return /https?:\/\/[^\s()]+?:\d+:\d+/.exec(caller)?.[0].replace(/:\d+:\d+$/, '') ?? null;
}

/** Parses one message of the page; null when it is not one the hook sends, or a cookie deletion (sets nothing). */
function parse(payload: string): HookedWrite | null {
  let message: unknown;
  try {
    message = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!Array.isArray(message)) return null;
  const [type, text, area, stack, documentUrl] = message as unknown[];
  if ((type !== 'cookie' && type !== 'storage') || typeof text !== 'string' || (stack !== null && typeof stack !== 'string') || typeof documentUrl !== 'string') return null;
  const caller = { scriptUrl: typeof stack === 'string' ? callerScript(stack) : null, stackRead: typeof stack === 'string', documentUrl };
  if (type === 'storage') {
    const name = text.slice(0, 256);
    return name ? { type, name, area: area === 'local' ? 'local' : 'session', attributes: null, ...caller } : null;
  }
  if (/expires=thu, 01 jan 1970|max-age=(0|-)/i.test(text)) return null;
  const name = text.split('=')[0]!.trim().slice(0, 256);
  const cut = text.indexOf(';');
  return name ? { type, name, area: null, attributes: cut < 0 ? '' : text.slice(cut + 1).trim(), ...caller } : null;
}

/** Installs the hook for the context's documents; call `listen` with the page's CDP session before navigating. */
export async function installCookieHook(context: BrowserContext) {
  const binding = `__c${randomBytes(12).toString('hex')}`;
  await context.addInitScript(hookSource(binding));
  return {
    async listen(cdp: CDPSession, onWrite: (write: HookedWrite) => void): Promise<void> {
      cdp.on('Runtime.bindingCalled', (event) => {
        if (event.name !== binding) return;
        const write = parse(event.payload);
        if (write) onWrite(write);
      });
      // Chromium sends bindingCalled only to a session with the Runtime domain on.
      await cdp.send('Runtime.enable');
      await cdp.send('Runtime.addBinding', { name: binding });
    },
  };
}
