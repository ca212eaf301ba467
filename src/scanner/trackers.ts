// Requests a maintained tracker list names: EasyPrivacy (GPL-3.0+ or CC BY-SA 3.0+, catalogue/easyprivacy.txt with
// its licence and EASYPRIVACY.json; `node scripts/refresh-easyprivacy.mjs` refreshes it), matched by Ghostery's
// adblocker engine (MPL-2.0), which reads filter-list syntax as browsers' blockers do (options such as
// `$third-party`, `$image`, `domain=`). A request is matched with its full URL while the visit sees it, so rules
// on query strings (`&ev=PageView&`) apply although reports keep URLs without their query.
import { readFileSync } from 'node:fs';
import { FiltersEngine, Request, type RequestType } from '@ghostery/adblocker';

export interface TrackerListInfo {
  source: string;
  licence: string;
  date: string;
  sha256: string;
}

export interface TrackerList {
  readonly snapshot: TrackerListInfo;
  /** The list's rule that names this request as tracking, as written in the list; null when none does. */
  match(url: string, pageUrl: string, resourceType: string): string | null;
}

const CATALOGUE_DIR = new URL('./catalogue/', import.meta.url);

let loaded: TrackerList | undefined;

/** Parsed once per process (about half a second of CPU), before a scan's first visit rather than inside one. */
export function loadTrackerList(): TrackerList {
  if (loaded) return loaded;
  const snapshot = JSON.parse(readFileSync(new URL('EASYPRIVACY.json', CATALOGUE_DIR), 'utf8')) as TrackerListInfo;
  const engine = FiltersEngine.parse(readFileSync(new URL('easyprivacy.txt', CATALOGUE_DIR), 'utf8'), {
    loadCosmeticFilters: false,
    // Keep each rule as the list writes it (debug) and unmerged (no optimizations), so a finding quotes its rule.
    debug: true,
    enableOptimizations: false,
  });
  loaded = {
    snapshot,
    match(url, pageUrl, resourceType) {
      const result = engine.match(Request.fromRawDetails({ url, sourceUrl: pageUrl, type: resourceType as RequestType }));
      return result.match ? (result.filter?.rawLine ?? result.filter?.toString() ?? null) : null;
    },
  };
  return loaded;
}
