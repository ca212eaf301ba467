// The IAB GPP CMP API (`window.__gpp`) as far as the core goes: a stub installed at script evaluation that
// answers `ping` and `addEventListener` (and its removal) at once, as the GPP spec requires of stubs too, and
// queues every other call, so tags that run before the configuration arrives lose nothing. In an opt-out
// jurisdiction, gpp.js (a separate file, loaded only there: src/v2/gpp.ts) takes the queue and the listeners
// over with the IAB's own library (@iabgpp/cmpapi adopts a stub's listeners through `__gpp('events')`);
// anywhere else the queued calls fail and `__gpp` goes away (no GPP applies).
import type { GppApi } from './gpp';

type Callback = (data: unknown, success: boolean) => void;
type Call = [string?, Callback?, ...unknown[]];
type Gpp = (...args: Call) => unknown;
// globalThis, not window: the module is also imported in Node (server rendering), where this does nothing.
const w = globalThis as unknown as { __gpp?: Gpp; ConsentGpp?: GppApi; document?: unknown };

const queue: Call[] = [];
/** The stub's listeners, in the shape the IAB library adopts: `{ id, callback, parameter }`. */
const events: { id: number; callback: Callback; parameter: unknown }[] = [];
let lastId = 0;
let stub: Gpp | undefined;
let loading: Promise<GppApi | undefined> | undefined;

/** Installs the stub unless the page already has one (an IAB stub works the same way: gpp.js takes it over). */
export function gppStub(): void {
  // Called without arguments, it hands its queue over, and with "events" its listeners (the IAB library's
  // way of taking a stub over).
  if (w.document) {
    w.__gpp ||= stub = (...args) => {
      const [command, callback, parameter] = args;
      if (!command) return queue;
      if (command == 'events') return events;
      // The stub's ping, as short as the spec allows: gpp.js answers in full.
      const pingData = { gppVersion: '1.1', cmpStatus: 'stub', cmpDisplayStatus: 'hidden', signalStatus: 'not ready', applicableSections: [-1], sectionList: [] };
      if (command == 'ping') callback?.(pingData, true);
      else if (command == 'addEventListener' && callback) {
        events.push({ id: ++lastId, callback, parameter });
        callback({ eventName: 'listenerRegistered', listenerId: lastId, data: true, pingData }, true);
      } else if (command == 'removeEventListener') {
        const i = events.findIndex((e) => e.id === parameter);
        callback?.({ eventName: 'listenerRemoved', listenerId: parameter, data: i >= 0 && !!events.splice(i, 1), pingData }, true);
      } else queue.push(args);
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
/** A file of the SDK beside the core (gpp.js, integrations.js) by the global it defines; undefined when it cannot load. */
export function loadFile<T>(base: string, name: string, global: string): Promise<T | undefined> {
  const g = w as unknown as Record<string, T>;
  return g[global] ? Promise.resolve(g[global]) : new Promise((resolve) => addScript(base, name, () => resolve(g[global])));
}

export const loadGpp = (base: string): Promise<GppApi | undefined> => (loading ||= loadFile(base, 'gpp.js', 'ConsentGpp'));

/** A script of the SDK's own from the service, loaded on demand (gpp.js, declaration.js); `done` after it ran or failed. */
export function addScript(base: string, name: string, done?: () => void): void {
  const s = document.createElement('script');
  s.src = base + '/sdk/v2/' + name;
  s.onload = s.onerror = done!;
  document.head.append(s);
}
