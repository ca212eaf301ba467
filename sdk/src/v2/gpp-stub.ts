// The IAB GPP CMP API (`window.__gpp`) as far as the core goes: a stub installed at script evaluation that
// answers `ping` and queues every other call, so tags that run before the configuration arrives lose nothing.
// In an opt-out jurisdiction, gpp.js (a separate file, loaded only there: src/v2/gpp.ts) takes the queue over
// with the IAB's own library; anywhere else the queued calls fail and `__gpp` goes away (no GPP applies).
import type { GppApi } from './gpp';

type Call = [string?, ((data: unknown, success: boolean) => void)?, ...unknown[]];
type Gpp = (...args: Call) => unknown;
// globalThis, not window: the module is also imported in Node (server rendering), where this does nothing.
const w = globalThis as unknown as { __gpp?: Gpp; ConsentGpp?: GppApi; document?: unknown };

const queue: Call[] = [];
let stub: Gpp | undefined;
let loading: Promise<GppApi | undefined> | undefined;

/** Installs the stub unless the page already has one (an IAB stub works the same way: gpp.js takes it over). */
export function gppStub(): void {
  // Called without arguments, it hands its queue over (the IAB library's way of taking a stub over). Any
  // other command is queued, even the library's "events" question (a stub's listeners): it has none.
  if (w.document) {
    w.__gpp ||= stub = (...args) => {
      if (!args[0]) return queue;
      if (args[0] != 'ping') queue.push(args);
      // The stub's ping, as short as the spec allows: gpp.js answers in full.
      else args[1]?.({ gppVersion: '1.1', cmpStatus: 'stub', cmpDisplayStatus: 'hidden', signalStatus: 'not ready', applicableSections: [-1], sectionList: [] }, true);
    };
  }
}

/** Not an opt-out jurisdiction: queued calls fail and our stub is removed (a page's own stub is left alone). */
export function gppNotApplicable(): void {
  if (w.__gpp == stub) delete w.__gpp;
  for (const [, callback] of queue.splice(0)) callback?.(null, false);
}

/**
 * gpp.js from the service (`ConsentGpp` once evaluated), or the copy the page already has. Resolves undefined
 * when it cannot load (blocked, offline): the SDK then works without GPP.
 */
export function loadGpp(base: string): Promise<GppApi | undefined> {
  return (loading ||= w.ConsentGpp
    ? Promise.resolve(w.ConsentGpp)
    : new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = base + '/sdk/v2/gpp.js';
        s.onload = s.onerror = () => resolve(w.ConsentGpp);
        document.head.append(s);
      }));
}
