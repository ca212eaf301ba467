import { outageMonitor } from '../db/unavailable.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { parseAcProviders, parseTcfFile, storeTcfFile, TcfFileError, type TcfFile } from './vendor-list.js';

// Fetching the IAB's files and Google's AC list (docs/tcf.md, "Fetching"). Only the service fetches them, never a
// browser (the IAB forbids client-side loading). Each file has a row in tcf_fetch_state saying when it is next due:
// its Cache-Control max-age, never sooner than TCF_GVL_MIN_REFRESH_S, as the IAB asks ("cache these resources in
// the same way that a browser would"). An instance fetches a file only while it holds the row's lease, so of
// several instances one fetches at a time; a lease outlives a crashed instance by LEASE_SECONDS at most.

const LEASE_SECONDS = 120;
const FETCH_TIMEOUT_MS = 30_000;
const CHECK_EVERY_MS = 60_000;

interface Resource {
  name: string;
  url: string;
  /** Checks the text; `url` names the file (a translation's language can come from its name). */
  read(text: string, url: string): TcfFile;
}

/**
 * The files the projects need: none until one enables TCF; then the vendor list, the AC list and each language's
 * texts. `enabling`: the locales of a project turning TCF on whose settings are not stored yet.
 */
async function neededResources(services: Services, enabling?: string[]): Promise<Resource[]> {
  const rows = await services.db.query<{ locale: string }>(
    `SELECT DISTINCT locale FROM consent_experiences,
            LATERAL (SELECT settings->>'defaultLocale' AS locale UNION SELECT jsonb_object_keys(coalesce(settings->'translations', '{}'::jsonb))) AS locales
      WHERE settings->'tcf'->>'enabled' = 'true'`,
  );
  const locales = [...rows.map((row) => row.locale), ...(enabling ?? [])];
  if (!rows.length && !enabling) return [];
  const { gvlUrl, acProvidersUrl } = services.config.tcf;
  // English is the vendor list's own language; the IAB names translation files by ISO 639-1 language.
  const languages = [...new Set(locales.map((locale) => locale?.split('-')[0]?.toLowerCase()).filter((lang): lang is string => !!lang && lang !== 'en'))].sort();
  return [
    { name: 'vendor-list', url: new URL('vendor-list.json', gvlUrl).href, read: parseTcfFile },
    { name: 'ac-providers', url: acProvidersUrl, read: (text) => ({ kind: 'ac-providers', providers: parseAcProviders(text) }) },
    ...languages.map((language) => ({ name: `purposes-${language}`, url: new URL(`purposes-${language}.json`, gvlUrl).href, read: parseTcfFile })),
  ];
}

/** Seconds a response may be kept: its Cache-Control max-age (s-maxage is for shared caches, not us); 0 without one. */
export function maxAgeOf(cacheControl: string | null): number {
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? '');
  return match ? Number(match[1]) : 0;
}

/** Takes the file's lease when it is due and nobody holds it; false otherwise. */
async function claim(services: Services, resource: string): Promise<boolean> {
  // A new file is due at once: '-infinity', not the column's default now(), which a timestamptz(3) rounds up to the
  // next millisecond half the time, so the claim below, in the same millisecond, found it not yet due and nothing
  // was fetched (enabling TCF then answered "no list held"; PostgreSQL only, where the two statements are that fast).
  await services.db.query(`INSERT INTO tcf_fetch_state (resource, next_fetch_at) VALUES ($1, '-infinity') ON CONFLICT (resource) DO NOTHING`, [resource]);
  const rows = await services.db.query(
    `UPDATE tcf_fetch_state SET lease_until = now() + make_interval(secs => $2)
      WHERE resource = $1 AND next_fetch_at <= now() AND (lease_until IS NULL OR lease_until < now())
      RETURNING resource`,
    [resource, LEASE_SECONDS],
  );
  return rows.length > 0;
}

/** A file's URL as messages name it: no user, password or query string. */
export function shownUrl(url: string): string {
  const shown = new URL(url);
  shown.username = shown.password = shown.search = '';
  return shown.href;
}

async function fetchOne(services: Services, resource: Resource): Promise<void> {
  const min = services.config.tcf.minRefreshSeconds;
  let keepFor = min;
  let error: string | null = null;
  try {
    // fetch asks for gzip/br and decodes it, as the IAB requires of server-side clients.
    const response = await fetch(resource.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json, text/csv' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const stored = await storeTcfFile(services.db, resource.read(await response.text(), resource.url));
    keepFor = Math.max(maxAgeOf(response.headers.get('cache-control')), min);
    services.logger.info({ resource: resource.name, stored, nextInSeconds: keepFor }, 'TCF file fetched');
  } catch (caught) {
    // Kept as the file's last_error, which the console's TCF checklist shows (to members of any project) until a
    // fetch succeeds: so the URL without credentials or query, in case an operator's mirror carries a token there.
    error = `${shownUrl(resource.url)}: ${(caught as Error).message}`;
    const refused = caught instanceof TcfFileError ? 'refused' : 'failed';
    services.logger.warn({ resource: resource.name, err: caught }, `TCF file ${refused}: ${error}; trying again after TCF_GVL_MIN_REFRESH_S`);
  }
  await services.db.query(
    `UPDATE tcf_fetch_state SET lease_until = NULL, next_fetch_at = now() + make_interval(secs => $2),
            fetched_at = CASE WHEN $3::text IS NULL THEN now() ELSE fetched_at END, last_error = $3
      WHERE resource = $1`,
    [resource.name, keepFor, error],
  );
}

/**
 * Fetches every needed file that is due and not being fetched elsewhere. Safe to call at any time from any
 * instance: at start, on the worker's timer, and when a project first enables TCF.
 */
export async function refreshTcfFiles(services: Services, options: { enablingLocales?: string[] } = {}): Promise<void> {
  for (const resource of await neededResources(services, options.enablingLocales)) {
    if (await claim(services, resource.name)) await fetchOne(services, resource);
  }
}

/** The refresh worker: at start-up (only projects with TCF enabled make it fetch anything), then every minute. */
export function tcfRefreshWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  const run = () => {
    running ??= refreshTcfFiles(services)
      .catch((error) => outageMonitor(services).report(error) || services.logger.error({ err: error }, 'TCF refresh failed'))
      .finally(() => (running = undefined));
  };
  run();
  const timer = setInterval(run, Math.min(CHECK_EVERY_MS, services.config.tcf.minRefreshSeconds * 1000));
  timer.unref();
  return {
    name: 'tcf-refresh',
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
