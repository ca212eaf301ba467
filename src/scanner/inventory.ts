// Everything a scan saw, once each and classified: every cookie, storage key and third-party host, with its
// category, vendor, description, party, lifetime, and every visit and page in which it was written, sent or seen,
// also when it was removed again before the visit ended (docs/scanner.md, "Inventory"). Findings say what is wrong; the inventory says what is there, also what was correctly held back
// until Accept all, and it is what the cookie declaration is built from (src/scanner/declaration.ts).
//
// A pure function over the report's observations, so fields a visit learns to record later slot in here.
import type { Catalogue, Category, Classification } from './catalogue.js';
import { pageOfLoad, type ScannedPage } from './findings.js';
import type { VisitKind } from './visit.js';

export type InventoryKind = 'cookie' | 'storage' | 'host';

export interface Lifetime {
  /** `session`: gone when the browser closes; `expires`: a cookie's longest expiry seen; `persistent`: localStorage. */
  kind: 'session' | 'expires' | 'persistent';
  /** For `expires`: seconds from the scan's start to the latest expiry seen. */
  seconds: number | null;
}

export interface InventoryItem {
  kind: InventoryKind;
  /** The cookie name, storage key (`local:` or `session:` is in `areas`), or host. */
  name: string;
  category: Category;
  vendor: string | null;
  description: string | null;
  /** The catalogue pattern or domain that matched, and its source; null when unknown. */
  matched: string | null;
  source: Classification['source'];
  /** first, third, or both when the same name was seen as both (cookies on several domains). */
  party: 'first' | 'third' | 'both';
  lifetime: Lifetime | null;
  /** Cookie domains, storage areas (`localStorage`, `sessionStorage`) or request resource types. */
  where: string[];
  /** Who set it or asked for it: setter URLs (cookies), initiators (hosts). */
  setBy: string[];
  visits: VisitKind[];
  pages: string[];
}

export interface InventoryContext {
  catalogue: Catalogue;
  /** When the scan started: cookie lifetimes are measured from here. */
  startedAt: Date;
}

const KIND_ORDER: InventoryKind[] = ['cookie', 'storage', 'host'];
const VISIT_ORDER: VisitKind[] = ['before', 'reject', 'accept'];
const MAX_LISTED = 20;

interface Draft {
  item: InventoryItem;
  parties: Set<'first' | 'third'>;
  where: Set<string>;
  setBy: Set<string>;
  visits: Set<VisitKind>;
  pages: Set<string>;
}

export function inventoryOf(pages: ScannedPage[], context: InventoryContext): InventoryItem[] {
  const drafts = new Map<string, Draft>();
  const draftOf = (kind: InventoryKind, name: string, classification: Classification): Draft => {
    const key = `${kind} ${name}`;
    let draft = drafts.get(key);
    if (!draft) {
      const { category, vendor, description, matched, source } = classification;
      draft = {
        item: { kind, name, category, vendor, description, matched, source, party: 'first', lifetime: null, where: [], setBy: [], visits: [], pages: [] },
        parties: new Set(),
        where: new Set(),
        setBy: new Set(),
        visits: new Set(),
        pages: new Set(),
      };
      drafts.set(key, draft);
    }
    return draft;
  };
  const seenIn = (draft: Draft, page: string, visit: VisitKind) => {
    draft.pages.add(page);
    draft.visits.add(visit);
  };
  for (const page of pages) {
    for (const visit of page.visits) {
      // Where each cookie and key was written in this visit: held at the end, it was seen on that page. What the
      // browser holds says best where and how long; a write alone (removed before the end) says it for itself.
      const writtenOn = new Map<string, string>();
      const held = new Set([...visit.cookies.map((c) => `cookie ${c.name}`), ...visit.storage.map((s) => `storage ${s.key}`)]);
      for (const write of visit.writes) {
        const where = pageOfLoad(visit, write.load);
        writtenOn.set(`${write.type} ${write.name}`, where);
        const draft = draftOf(write.type, write.name, context.catalogue.name(write.name));
        seenIn(draft, where, visit.kind);
        if (write.setBy) draft.setBy.add(write.setBy.url);
        if (held.has(`${write.type} ${write.name}`)) continue;
        draft.parties.add(write.party);
        if (write.type === 'cookie') {
          draft.where.add(write.domain);
          draft.item.lifetime = longer(draft.item.lifetime, writtenLifetime(write.attributes ?? '', context.startedAt));
        } else {
          draft.where.add(`${write.area}Storage`);
          draft.item.lifetime = longer(draft.item.lifetime, { kind: write.area === 'local' ? 'persistent' : 'session', seconds: null });
        }
      }
      for (const cookie of visit.cookies) {
        const draft = draftOf('cookie', cookie.name, context.catalogue.name(cookie.name));
        seenIn(draft, writtenOn.get(`cookie ${cookie.name}`) ?? page.url, visit.kind);
        draft.parties.add(cookie.party);
        draft.where.add(cookie.domain);
        if (cookie.setBy) draft.setBy.add(cookie.setBy.url);
        draft.item.lifetime = longer(draft.item.lifetime, cookieLifetime(cookie.expires, context.startedAt));
      }
      for (const storage of visit.storage) {
        const draft = draftOf('storage', storage.key, context.catalogue.name(storage.key));
        seenIn(draft, writtenOn.get(`storage ${storage.key}`) ?? page.url, visit.kind);
        draft.parties.add(storage.party ?? 'first');
        // A frame's storage names its origin: `localStorage (https://ads.example)`.
        draft.where.add(storage.origin ? `${storage.area}Storage (${storage.origin})` : `${storage.area}Storage`);
        draft.item.lifetime = longer(draft.item.lifetime, { kind: storage.area === 'local' ? 'persistent' : 'session', seconds: null });
      }
      for (const request of visit.requests) {
        const draft = draftOf('host', request.host, context.catalogue.request(request));
        // A host first seen with requests no list names is still classified by the first one that is.
        if (draft.item.category === 'unknown' && request.tracker) Object.assign(draft.item, pickClassification(context.catalogue.request(request)));
        seenIn(draft, pageOfLoad(visit, request.load), visit.kind);
        draft.parties.add('third');
        draft.where.add(request.resourceType);
        if (request.initiator) draft.setBy.add(request.initiator);
      }
    }
  }
  const items = [...drafts.values()].map(({ item, parties, where, setBy, visits, pages: seenOn }) => ({
    ...item,
    party: parties.size > 1 ? ('both' as const) : [...parties][0]!,
    where: [...where].sort().slice(0, MAX_LISTED),
    setBy: [...setBy].sort().slice(0, MAX_LISTED),
    visits: VISIT_ORDER.filter((kind) => visits.has(kind)),
    pages: [...seenOn],
  }));
  return items.sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const pickClassification = ({ category, vendor, description, matched, source }: Classification) => ({ category, vendor, description, matched, source });

/** A cookie's lifetime from the attributes it was written with: Max-Age wins over Expires (as in browsers); neither, a session cookie. */
function writtenLifetime(attributes: string, startedAt: Date): Lifetime {
  const maxAge = /(?:^|;)\s*max-age=(\d+)/i.exec(attributes)?.[1];
  if (maxAge) return { kind: 'expires', seconds: Number(maxAge) };
  const expires = Date.parse(/(?:^|;)\s*expires=([^;]+)/i.exec(attributes)?.[1] ?? '');
  if (Number.isFinite(expires)) return { kind: 'expires', seconds: Math.max(0, Math.round((expires - startedAt.getTime()) / 1000)) };
  return { kind: 'session', seconds: null };
}

function cookieLifetime(expires: string | null, startedAt: Date): Lifetime {
  if (!expires) return { kind: 'session', seconds: null };
  return { kind: 'expires', seconds: Math.max(0, Math.round((Date.parse(expires) - startedAt.getTime()) / 1000)) };
}

/** The longer of two lifetimes: an expiry outlives a session, a later expiry an earlier one, persistent storage everything. */
function longer(a: Lifetime | null, b: Lifetime): Lifetime {
  if (!a) return b;
  const rank = (lifetime: Lifetime) => ({ session: 0, expires: 1, persistent: 2 })[lifetime.kind];
  if (rank(a) !== rank(b)) return rank(a) > rank(b) ? a : b;
  return (b.seconds ?? 0) > (a.seconds ?? 0) ? b : a;
}

/** "session", "2 years", "30 days", "5 hours", "persistent": for people (the HTML report, the declaration). */
export function describeLifetime(lifetime: Lifetime | null): string {
  if (!lifetime) return '';
  if (lifetime.kind === 'session') return 'session';
  if (lifetime.kind === 'persistent') return 'persistent';
  const seconds = lifetime.seconds ?? 0;
  const units: [number, string][] = [
    [365 * 86_400, 'year'],
    [30 * 86_400, 'month'],
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    const count = Math.round(seconds / size);
    if (count >= 1 && seconds >= size * 0.95) return `${count} ${unit}${count === 1 ? '' : 's'}`;
  }
  return `${seconds} seconds`;
}
