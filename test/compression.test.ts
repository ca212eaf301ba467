// Content-coding (issue 19, part 4): the SDK files (v1 and v2) precompressed, the SDK config (v1 and v2)
// compressed once per version, other JSON over 1 KB compressed as it is sent; all by Accept-Encoding,
// with Vary: Accept-Encoding, and the same bytes once decoded. Real server, raw node:http requests (fetch
// would send its own Accept-Encoding and decode the body before the test could see it).
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickEncoding } from '../src/http/compression.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion, sampleDraft } from './helpers/versions.js';

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

/** Raw bytes as sent. */
function raw(path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    get(new URL(path, server.url), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const decoded = (res: RawResponse) =>
  res.headers['content-encoding'] === 'br' ? brotliDecompressSync(res.body) : res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body) : res.body;

const varyNames = (res: RawResponse) => String(res.headers.vary ?? '').split(/\s*,\s*/).filter(Boolean);

/**
 * The same answer asked for in brotli, gzip and nothing: each coded as asked, each decoding to the plain
 * bytes, each with a Content-Length of what was sent and Vary naming Accept-Encoding (with `alsoVaries`).
 */
async function threeWays(path: string, headers: Record<string, string> = {}, alsoVaries: string[] = []) {
  const br = await raw(path, { ...headers, 'accept-encoding': 'gzip, deflate, br' });
  const gzip = await raw(path, { ...headers, 'accept-encoding': 'gzip' });
  const plain = await raw(path, headers);
  for (const [res, encoding] of [
    [br, 'br'],
    [gzip, 'gzip'],
    [plain, undefined],
  ] as const) {
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(encoding);
    expect(res.headers['content-length']).toBe(String(res.body.length));
    expect(varyNames(res)).toEqual(expect.arrayContaining(['Accept-Encoding', ...alsoVaries]));
    expect(decoded(res)).toEqual(plain.body);
  }
  expect(br.body.length).toBeLessThan(plain.body.length);
  expect(gzip.body.length).toBeLessThan(plain.body.length);
  return { br, gzip, plain };
}

describe('SDK files', () => {
  for (const [path, file, marker] of [
    ['/sdk/v1/consent.js', 'consent.js', 'ConsentSDK'],
    ['/sdk/v1/consent.mjs', 'consent.mjs', 'export'],
    ['/sdk/v2/consent.js', 'v2/consent.js', 'ConsentSDK'],
    ['/sdk/v2/consent.mjs', 'v2/consent.mjs', 'export'],
    ['/sdk/v2/gpp.js', 'v2/gpp.js', 'ConsentGpp'],
    ['/sdk/v2/stub.js', 'v2/stub.js', '__tcfapi'],
    ['/sdk/v2/tcf.js', 'v2/tcf.js', 'ConsentTcf'],
    ['/sdk/v2/declaration.js', 'v2/declaration.js', 'data-consent-declaration'],
    ['/sdk/v2/stub.js', 'v2/stub.js', 'ConsentStub'],
    ['/sdk/v2/more.js', 'v2/more.js', 'ConsentMore'],
    ['/sdk/v2/integrations.js', 'v2/integrations.js', 'ConsentIntegrations'],
  ] as const) {
    it(`${path}: brotli, gzip or the built bytes by Accept-Encoding, each revalidating with its own ETag`, async () => {
      const source = readFileSync(new URL(`../sdk/dist/${file}`, import.meta.url));
      expect(source.toString()).toContain(marker);
      const { br, gzip, plain } = await threeWays(path);
      // Without Accept-Encoding: the build's bytes, as before compression existed.
      expect(plain.body).toEqual(source);
      for (const res of [br, gzip, plain]) {
        expect(res.headers.vary).toBe('Accept-Encoding');
        expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
        expect(res.headers['access-control-allow-origin']).toBe('*');
      }
      expect(new Set([br.headers.etag, gzip.headers.etag, plain.headers.etag]).size).toBe(3);
      const again = await raw(path, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      // A gzip-only client revalidating the brotli ETag gets the gzip body, not a 304.
      const other = await raw(path, { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag as string });
      expect(other.status).toBe(200);
      expect(other.headers['content-encoding']).toBe('gzip');
    });
  }

  it('v1 keeps its plain ETag (the SHA-256 prefix of the built file)', async () => {
    const { createHash } = await import('node:crypto');
    const source = readFileSync(new URL('../sdk/dist/consent.js', import.meta.url));
    const plain = await raw('/sdk/v1/consent.js');
    expect(plain.headers.etag).toBe(`"${createHash('sha256').update(source).digest('hex').slice(0, 32)}"`);
    expect(plain.body.toString()).toMatch(/^\/\*! @consent\/sdk 1\.0\.0 \*\//);
  });
});

describe('Accept-Encoding', () => {
  it('reads q-values: q=0 refuses an encoding, brotli wins a tie, nothing accepted means the plain bytes', () => {
    expect(pickEncoding('br;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('gzip;q=0.0')).toBe('identity');
    expect(pickEncoding('deflate, gzip;q=0.5')).toBe('gzip');
    expect(pickEncoding('gzip, br')).toBe('br');
    expect(pickEncoding('gzip;q=1, br;q=0.5')).toBe('gzip');
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding('*, br;q=0')).toBe('gzip');
    expect(pickEncoding('BR')).toBe('br');
    expect(pickEncoding('identity')).toBe('identity');
    expect(pickEncoding('')).toBe('identity');
    expect(pickEncoding(undefined)).toBe('identity');
  });
});

describe('SDK config', () => {
  // Over 1 KB: a notice description long enough (sampleDraft's own config is smaller than that).
  const LONG = 'We and our partners use cookies to keep the site working, count visits and show you relevant ads. '.repeat(12);

  async function published(description = LONG, purposes?: number) {
    const t = await team(server);
    const key = await createKey(server, t.owner.token, t.project.id);
    const draft = sampleDraft({ description });
    if (purposes !== undefined) draft.purposes = draft.purposes.slice(0, purposes);
    const version = await publishVersion(server, t.owner, t.project.id, draft);
    return { key, version, auth: { authorization: `Bearer ${key.secret}` } };
  }

  it('v1: compressed once per version, the same bytes decoded, the contract ETag for every coding, 304 alike', async () => {
    const { version, auth } = await published();
    const etag = `"${version.contentHash}"`;
    // The first request takes the full path (GraphQL operation), the next ones the from-memory path, and
    // `?key=` always the full path: all three answer alike.
    for (const path of ['/api/sdk/v1/config', '/api/sdk/v1/config', '/api/sdk/v1/config?key=ignored']) {
      const { br, gzip, plain } = await threeWays(path, auth, ['Origin', 'Authorization']);
      expect(JSON.parse(plain.body.toString()).version.contentHash).toBe(version.contentHash);
      // decisions.md fixes the ETag as "<contentHash>": kept byte for byte whatever the coding.
      for (const res of [br, gzip, plain]) expect(res.headers.etag).toBe(etag);
      expect(br.headers['access-control-allow-origin']).toBe('*');
      for (const encoding of ['br', 'gzip', '']) {
        const notModified = await raw(path, { ...auth, 'if-none-match': etag, ...(encoding && { 'accept-encoding': encoding }) });
        expect(notModified.status).toBe(304);
        expect(notModified.body.length).toBe(0);
        expect(notModified.headers.etag).toBe(etag);
        expect(varyNames(notModified)).toEqual(['Origin', 'Authorization', 'Accept-Encoding']);
      }
    }
  });

  it('v1: a config under 1 KB goes out as it is, with no Vary on the coding', async () => {
    const { auth } = await published('Choose what we may use.', 1);
    for (let i = 0; i < 2; i++) {
      const res = await raw('/api/sdk/v1/config', { ...auth, 'accept-encoding': 'br, gzip' });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(1024);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toBe('Origin, Authorization');
      expect(JSON.parse(res.body.toString()).config.notice.description).toBe('Choose what we may use.');
    }
  });

  it('v2: compressed with ?locale= and with Accept-Language, its ETag the SHA-256 of the plain body', async () => {
    const { createHash } = await import('node:crypto');
    const { auth } = await published();
    for (const [path, headers, alsoVaries] of [
      ['/api/sdk/v2/config?locale=de', auth, ['Origin', 'Authorization']],
      ['/api/sdk/v2/config?locale=de', auth, ['Origin', 'Authorization']],
      ['/api/sdk/v2/config', { ...auth, 'accept-language': 'de' }, ['Origin', 'Accept-Language', 'Authorization']],
      ['/api/sdk/v2/config', { ...auth, 'accept-language': 'de' }, ['Origin', 'Accept-Language', 'Authorization']],
    ] as const) {
      const { br, gzip, plain } = await threeWays(path, headers, [...alsoVaries]);
      const etag = `"${createHash('sha256').update(plain.body).digest('hex')}"`;
      for (const res of [br, gzip, plain]) expect(res.headers.etag).toBe(etag);
      const notModified = await raw(path, { ...headers, 'accept-encoding': 'br', 'if-none-match': etag });
      expect(notModified.status).toBe(304);
      expect(varyNames(notModified)).toEqual([...alsoVaries, 'Accept-Encoding']);
    }
  });
});

describe('other JSON answers', () => {
  it('over 1 KB: compressed as they are sent, decoding to the same JSON', async () => {
    const { br, plain } = await threeWays('/api/openapi.json');
    expect(JSON.parse(brotliDecompressSync(br.body).toString()).openapi).toMatch(/^3\.1/);
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
  });

  it('1 KB or less: never compressed, no Vary on the coding', async () => {
    for (const path of ['/api/health', '/api/no-such-route', '/api/sdk/v1/config']) {
      const res = await raw(path, { 'accept-encoding': 'br, gzip' });
      expect(res.body.length, path).toBeLessThanOrEqual(1024);
      expect(res.headers['content-encoding'], path).toBeUndefined();
      expect(String(res.headers.vary ?? ''), path).not.toMatch(/accept-encoding/i);
      expect(JSON.parse(res.body.toString())).toBeTypeOf('object');
    }
  });

  it('a preflight (204) is never compressed', async () => {
    const res = await new Promise<RawResponse>((resolve, reject) => {
      const req = get(new URL('/api/sdk/v1/config', server.url), {
        method: 'OPTIONS',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'accept-encoding': 'br' },
      });
      req.on('response', (r) => {
        r.resume();
        r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers, body: Buffer.alloc(0) }));
      });
      req.on('error', reject);
    });
    expect(res.status).toBe(204);
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});
