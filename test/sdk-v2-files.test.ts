// /sdk/v2/consent.js and .mjs: served precompressed (brotli, gzip) by Accept-Encoding, with an ETag per
// representation; v1's files stay as they were.
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickEncoding } from '../rest/routes/sdk-v2-files.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** Raw bytes as sent (Node's fetch would decompress them and set its own Accept-Encoding). */
function raw(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(new URL(path, server.url), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('SDK v2 files', () => {
  for (const [name, marker] of [
    ['consent.js', 'ConsentSDK'],
    ['consent.mjs', 'export'],
  ] as const) {
    it(`/sdk/v2/${name}: brotli, gzip or plain by Accept-Encoding, each revalidating with its own ETag`, async () => {
      const source = readFileSync(new URL(`../sdk/dist/v2/${name}`, import.meta.url));
      expect(source.toString()).toContain(marker);
      const br = await raw(`/sdk/v2/${name}`, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.status).toBe(200);
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toBe('Accept-Encoding');
      expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(br.headers['access-control-allow-origin']).toBe('*');
      expect(brotliDecompressSync(br.body)).toEqual(source);
      const gz = await raw(`/sdk/v2/${name}`, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body)).toEqual(source);
      const plain = await raw(`/sdk/v2/${name}`);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body).toEqual(source);
      expect(new Set([br.headers.etag, gz.headers.etag, plain.headers.etag]).size).toBe(3);
      const again = await raw(`/sdk/v2/${name}`, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string });
      expect(again.status).toBe(304);
      // A gzip-only client revalidating the brotli ETag gets the gzip body, not a 304.
      expect((await raw(`/sdk/v2/${name}`, { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag as string })).status).toBe(200);
    });
  }

  it('leaves v1 alone: same bytes as sdk/dist, never compressed', async () => {
    const res = await raw('/sdk/v1/consent.js', { 'accept-encoding': 'br, gzip' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body).toEqual(readFileSync(new URL('../sdk/dist/consent.js', import.meta.url)));
    expect(res.body.toString()).toMatch(/^\/\*! @consent\/sdk 1\.0\.0 \*\//);
  });

  it('reads q-values: q=0 refuses an encoding', () => {
    expect(pickEncoding('br;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('gzip;q=0.0')).toBe('identity');
    expect(pickEncoding('deflate, gzip;q=0.5')).toBe('gzip');
    expect(pickEncoding('BR')).toBe('br');
    expect(pickEncoding('')).toBe('identity');
  });
});
