import { get as httpGet, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
let clock = new Date('2026-03-01T12:00:00.000Z');
const tick = (ms = 1000) => (clock = new Date(clock.getTime() + ms));

beforeAll(async () => {
  server = await startTestServer({}, { now: () => clock });
});
afterAll(() => server?.close());

async function setup() {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  let n = 0;
  const record = async (installationId = `installation-${n++}`) => {
    const res = await server.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: n % 2 === 0 }, installationId, sdkVersion: '1.0.0' },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; createdAt: string };
  };
  const list = (query = '', token = t.viewer.token) => server.request('GET', `/api/platform/projects/${t.project.id}/receipts${query}`, { token });
  const exportFile = (query = '', token = t.viewer.token) => server.request('GET', `/api/platform/projects/${t.project.id}/receipts/export${query}`, { token });
  return { ...t, version, key, record, list, exportFile };
}

/** Every receipt by walking the cursor, calling `between` after each page. */
async function walk(s: Awaited<ReturnType<typeof setup>>, limit: number, between: () => Promise<unknown> = async () => {}) {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await s.list(`?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    seen.push(...res.body.receipts.map((r: { id: string }) => r.id));
    cursor = res.body.nextCursor;
    await between();
  } while (cursor);
  return seen;
}

describe('GET /receipts', () => {
  it('lists receipts newest first in the contract’s shape', async () => {
    const s = await setup();
    const first = await s.record('install-first');
    tick();
    const second = await s.record('install-second');
    const res = await s.list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      receipts: [
        {
          id: second.id,
          versionId: s.version.id,
          versionNumber: 1,
          consentHash: s.version.consentHash,
          choices: { necessary: true, analytics: true, marketing: false },
          installationId: 'install-second',
          sdkVersion: '1.0.0',
          createdAt: second.createdAt,
        },
        expect.objectContaining({ id: first.id, installationId: 'install-first', createdAt: first.createdAt }),
      ],
      nextCursor: null,
    });
  });

  it('pages by cursor without repeats or gaps, also among receipts with the same createdAt', async () => {
    const s = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      ids.push((await s.record()).id);
      if (i % 3 === 2) tick(); // three receipts per millisecond
    }
    const seen = await walk(s, 2);
    expect(seen).toEqual([...ids].reverse());
  });

  it('stays stable while receipts are recorded between pages', async () => {
    const s = await setup();
    const existing: string[] = [];
    for (let i = 0; i < 12; i++) {
      existing.push((await s.record()).id);
      if (i % 2) tick();
    }
    const added: string[] = [];
    const seen = await walk(s, 5, async () => {
      tick();
      added.push((await s.record()).id, (await s.record()).id);
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...existing].reverse());
    expect(added.length).toBeGreaterThan(0);
  });

  it('filters by time range (from inclusive, to exclusive) and installation', async () => {
    const s = await setup();
    const a = await s.record('install-a');
    tick();
    const b = await s.record('install-b');
    tick();
    const c = await s.record('install-a');
    const ranged = await s.list(`?from=${encodeURIComponent(b.createdAt)}&to=${encodeURIComponent(c.createdAt)}`);
    expect(ranged.body.receipts.map((r: { id: string }) => r.id)).toEqual([b.id]);
    const mine = await s.list('?installationId=install-a');
    expect(mine.body.receipts.map((r: { id: string }) => r.id)).toEqual([c.id, a.id]);
  });

  it('refuses a limit outside 1–200, a bad cursor or a bad date with 400 validation_failed', async () => {
    const s = await setup();
    for (const query of ['?limit=0', '?limit=201', '?limit=abc', '?limit=1.5', '?cursor=nonsense', '?from=yesterday']) {
      const res = await s.list(query);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
      expect(res.body.details, query).toEqual([{ path: expect.any(Array), message: expect.any(String) }]);
    }
    expect((await s.list('?limit=200')).status).toBe(200);
    expect((await s.list('?limit=1')).status).toBe(200);
  });

  it('is for project members: outsiders get 404, anonymous callers 401', async () => {
    const s = await setup();
    expect((await s.list('', s.outsider.token)).status).toBe(404);
    expect((await s.list('', '')).status).toBe(401);
    expect((await s.exportFile('', s.outsider.token)).status).toBe(404);
  });
});

describe('GET /receipts/export', () => {
  it('streams CSV as an attachment, oldest first', async () => {
    const s = await setup();
    const a = await s.record('install-a');
    tick();
    const b = await s.record('install-b');
    const res = await s.exportFile('?format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="receipts-.+\.csv"$/);
    const lines = res.text.trimEnd().split('\n');
    // locale and gpc (extensions.md section 3), then jurisdiction, action and gpp (issue 16), then tcString and
    // addtlConsent (issue 39), then subjectHash (issue 47) and the source's fields (issue 45) come last.
    expect(lines[0]).toBe('id,versionId,versionNumber,consentHash,choices,installationId,sdkVersion,createdAt,locale,gpc,jurisdiction,action,gpp,tcString,addtlConsent,subjectHash,sourceSdk,sourceSdkVersion,sourcePlatform,sourceAppId,sourceAppVersion');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(
      `${a.id},${s.version.id},1,${s.version.consentHash},"{""analytics"":true,""marketing"":false,""necessary"":true}",install-a,1.0.0,${a.createdAt},,,,,,,,,,,,,`,
    );
    expect(lines[2]!.startsWith(`${b.id},`)).toBe(true);
  });

  // Fails on the old main, which wrote the visitor's sdkVersion as it came: a live formula in a spreadsheet.
  it('neutralises cells a spreadsheet would run as a formula (= + - @ tab CR first) with a leading apostrophe', async () => {
    const s = await setup();
    const hostile = ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1'];
    for (const [i, sdkVersion] of hostile.entries()) {
      const res = await server.request('POST', '/api/sdk/v1/consent', {
        token: s.key.secret,
        body: { versionId: s.version.id, consentHash: s.version.consentHash, choices: {}, installationId: `hostile-${i}-abcdef`, sdkVersion },
      });
      expect(res.status).toBe(201);
      tick();
    }
    const res = await s.exportFile('?format=csv');
    // Each value with its apostrophe (CSV doubles quotes inside a quoted cell), and no cell opening on a formula.
    for (const value of hostile) expect(res.text).toContain(`'${value.replaceAll('"', '""')}`);
    expect(res.text).toContain(`,"'=HYPERLINK(""http://x"",""y"")",`);
    expect(res.text).not.toMatch(/(\n|,)"?[=+@\t]/);
    // NDJSON is data, not a spreadsheet: the value stays as sent.
    const ndjson = (await s.exportFile('?format=ndjson')).text.trimEnd().split('\n').map((line) => JSON.parse(line).sdkVersion);
    expect(ndjson).toEqual(hostile);
  });

  it('streams NDJSON within a time range', async () => {
    const s = await setup();
    await s.record();
    tick();
    const b = await s.record();
    tick();
    await s.record();
    const res = await s.exportFile(`?format=ndjson&from=${encodeURIComponent(b.createdAt)}&to=${encodeURIComponent(clock.toISOString())}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.ndjson"$/);
    const rows = res.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(rows).toEqual([
      {
        id: b.id,
        versionId: s.version.id,
        versionNumber: 1,
        consentHash: s.version.consentHash,
        choices: { necessary: true, analytics: expect.any(Boolean), marketing: false },
        installationId: expect.any(String),
        sdkVersion: '1.0.0',
        createdAt: b.createdAt,
      },
    ]);
  });

  it('exports more receipts than one batch', async () => {
    const s = await setup();
    const values = Array.from({ length: 4_500 }, (_, i) => i);
    // Bulk rows straight into the table (the export, not the consent endpoint, is under test).
    // Ids as the service makes them: a uuidv7 of the receipt's time (receipt_id(), the partitioning migration).
    const inserted = await server.services.db.query<{ id: string }>(
      `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at)
       SELECT receipt_id(at), $1, $2, $3, '{"analytics":true}', 'bulk-installation', $4, at
       FROM unnest($6::int[]) AS i, LATERAL (SELECT $5::timestamptz + (i || ' milliseconds')::interval AS at) AS t
       RETURNING id`,
      [s.project.id, s.version.id, s.version.consentHash, s.key.id, clock.toISOString(), values],
    );
    expect(inserted).toHaveLength(values.length);
    tick(10_000);
    const res = await s.exportFile('?format=ndjson');
    const ids = res.text.trimEnd().split('\n').map((line) => JSON.parse(line).id);
    // One a millisecond: oldest first is the order they were made in.
    const made = await server.services.db.query<{ id: string }>(`SELECT id FROM receipts WHERE installation_id = 'bulk-installation' AND project_id = $1 ORDER BY created_at`, [s.project.id]);
    expect(ids).toEqual(made.map((row) => row.id));
  });

  it('answers HEAD with the headers alone', async () => {
    const s = await setup();
    await s.record();
    const res = await fetch(`${server.url}/api/platform/projects/${s.project.id}/receipts/export?format=csv`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${s.viewer.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await res.text()).toBe('');
  });

  it('is finished, not cut off, when the service shuts down while a slow client reads it', async () => {
    const own = await startTestServer();
    const t = await team(own);
    const version = await publishVersion(own, t.owner, t.project.id);
    const key = await createKey(own, t.owner.token, t.project.id);
    const rows = 30_000; // several MB of NDJSON: far more than the socket buffers hold
    await own.services.db.query(
      `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at)
       SELECT receipt_id(now() - interval '1 hour'), $1, $2, $3, '{"analytics":true}', 'slow-installation', $4, now() - interval '1 hour'
       FROM generate_series(1, $5::int) AS i`,
      [t.project.id, version.id, version.consentHash, key.id, rows],
    );
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(`${own.url}/api/platform/projects/${t.project.id}/receipts/export?format=ndjson`, { headers: { authorization: `Bearer ${t.viewer.token}` } }, resolve).on('error', reject),
    );
    expect(response.statusCode).toBe(200);
    response.pause(); // the client reads nothing for now: the export waits on backpressure
    let closed = false;
    const closing = own.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(closed).toBe(false);
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk)).resume();
    await new Promise((resolve, reject) => response.on('end', resolve).on('error', reject));
    await closing;
    expect(Buffer.concat(chunks).toString('utf8').trimEnd().split('\n')).toHaveLength(rows);
  });

  it('refuses an unknown format with 400', async () => {
    const s = await setup();
    const res = await s.exportFile('?format=xml');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});
