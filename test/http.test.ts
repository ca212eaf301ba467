import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, operator } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOT_FOUND = { error: 'Not found', code: 'not_found' };

let server: TestServer;
const logLines: string[] = [];
beforeAll(async () => {
  server = await startTestServer({ logLevel: 'info' }, { logDestination: { write: (line: string) => void logLines.push(line) } });
});
afterAll(() => server?.close());

/** A raw request: any method, headers and body bytes, optionally chunked (no Content-Length). */
function raw(method: string, path: string, options: { headers?: Record<string, string>; body?: Buffer | string; chunked?: boolean } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const url = new URL(path, server.url);
    const req = httpRequest(url, { method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    if (options.body !== undefined) {
      if (options.chunked) {
        const body = Buffer.from(options.body);
        for (let i = 0; i < body.length; i += 8192) req.write(body.subarray(i, i + 8192));
      } else {
        req.setHeader('content-length', Buffer.byteLength(options.body));
        req.write(options.body);
      }
    }
    req.end();
  });
}

describe('x-request-id', () => {
  it('is echoed when it is 1-128 characters of [A-Za-z0-9._:-]', async () => {
    for (const id of ['a', 'abc-123_X.y:z', 'x'.repeat(128)]) {
      const res = await server.request('GET', '/api/ready', { headers: { 'x-request-id': id } });
      expect(res.headers.get('x-request-id')).toBe(id);
    }
  });

  it('is generated when missing or not well formed', async () => {
    for (const id of [undefined, 'x'.repeat(129), 'has space', 'semi;colon', 'ümlaut', 'a/b']) {
      const res = await raw('GET', '/api/ready', { headers: id === undefined ? {} : { 'x-request-id': id } });
      const returned = res.headers['x-request-id'] as string;
      expect(returned).toMatch(UUID);
      expect(returned).not.toBe(id);
    }
    const a = await server.request('GET', '/api/ready');
    const b = await server.request('GET', '/api/ready');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('is on every response: errors, 404, 405, 413, OpenAPI and /graphql', async () => {
    const id = 'trace-me-1';
    const headers = { 'x-request-id': id };
    const responses = [
      await server.request('GET', '/nope', { headers }),
      await server.request('DELETE', '/api/platform/auth/login', { headers }),
      await server.request('GET', '/api/platform/auth/me', { headers }),
      await server.request('POST', '/api/platform/auth/login', { headers, raw: '{', }),
      await server.request('GET', '/api/openapi.json', { headers }),
      await server.request('POST', '/graphql', { headers, body: { query: '{ __typename }' } }),
      await server.request('POST', '/graphql', { headers, body: { query: '{ nope }' } }),
      await server.request('OPTIONS', '/api/sdk/v1/config', { headers }),
    ];
    for (const res of responses) expect(res.headers.get('x-request-id')).toBe(id);
    const tooLarge = await raw('POST', '/api/platform/auth/register', {
      headers: { ...headers, 'content-type': 'application/json' },
      body: 'x'.repeat(70_000),
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers['x-request-id']).toBe(id);
  });
});

describe('routing', () => {
  it('answers unknown routes with 404 {error:"Not found", code:"not_found"}', async () => {
    for (const path of ['/', '/nope', '/api', '/api/platform', '/api/platform/orgs/x/nope', '/api/sdk/v1/nope', '/api/healthz']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual(NOT_FOUND);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
    expect((await server.request('POST', '/api/platform/nope', { body: {} })).body).toEqual(NOT_FOUND);
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const login = await server.request('GET', '/api/platform/auth/login');
    expect(login.status).toBe(405);
    expect(login.headers.get('allow')).toBe('POST');
    expect(login.body).toEqual({ error: expect.any(String), code: 'method_not_allowed' });
    const document = await server.request('POST', '/api/openapi.json', { body: {} });
    expect(document.status).toBe(405);
    expect(document.headers.get('allow')).toBe('GET, HEAD');
    const projects = await server.request('DELETE', '/api/platform/orgs/some-org/projects');
    expect(projects.status).toBe(405);
    expect(projects.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    const health = await server.request('POST', '/api/health', { body: {} });
    expect(health.status).toBe(405);
    expect(health.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers HEAD like GET without a body, and tolerates a trailing slash', async () => {
    const head = await raw('HEAD', '/api/ready');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect((await server.request('GET', '/api/ready/')).status).toBe(200);
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 invalid_json and changes nothing', async () => {
    for (const body of ['{', '{"email": }', 'not json', '"a string"', '[1,2]', 'null', '42']) {
      const res = await server.request('POST', '/api/platform/auth/register', { raw: body, headers: { 'content-type': 'application/json' } });
      expect(res.status, body).toBe(400);
      expect(res.body, body).toEqual({ error: expect.any(String), code: 'invalid_json' });
    }
  });

  it('answers a wrong or missing content type with 400 invalid_json', async () => {
    const body = JSON.stringify({ email: 'ct@example.com', password: PASSWORD, name: 'CT' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const res = await raw('POST', '/api/platform/auth/register', { body, headers: type ? { 'content-type': type } : {} });
      expect(res.status, type).toBe(400);
      expect(JSON.parse(res.text), type).toEqual({ error: expect.any(String), code: 'invalid_json' });
    }
    const rows = await server.services.db.query('SELECT id FROM users WHERE email = $1', ['ct@example.com']);
    expect(rows).toHaveLength(0);
    // JSON with a charset or a +json type is JSON.
    const ok = await raw('POST', '/api/platform/auth/register', { body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.status).toBe(201);
  });

  it('answers a missing body on a JSON route with 400 invalid_json', async () => {
    const res = await raw('POST', '/api/platform/auth/login', { headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).code).toBe('invalid_json');
  });

  it('authenticates before it reads the body: a bad body without a session is 401', async () => {
    const res = await server.request('POST', '/api/platform/orgs', { raw: '{', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('refuses bodies over 64 KiB with 413 payload_too_large, with or without Content-Length', async () => {
    const big = JSON.stringify({ email: 'big@example.com', password: PASSWORD, name: 'x'.repeat(70 * 1024) });
    for (const chunked of [false, true]) {
      const res = await raw('POST', '/api/platform/auth/register', { headers: { 'content-type': 'application/json' }, body: big, chunked });
      expect(res.status, `chunked ${chunked}`).toBe(413);
      expect(JSON.parse(res.text)).toEqual({ error: expect.any(String), code: 'payload_too_large' });
    }
    const op = await operator(server, 'Big');
    const org = await raw('POST', '/api/platform/orgs', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${op.token}` },
      body: JSON.stringify({ name: 'y'.repeat(65 * 1024) }),
    });
    expect(org.status).toBe(413);
  });

  it('accepts a body of exactly 64 KiB (the limit is inclusive)', async () => {
    const base = JSON.stringify({ email: 'edge@example.com', password: PASSWORD, name: '' });
    const body = JSON.stringify({ email: 'edge@example.com', password: PASSWORD, name: 'n'.repeat(64 * 1024 - base.length) });
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const res = await raw('POST', '/api/platform/auth/register', { headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400); // reaches validation: the name is too long, the body was not too large
    expect(JSON.parse(res.text).code).toBe('validation_failed');
  });

  it('refuses /graphql bodies over 64 KiB with 413, chunked too', async () => {
    const query = `{ __typename ${' '.repeat(70 * 1024)} }`;
    for (const chunked of [false, true]) {
      const res = await raw('POST', '/graphql', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }), chunked });
      expect(res.status, `chunked ${chunked}`).toBe(413);
      expect(JSON.parse(res.text).code).toBe('payload_too_large');
    }
  });
});

describe('logs', () => {
  it('writes one JSON line per request with its request id, method, path, status and duration', async () => {
    const id = `log-${Date.now()}`;
    await server.request('POST', '/api/platform/auth/login', {
      headers: { 'x-request-id': id },
      body: { email: 'nobody@example.com', password: 'secret password 123' },
    });
    await new Promise((resolve) => setImmediate(resolve));
    const mine = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.reqId === id);
    const requests = mine.filter((entry) => entry.msg === 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      level: 30,
      reqId: id,
      method: 'POST',
      path: '/api/platform/auth/login',
      status: 401,
      durationMs: expect.any(Number),
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    for (const line of logLines) expect(line.endsWith('\n')).toBe(true);
    expect(logLines.join('')).not.toContain('secret password 123');
  });

  it('logs every kind of response, 404 and /graphql included, without query strings', async () => {
    const ids = ['log-404', 'log-gql', 'log-405'];
    await server.request('GET', '/nope?token=secret', { headers: { 'x-request-id': ids[0]! } });
    await server.request('POST', '/graphql', { headers: { 'x-request-id': ids[1]! }, body: { query: '{ __typename }' } });
    await server.request('PUT', '/api/ready', { headers: { 'x-request-id': ids[2]! } });
    await new Promise((resolve) => setImmediate(resolve));
    const entries = logLines.map((line) => JSON.parse(line)).filter((e) => e.msg === 'request');
    for (const id of ids) expect(entries.filter((e) => e.reqId === id)).toHaveLength(1);
    expect(entries.find((e) => e.reqId === 'log-404')).toMatchObject({ path: '/nope', status: 404 });
    expect(logLines.join('')).not.toContain('token=secret');
  });
});
