import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** The fixture files (test/fixtures/tcf/README.md): a small schema-valid GVL in two versions, French texts, AC list. */
export const TCF_FIXTURE_DIR = new URL('../fixtures/tcf/', import.meta.url);
export const readTcfFixture = (name: string): string => readFileSync(new URL(name, TCF_FIXTURE_DIR), 'utf8');
export const gvlFixture = (version: 1 | 2): any => JSON.parse(readTcfFixture(`vendor-list-v${version}.json`));

export interface GvlServer {
  /** TCF_GVL_URL: the base holding vendor-list.json, archives/ and purposes-<lang>.json, as the IAB's v3/. */
  gvlUrl: string;
  /** TCF_AC_PROVIDERS_URL. */
  acProvidersUrl: string;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Which version vendor-list.json answers from now on. */
  publish(version: 1 | 2): void;
  /** What the AC list's URL answers from now on (another file, as a misconfigured URL would); null: the fixture. */
  serveAcList(text: string | null): void;
  /** The Cache-Control max-age the files are served with (seconds). */
  maxAge(seconds: number): void;
  close(): Promise<void>;
}

/**
 * The IAB's vendor-list host and Google's AC list on 127.0.0.1, serving test/fixtures/tcf/ gzip-compressed when
 * asked (the IAB asks clients to request compression) with a Cache-Control max-age, so no test reaches the internet.
 */
export async function startGvlServer(options: { version?: 1 | 2; maxAgeSeconds?: number } = {}): Promise<GvlServer> {
  let current = options.version ?? 1;
  let maxAge = options.maxAgeSeconds ?? 604800;
  const requests: string[] = [];
  let acList: string | null = null;
  const files = (path: string): string | undefined => {
    if (path === '/v3/vendor-list.json') return readTcfFixture(`vendor-list-v${current}.json`);
    const archive = /^\/v3\/archives\/vendor-list-v(\d+)\.json$/.exec(path);
    if (archive && ['1', '2'].includes(archive[1]!)) return readTcfFixture(`vendor-list-v${archive[1]}.json`);
    if (path === '/v3/purposes-fr.json') return readTcfFixture('purposes-fr.json');
    if (path === '/ac/additional-consent-providers.csv') return acList ?? readTcfFixture('additional-consent-providers.csv');
    return undefined;
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    const body = files(path);
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const type = path.endsWith('.csv') ? 'text/csv; charset=utf-8' : 'application/json';
    const headers: Record<string, string> = { 'content-type': type, 'cache-control': `max-age=${maxAge}` };
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' }).end(gzipSync(body));
    } else res.writeHead(200, headers).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    gvlUrl: `${base}/v3/`,
    acProvidersUrl: `${base}/ac/additional-consent-providers.csv`,
    requests,
    publish: (version) => void (current = version),
    serveAcList: (text) => void (acList = text),
    maxAge: (seconds) => void (maxAge = seconds),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
