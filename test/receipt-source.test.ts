// Issue 45: where a receipt came from. An optional `source` on the consent body, checked and bounded, stored,
// listed (REST, GraphQL), exported (NDJSON, CSV), in the webhook's data and in the ledger's leaf when present.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeys } from '../verify/ledger.mjs';
import { verifyExport } from '../verify/verify-export.mjs';
import { sealDue } from '../src/ledger/seal.js';
import { sdkTeam } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  // Sealing is driven by the test (sealDue), not by the worker's clock.
  server = await startTestServer({ ledger: { signingKey: generateKeyPairSync('ed25519').privateKey, publicKeys: [], sealIntervalMs: 50_000 } });
});
afterAll(() => server?.close());

// As an app sends it, its keys in another order than the documented one.
const appSource = { appVersion: '2.3.1 (456)', platform: 'ios', appId: 'com.example.shop', sdkVersion: '0.1.0', sdk: 'react-native' };
const documented = { sdk: 'react-native', sdkVersion: '0.1.0', platform: 'ios', appId: 'com.example.shop', appVersion: '2.3.1 (456)' };

async function setup() {
  const site = await sdkTeam(server);
  await server.services.db.query(
    `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/x', true, 'whsec_test', 'whsec_te')`,
    [site.project.id],
  );
  const post = (installationId: string, extra: object = {}) =>
    server.request('POST', '/api/sdk/v1/consent', { token: site.key.secret, body: { ...site.body(installationId), ...extra } });
  const exported = async (format: string) =>
    (await server.request('GET', `/api/platform/projects/${site.project.id}/receipts/export?format=${format}`, { token: site.viewer.token })).text;
  return { ...site, post, exported };
}

describe('a receipt’s source', () => {
  it('is stored, listed on REST and GraphQL, exported and sent in the webhook, only when the SDK sent one', async () => {
    const s = await setup();
    const plain = await s.post('inst_source_plain_1');
    const app = await s.post('inst_source_app_001', { source: appSource });
    const web = await s.post('inst_source_web_001', { source: { sdk: 'browser', sdkVersion: '2.4.0', platform: 'web' } });
    expect([plain.status, app.status, web.status]).toEqual([201, 201, 201]);
    // The answer is the contract's, source or not.
    expect(Object.keys(app.body)).toEqual(['ok', 'id', 'createdAt']);

    const [row] = await server.services.db.query<{ source: unknown }>('SELECT source FROM receipts WHERE id = $1', [app.body.id]);
    expect(row!.source).toEqual(documented);

    const list = await server.request('GET', `/api/platform/projects/${s.project.id}/receipts`, { token: s.viewer.token });
    const byId = new Map(list.body.receipts.map((r: { id: string }) => [r.id, r]));
    expect(JSON.stringify((byId.get(app.body.id) as { source: object }).source)).toBe(JSON.stringify(documented));
    expect((byId.get(web.body.id) as { source: object }).source).toEqual({ sdk: 'browser', sdkVersion: '2.4.0', platform: 'web' });
    expect(byId.get(plain.body.id)).not.toHaveProperty('source');

    const graph = await server.request('POST', '/graphql', {
      token: s.viewer.token,
      body: { query: 'query($p: ID!) { receipts(projectId: $p) { receipts { id source { sdk sdkVersion platform appId appVersion } } } }', variables: { p: s.project.id } },
    });
    const graphById = new Map(graph.body.data.receipts.receipts.map((r: { id: string; source: unknown }) => [r.id, r.source]));
    expect(graphById.get(app.body.id)).toEqual(documented);
    expect(graphById.get(web.body.id)).toEqual({ sdk: 'browser', sdkVersion: '2.4.0', platform: 'web', appId: null, appVersion: null });
    expect(graphById.get(plain.body.id)).toBeNull();

    const ndjson = (await s.exported('ndjson')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(ndjson.find((r) => r.id === app.body.id).source).toEqual(documented);
    expect(ndjson.find((r) => r.id === plain.body.id)).not.toHaveProperty('source');

    const csv = (await s.exported('csv')).trimEnd().split('\n');
    expect(csv[0]).toMatch(/,sourceSdk,sourceSdkVersion,sourcePlatform,sourceAppId,sourceAppVersion$/);
    expect(csv.find((line) => line.startsWith(app.body.id))).toMatch(/,react-native,0\.1\.0,ios,com\.example\.shop,2\.3\.1 \(456\)$/);
    expect(csv.find((line) => line.startsWith(web.body.id))).toMatch(/,browser,2\.4\.0,web,,$/);
    expect(csv.find((line) => line.startsWith(plain.body.id))).toMatch(/,,,,,$/);

    const events = await server.services.db.query<{ payload: { data: Record<string, unknown> } }>(
      `SELECT payload FROM webhook_events WHERE project_id = $1 AND type = 'consent.updated'`,
      [s.project.id],
    );
    const data = new Map(events.map((e) => [e.payload.data.receiptId, e.payload.data]));
    expect(data.get(app.body.id)!.source).toEqual(documented);
    expect(data.get(plain.body.id)).not.toHaveProperty('source');
  });

  it('is sealed in the ledger leaf: an export with and without sources verifies, and an edited source is named', async () => {
    const s = await setup();
    await s.post('inst_source_ledger_1');
    await s.post('inst_source_ledger_2', { source: appSource });
    await s.post('inst_source_ledger_3', { source: { sdk: 'core', sdkVersion: '0.1.0', platform: 'android' } });
    await sealDue(server.services);
    const keys = readKeys((await server.request('GET', '/.well-known/consent-ledger-keys.json')).body);
    const lines = (await s.exported('ledger')).trimEnd().split('\n');
    expect(await verifyExport(lines, keys)).toMatchObject({ ok: true, problems: [], receipts: 3 });

    // A source changed after sealing (an app claimed for a web receipt) no longer hashes to its leaf.
    const edited = lines.map((line) => {
      const entry = JSON.parse(line);
      if (entry.type !== 'receipt' || !entry.receipt.source) return line;
      entry.receipt.source.platform = 'web';
      return JSON.stringify(entry);
    });
    const problems = (await verifyExport(edited, keys)).problems.map((p: { code: string }) => p.code);
    expect(problems).toContain('receipt_edited');
  });

  it('refuses a source out of bounds with 400 invalid_body naming the field, and stores nothing', async () => {
    const s = await setup();
    const base = { sdk: 'react-native', sdkVersion: '0.1.0', platform: 'android' };
    const refused: [unknown, RegExp][] = [
      [{ ...base, sdk: 'flutter' }, /^source\.sdk: /],
      [{ ...base, platform: 'windows' }, /^source\.platform: /],
      [{ ...base, sdkVersion: '' }, /^source\.sdkVersion: /],
      [{ ...base, sdkVersion: '1'.repeat(33) }, /^source\.sdkVersion: /],
      [{ ...base, sdkVersion: '1.0 beta' }, /^source\.sdkVersion: /],
      [{ ...base, appId: 'com.example/../x' }, /^source\.appId: /],
      [{ ...base, appId: 'a'.repeat(129) }, /^source\.appId: /],
      [{ ...base, appVersion: '<script>' }, /^source\.appVersion: /],
      [{ ...base, appVersion: '9'.repeat(65) }, /^source\.appVersion: /],
      [{ ...base, deviceId: 'abc' }, /^source: /],
      [{ sdk: 'core', platform: 'ios' }, /^source\.sdkVersion: /],
      ['browser', /^source: /],
    ];
    for (const [source, message] of refused) {
      const res = await s.post('inst_source_refused', { source });
      expect(res.status, JSON.stringify(source)).toBe(400);
      expect(res.body).toEqual({ error: expect.stringMatching(message), code: 'invalid_body' });
    }
    const [counted] = await server.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM receipts WHERE project_id = $1', [s.project.id]);
    expect(counted!.n).toBe(0);
  });
});
