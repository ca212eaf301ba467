// Classification of what a scan saw: cookie and storage names, and the hosts requests went to.
// Source: a snapshot of the Open Cookie Database (Apache-2.0, catalogue/open-cookie-database.csv with its
// licence and catalogue/SNAPSHOT.json; `node scripts/refresh-cookie-database.mjs` refreshes it), with the
// service's own entries on top (catalogue/service-entries.ts). What matches nothing is `unknown`: never guessed.
//
// Matching needs no library: every pattern is an exact name or a prefix (the database's "wildcard match"
// column means "this name followed by anything", e.g. `_ga_` for `_ga_ABC123`; the experience's `cookies`
// lists end a prefix with `*`). Exact names are a Map lookup, prefixes are tried longest first.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { getDomain } from 'tldts';
import { SERVICE_ENTRIES, SERVICE_HOSTS, SERVICE_VENDOR } from './catalogue/service-entries.js';
import type { ObservedRequest } from './visit.js';

export const CATEGORIES = ['necessary', 'functional', 'analytics', 'marketing', 'unknown'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface CatalogueEntry {
  /** An exact name, or a prefix ending in `*`. */
  pattern: string;
  category: Category;
  vendor: string;
  description: string;
  source: 'open-cookie-database' | 'service';
}

export interface HostEntry {
  domain: string;
  category: Category;
  vendor: string;
  description: string;
  source: 'open-cookie-database' | 'service';
}

export interface Classification {
  category: Category;
  vendor: string | null;
  description: string | null;
  /** The catalogue pattern or domain that matched, or the tracker list's rule; null for unknown. */
  matched: string | null;
  source: CatalogueEntry['source'] | 'easyprivacy' | null;
}

const UNKNOWN: Classification = { category: 'unknown', vendor: null, description: null, matched: null, source: null };

/**
 * The database's categories in ours. Its "Functional" is "also known as technical, essential or strictly
 * necessary" (its README), so it stays `functional` (the scanner does not flag it) rather than being promoted
 * to `necessary`; "Personalization" is functional; "Security" is necessary.
 */
const FROM_DATABASE: Record<string, Category> = {
  Necessary: 'necessary',
  Security: 'necessary',
  Functional: 'functional',
  Personalization: 'functional',
  Analytics: 'analytics',
  Marketing: 'marketing',
};

const CATALOGUE_DIR = new URL('./catalogue/', import.meta.url);

export interface SnapshotInfo {
  source: string;
  licence: string;
  commit: string;
  date: string;
  entries: number;
}

export class Catalogue {
  private readonly exact = new Map<string, CatalogueEntry>();
  private readonly prefixes: CatalogueEntry[] = [];
  private readonly hosts = new Map<string, HostEntry>();

  constructor(
    entries: CatalogueEntry[],
    hosts: HostEntry[],
    readonly snapshot: SnapshotInfo,
  ) {
    // Later entries win: the service's own come last.
    for (const entry of entries) {
      if (entry.pattern.endsWith('*')) this.prefixes.push({ ...entry, pattern: entry.pattern.slice(0, -1) });
      else this.exact.set(entry.pattern, entry);
    }
    this.prefixes.reverse().sort((a, b) => b.pattern.length - a.pattern.length);
    for (const host of hosts) this.hosts.set(host.domain, host);
  }

  /** A cookie or storage key by name: exact first, then the longest prefix. */
  name(name: string): Classification {
    const entry = this.exact.get(name) ?? this.prefixes.find((prefix) => name.startsWith(prefix.pattern));
    if (!entry) return UNKNOWN;
    const matched = this.exact.get(name) === entry ? entry.pattern : `${entry.pattern}*`;
    return { category: entry.category, vendor: entry.vendor, description: entry.description, matched, source: entry.source };
  }

  /** A request host: the host itself or its nearest listed parent domain. */
  host(host: string): Classification {
    const labels = host.toLowerCase().split('.');
    for (let i = 0; i < labels.length; i++) {
      const entry = this.hosts.get(labels.slice(i).join('.'));
      if (entry) return { category: entry.category, vendor: entry.vendor, description: entry.description, matched: entry.domain, source: entry.source };
    }
    return UNKNOWN;
  }

  /**
   * A request to another site: its host as the catalogue knows it; a host it does not know, when EasyPrivacy named
   * the request as tracking (trackers.ts, matched as the visit saw it), is `analytics`. The list says "tracking"
   * without telling measurement from advertising, and either needs consent; analytics is the lesser claim.
   */
  request(request: Pick<ObservedRequest, 'host' | 'tracker'>): Classification {
    const known = this.host(request.host);
    if (known.category !== 'unknown' || !request.tracker) return known;
    return { category: 'analytics', vendor: null, description: 'Listed as tracking by EasyPrivacy', matched: request.tracker, source: 'easyprivacy' };
  }

  /** The service's own origin (the SDK and its API): necessary, named as ours. */
  static serviceHost(origin: string): HostEntry {
    return { domain: new URL(origin).hostname, category: 'necessary', vendor: SERVICE_VENDOR, description: 'The consent SDK and its API', source: 'service' };
  }
}

interface DatabaseRow {
  Platform: string;
  Category: string;
  'Cookie / Data Key name': string;
  Domain: string;
  Description: string;
  'Data Controller': string;
  'Wildcard match': string;
}

let loaded: { entries: CatalogueEntry[]; hosts: HostEntry[]; snapshot: SnapshotInfo } | undefined;

/** Reads the shipped snapshot once per process. */
function loadDatabase() {
  if (loaded) return loaded;
  const rows: DatabaseRow[] = parse(readFileSync(new URL('open-cookie-database.csv', CATALOGUE_DIR)), { columns: true, skip_empty_lines: true });
  const snapshot = JSON.parse(readFileSync(new URL('SNAPSHOT.json', CATALOGUE_DIR), 'utf8')) as SnapshotInfo;
  const entries: CatalogueEntry[] = [];
  const domainCategories = new Map<string, Set<Category>>();
  const domainEntry = new Map<string, HostEntry>();
  for (const row of rows) {
    const category = FROM_DATABASE[row.Category];
    const name = row['Cookie / Data Key name'].trim();
    if (!category || !name) continue;
    const vendor = row['Data Controller'].trim() || row.Platform.trim();
    const description = row.Description.trim();
    entries.push({ pattern: row['Wildcard match'] === '1' ? `${name}*` : name, category, vendor, description, source: 'open-cookie-database' });
    // "doubleclick.net (3rd party)", ".bing.com (3rd party) or .microsoft.com (3rd party)"
    for (const raw of row.Domain.split(/,| or /)) {
      const domain = raw.replace('(3rd party)', '').trim().replace(/^\./, '').toLowerCase();
      if (!domain || /\s/.test(domain)) continue;
      domainCategories.set(domain, (domainCategories.get(domain) ?? new Set()).add(category));
      domainEntry.set(domain, { domain, category, vendor: row.Platform.trim() || vendor, description: `Sets ${row.Platform.trim()} cookies`, source: 'open-cookie-database' });
    }
  }
  // A domain whose cookies fall in more than one category says nothing certain about its requests: left out.
  const hosts = [...domainEntry.values()].filter((entry) => domainCategories.get(entry.domain)!.size === 1);
  loaded = { entries, hosts, snapshot: { ...snapshot, entries: entries.length } };
  return loaded;
}

/** The catalogue: the database snapshot, then the service's entries, then the service's own origin. */
export function loadCatalogue(serviceOrigin: string): Catalogue {
  const database = loadDatabase();
  return new Catalogue([...database.entries, ...SERVICE_ENTRIES], [...database.hosts, ...SERVICE_HOSTS, Catalogue.serviceHost(serviceOrigin)], database.snapshot);
}

/** The site a host belongs to (registrable domain, by the Public Suffix List); an IP address or `localhost` is its own site. */
export function siteOf(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1').replace(/^\./, '').toLowerCase();
  return getDomain(bare, { allowPrivateDomains: true }) ?? bare;
}
