// The operator console served at /console/ (issue 15, docs/console.md): the build's files with their brotli
// and gzip copies chosen by Accept-Encoding (Vary), hashed assets cached for a year, index.html revalidated,
// deep links answered with the app, a strict CSP without 'unsafe-inline' and no framing. Real server, raw
// node:http requests (fetch would decode the body before the test could see it).
import { readFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function raw(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = (method === 'GET' ? get : request)(new URL(path, server.url), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    if (method !== 'GET') req.end();
  });
}

const decoded = (res: RawResponse) =>
  res.headers['content-encoding'] === 'br' ? brotliDecompressSync(res.body) : res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body) : res.body;

const builtIndex = readFileSync(new URL('../console/dist/index.html', import.meta.url));
/** The hashed script and stylesheet index.html loads. */
const entryAssets = [...builtIndex.toString().matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]!);

describe('the console at /console/', () => {
  it('index.html: no-cache, a CSP without unsafe-inline or other hosts, frame-ancestors none, X-Frame-Options DENY', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await raw(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body.equals(builtIndex), path).toBe(true);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toMatch(/https?:|\*/); // no other host, no wildcard
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('index.html loads only same-origin hashed files, and no inline script', () => {
    const html = builtIndex.toString();
    expect(entryAssets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(entryAssets.some((a) => a.endsWith('.css'))).toBe(true);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/); // every <script> has a src
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('the initial load (index.html’s scripts and modulepreloads) is within 250 KB of gzipped JS (issue 15; bench/console-load.ts)', () => {
    const scripts = entryAssets.filter((a) => a.endsWith('.js'));
    const gzipped = scripts.reduce((total, asset) => total + readFileSync(new URL(`../console/dist/${asset}.gz`, import.meta.url)).length, 0);
    expect(gzipped).toBeLessThanOrEqual(250 * 1024);
    // A production build: React's development build alone would be most of the budget.
    const entry = readFileSync(new URL(`../console/dist/${scripts[0]}`, import.meta.url), 'utf8');
    expect(entry).not.toContain('for a better development experience'); // React DevTools' hint, development builds only
  });

  it('assets: brotli, gzip or the plain bytes by Accept-Encoding, Vary, an ETag per coding, immutable for a year', async () => {
    for (const asset of entryAssets) {
      const path = `/console/${asset}`;
      const br = await raw(path, { 'accept-encoding': 'gzip, deflate, br' });
      const gzip = await raw(path, { 'accept-encoding': 'gzip' });
      const plain = await raw(path);
      expect([br.headers['content-encoding'], gzip.headers['content-encoding'], plain.headers['content-encoding']]).toEqual(['br', 'gzip', undefined]);
      const built = readFileSync(new URL(`../console/dist/${asset}`, import.meta.url));
      for (const res of [br, gzip, plain]) {
        expect(res.status).toBe(200);
        expect(res.headers.vary).toBe('Accept-Encoding');
        expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(res.headers['content-length']).toBe(String(res.body.length));
        expect(res.headers['content-type']).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : asset.endsWith('.svg') ? /^image\/svg\+xml$/ : /^text\/css/);
        expect(decoded(res).equals(built), `${path} ${res.headers['content-encoding']}`).toBe(true); // toEqual walks 200 KB byte by byte
      }
      expect(br.body.length).toBeLessThan(gzip.body.length);
      expect(new Set([br.headers.etag, gzip.headers.etag, plain.headers.etag]).size).toBe(3);
      const again = await raw(path, { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
  });

  it('index.html is served compressed too, and revalidates with its ETag', async () => {
    const br = await raw('/console/', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(decoded(br).equals(builtIndex)).toBe(true);
    expect((await raw('/console/', { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) })).status).toBe(304);
  });

  it('index.html names its icon, a hashed asset served like the others: no /favicon.ico asked for, no 404 on a first visit', async () => {
    const icon = /<link rel="icon" type="image\/svg\+xml" href="\/console\/(assets\/favicon-[^"]+\.svg)">/.exec(builtIndex.toString())?.[1];
    expect(icon).toBeDefined();
    const res = await raw(`/console/${icon}`, { 'accept-encoding': 'br' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml');
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(decoded(res).toString()).toMatch(/^<svg /);
  });

  it('a deep link is the app (index.html with its CSP); a missing file is 404, not the app', async () => {
    for (const path of ['/console/sign-in', '/console/orgs/o1/projects/p1/consent', '/console/orgs/o1/projects/p1/receipts/']) {
      const res = await raw(path);
      expect(res.status, path).toBe(200);
      expect(res.body.equals(builtIndex), path).toBe(true);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    }
    for (const path of ['/console/assets/missing-0000.js', '/console/favicon.ico', '/console/orgs/x.json']) {
      const res = await raw(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'not_found' });
    }
  });

  it('HEAD answers the headers without a body; other methods are 405', async () => {
    const head = await raw('/console/orgs/x', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const post = await raw('/console/orgs/x', {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toContain('GET');
  });
});
