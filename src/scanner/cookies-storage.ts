// The cookies and storage collector: every cookie and storage write as it happens, with who made it (the
// cookie hook's script writes, cookie-hook.ts, and Set-Cookie headers the browser kept), the storage keys each
// judged load leaves (the page's own and those of its frames of other origins, as the EDPS collector reads
// them), and the browser's cookie jar at the end of the visit.
import type { Frame, Response } from 'playwright-core';
import { CLOSE_GRACE_MS, settleWithin } from './deadline.js';
import { installCookieHook } from './cookie-hook.js';
import { hostOf, VISIT_CAPS, withoutQuery, type Collector, type VisitSession } from './visit-session.js';
import type { CookieSetter, ObservedStorage, ObservedWrite } from './visit.js';

/**
 * How long a frame of another origin may take to list its storage keys before it is left out: long enough for a
 * loaded machine (a busy renderer answers a one-line evaluation within a second or two), short enough that a frame
 * stuck in a loop costs a visit seconds, not its whole deadline (the frames are asked together).
 */
const FRAME_STORAGE_MS = 3000;
/** An http(s) document's origin; null for about:blank, data: and the like (they have no storage of their own). */
const originOf = (url: string) => (/^https?:\/\//.test(url) ? new URL(url).origin : null);
/** The Domain attribute of a cookie line's attributes (without its leading dot), if any. */
const domainAttribute = (attributes: string) => /(?:^|;)\s*domain=\.?([^;\s]+)/i.exec(attributes)?.[1]?.toLowerCase() ?? null;
const AREAS = ['local', 'session'] as const;
type Area = (typeof AREAS)[number];

/** Storage keys of one document, counted and capped inside it (25,000 keys never leave it). */
const storageOf = (frame: Frame) =>
  frame.evaluate(
    ({ max, chars }) => {
      const keys = (area: () => Storage) => {
        try {
          const store = area();
          const kept: string[] = [];
          // Storage.key walks without a copy.
          for (let i = 0; i < store.length && kept.length < max; i++) kept.push(String(store.key(i)).slice(0, chars));
          return { kept, total: store.length };
        } catch {
          return { kept: [], total: 0 };
        }
      };
      return { local: keys(() => window.localStorage), session: keys(() => window.sessionStorage) };
    },
    { max: VISIT_CAPS.storageKeysPerArea, chars: VISIT_CAPS.nameChars },
  );

/** What a document answered, checked again here (it can replace the builtins the evaluation used). */
function keysOf(storage: Awaited<ReturnType<typeof storageOf>> | null, area: Area) {
  const { kept, total } = storage?.[area] ?? { kept: [], total: 0 };
  const keys = (Array.isArray(kept) ? kept : []).slice(0, VISIT_CAPS.storageKeysPerArea).map((key) => String(key).slice(0, VISIT_CAPS.nameChars));
  return { keys, left: Math.max(0, (Number(total) || 0) - keys.length) };
}

export async function collectCookiesAndStorage(session: VisitSession): Promise<Collector> {
  const { result, context, page, cdp } = session;
  // Cookie name → who set it first (the jar does not say); keyed by name, the jar's domain is not known at write time.
  const setters = new Map<string, CookieSetter>();
  const noteSetter = (name: string, setter: CookieSetter) => name && !setters.has(name) && setters.set(name, setter);
  const recordWrite = (write: Omit<ObservedWrite, 'load' | 'atMs' | 'afterDecision' | 'party'>, moment = session.now()) => {
    if (result.writes.length >= VISIT_CAPS.writes) return;
    const { load, atMs, afterDecision } = moment;
    result.writes.push({ ...write, party: session.partyOf(write.domain), load, atMs, afterDecision });
  };

  // Script writes, through a binding the page cannot call (cookie-hook.ts).
  const writeHook = await session.within(installCookieHook(context));
  await session.within(
    writeHook.listen(cdp, (write) => {
      const documentUrl = withoutQuery(write.documentUrl || page.url());
      const script = write.scriptUrl ? withoutQuery(write.scriptUrl) : null;
      // A caller without a URL, or at the document's own URL, is an inline script; a stack the page kept from
      // the hook names nobody (never a guess).
      const setBy: CookieSetter | null = !write.stackRead ? null : script && script !== documentUrl ? { type: 'script', url: script } : { type: 'script', url: documentUrl, inline: true };
      const frameHost = hostOf(write.documentUrl || page.url());
      if (write.type === 'cookie') {
        if (setBy) noteSetter(write.name, setBy);
        recordWrite({ type: 'cookie', name: write.name, area: null, attributes: write.attributes, domain: domainAttribute(write.attributes ?? '') ?? frameHost, setBy });
      } else {
        recordWrite({ type: 'storage', name: write.name, area: write.area, attributes: null, domain: frameHost, setBy });
      }
    }),
  );

  // Set-Cookie headers: a write when the browser kept the cookie (a Secure cookie over http, say, is refused).
  context.on('response', (response: Response) => {
    const moment = session.now();
    session.track(
      response.headerValues('set-cookie').then(async (values) => {
        const lines = values.flatMap((v) => v.split('\n')).filter((line) => line.includes('='));
        if (!lines.length) return;
        const setBy: CookieSetter = { type: 'response', url: withoutQuery(response.url()) };
        const stored = new Set((await context.cookies(response.url()).catch(() => [])).map((cookie) => cookie.name));
        for (const line of lines) {
          const name = line.split('=')[0]!.trim();
          noteSetter(name, setBy);
          const cut = line.indexOf(';');
          const attributes = cut < 0 ? '' : line.slice(cut + 1).trim();
          if (!stored.has(name) || /max-age=(0|-)|expires=thu, 01 jan 1970/i.test(attributes)) continue;
          recordWrite({ type: 'cookie', name, area: null, attributes, domain: domainAttribute(attributes) ?? hostOf(response.url()), setBy }, moment);
        }
      }),
    );
  });

  // Storage keys seen after the judged loads, per area (capped; `cut.storageKeys` counts what was left out).
  // Frames of other origins have storage of their own (ads, widgets), kept as `${origin} ${key}`, capped in all.
  const pageKeys = { local: new Set<string>(), session: new Set<string>() };
  const frameKeys = { local: new Set<string>(), session: new Set<string>() };
  const notKept = new Map<string, number>();
  const keep = (into: Set<string>, area: Area, key: string) => {
    if (into.has(key)) return;
    if (into.size >= VISIT_CAPS.storageKeysPerArea) notKept.set(`over ${area}`, (notKept.get(`over ${area}`) ?? 0) + 1);
    else into.add(key);
  };
  const readStorage = async () => {
    const storage = await session.within(storageOf(page.mainFrame()));
    for (const area of AREAS) {
      const { keys, left } = keysOf(storage, area);
      notKept.set(`page ${area}`, Math.max(notKept.get(`page ${area}`) ?? 0, left));
      for (const key of keys) keep(pageKeys[area], area, key);
    }
    const pageOrigin = originOf(page.url());
    // One frame per origin, at most storageFrames, asked together: a frame that does not answer within
    // FRAME_STORAGE_MS (busy, or gone) is left out and never holds the visit up.
    const frames = new Map<string, Frame>();
    for (const frame of page.frames()) {
      const origin = originOf(frame.url());
      if (origin && origin !== pageOrigin && !frames.has(origin) && frames.size < VISIT_CAPS.storageFrames) frames.set(origin, frame);
    }
    const answers = await session.within(Promise.all([...frames].map(async ([origin, frame]) => ({ origin, answer: await settleWithin(storageOf(frame), FRAME_STORAGE_MS, null) }))));
    for (const { origin, answer } of answers) {
      for (const area of AREAS) {
        const { keys, left } = keysOf(answer, area);
        notKept.set(`${origin} ${area}`, Math.max(notKept.get(`${origin} ${area}`) ?? 0, left));
        for (const key of keys) keep(frameKeys[area], area, `${origin} ${key}`);
      }
    }
  };

  return {
    afterLoad: readStorage,
    async finish() {
      await settleWithin(session.settle(), CLOSE_GRACE_MS, undefined);
      // Cookies live in the browser process: they answer even while the page's renderer is stuck.
      const cookies = await settleWithin(context.cookies(), CLOSE_GRACE_MS, []);
      result.cut.cookies = Math.max(0, cookies.length - VISIT_CAPS.cookies);
      result.cookies = cookies.slice(0, VISIT_CAPS.cookies).map((cookie) => ({
        name: cookie.name,
        domain: cookie.domain,
        path: cookie.path,
        expires: cookie.expires > 0 ? new Date(cookie.expires * 1000).toISOString() : null,
        session: !(cookie.expires > 0),
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        sameSite: cookie.sameSite,
        party: session.partyOf(cookie.domain),
        setBy: setters.get(cookie.name) ?? null,
      }));
      result.storage = AREAS.flatMap((area) => [
        ...[...pageKeys[area]].map((key): ObservedStorage => ({ area, key })),
        ...[...frameKeys[area]].map((entry): ObservedStorage => {
          const origin = entry.slice(0, entry.indexOf(' '));
          return { area, key: entry.slice(origin.length + 1), origin, party: session.partyOf(new URL(origin).hostname) };
        }),
      ]);
      result.cut.storageKeys = [...notKept.values()].reduce((a, b) => a + b, 0);
    },
  };
}
