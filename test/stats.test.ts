// Consent analytics (extensions.md §5) over real HTTP and GraphQL: receipts go in through the
// SDK route, stats come out of GET /receipts/stats, Query.consentStats and Project.consentStats,
// and every figure is checked against a count this file makes itself from what it sent.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
let clock = new Date('2026-03-02T10:00:00.000Z'); // a Monday
const setClock = (iso: string) => (clock = new Date(iso));

beforeAll(async () => {
  server = await startTestServer({}, { now: () => clock });
});
afterAll(() => server?.close());

const gql = (query: string, variables: Record<string, unknown>, token: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

interface Sent {
  day: string;
  versionId: string;
  choices: { analytics: boolean; marketing: boolean };
  gpc?: boolean;
  action?: (typeof ACTIONS)[number];
  jurisdiction?: string;
  /** Issue 45: the source's platform, when the receipt had a source. */
  platform?: 'web' | 'ios' | 'android' | 'other';
}

const ACTIONS = ['accept_all', 'reject_all', 'custom', 'opt_out', 'gpc'] as const;

async function setup() {
  setClock('2026-03-01T12:00:00.000Z'); // sessions are made on the test's clock: every test stays within days of it
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const sent: Sent[] = [];
  let n = 0;
  const record = async (choices: Sent['choices'], options: { gpc?: boolean; v?: typeof version } & Pick<Sent, 'action' | 'jurisdiction' | 'platform'> = {}) => {
    const v = options.v ?? version;
    const res = await server.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: {
        versionId: v.id,
        consentHash: v.consentHash,
        choices,
        installationId: `installation-${n++}-${t.project.id.slice(-6)}`,
        ...(options.gpc !== undefined && { gpc: options.gpc }),
        ...(options.action !== undefined && { action: options.action }),
        ...(options.jurisdiction !== undefined && { jurisdiction: options.jurisdiction }),
        ...(options.platform !== undefined && {
          source: { sdk: options.platform === 'web' ? 'browser' : 'react-native', sdkVersion: '1.0.0', platform: options.platform },
        }),
      },
    });
    expect(res.status, res.text).toBe(201);
    const { v: _version, ...extras } = options;
    sent.push({ day: clock.toISOString().slice(0, 10), versionId: v.id, choices, ...extras });
  };
  const stats = (query = '', token = t.viewer.token) => server.request('GET', `/api/platform/projects/${t.project.id}/receipts/stats${query}`, { token });
  return { ...t, version, key, sent, record, stats };
}

/** The expected counts of some receipts, computed here from what was sent (optional purposes: analytics, marketing). */
function expectedCounts(sent: Sent[]) {
  const granted = (s: Sent) => Number(s.choices.analytics) + Number(s.choices.marketing);
  return {
    receipts: sent.length,
    acceptedAll: sent.filter((s) => granted(s) === 2).length,
    rejectedAll: sent.filter((s) => granted(s) === 0).length,
    customised: sent.filter((s) => granted(s) === 1).length,
    gpc: sent.filter((s) => s.gpc === true).length,
    purposes: {
      necessary: sent.length,
      analytics: sent.filter((s) => s.choices.analytics).length,
      marketing: sent.filter((s) => s.choices.marketing).length,
    },
    actions: Object.fromEntries(ACTIONS.map((action) => [action, sent.filter((s) => s.action === action).length])),
    jurisdictions: Object.fromEntries(
      [...new Set(sent.flatMap((s) => (s.jurisdiction ? [s.jurisdiction] : [])))].sort().map((code) => [code, sent.filter((s) => s.jurisdiction === code).length]),
    ),
    platforms: Object.fromEntries(
      [...new Set(sent.map((s) => s.platform ?? 'unknown'))].sort().map((platform) => [platform, sent.filter((s) => (s.platform ?? 'unknown') === platform).length]),
    ),
  };
}

const zero = {
  receipts: 0,
  acceptedAll: 0,
  rejectedAll: 0,
  customised: 0,
  gpc: 0,
  purposes: {},
  actions: { accept_all: 0, reject_all: 0, custom: 0, opt_out: 0, gpc: 0 },
  jurisdictions: {},
  platforms: {},
};

/** Posts a fixed mix of decisions on three UTC days (two in one week, one the next week). */
async function postMix(s: Awaited<ReturnType<typeof setup>>) {
  // With actions and jurisdictions on some receipts (issue 16), none on others.
  const mix: [Sent['choices'], Omit<Sent, 'day' | 'versionId' | 'choices'>][] = [
    // And (issue 45) from web, from apps on two platforms, and without a source.
    [{ analytics: true, marketing: true }, { gpc: true, action: 'accept_all', jurisdiction: 'DE', platform: 'web' }],
    [{ analytics: false, marketing: false }, { action: 'reject_all', jurisdiction: 'US-CA', platform: 'ios' }],
    [{ analytics: true, marketing: false }, { gpc: false, platform: 'android' }],
    [{ analytics: false, marketing: true }, { gpc: true, action: 'gpc', jurisdiction: 'US-CA' }],
  ];
  for (const [at, count] of [['2026-03-02T00:00:00.000Z', 4], ['2026-03-03T23:59:59.999Z', 3], ['2026-03-10T12:00:00.000Z', 2]] as const) {
    setClock(at);
    for (let i = 0; i < count; i++) await s.record(mix[i]![0], mix[i]![1]);
  }
}

describe('GET /receipts/stats', () => {
  it('counts receipts posted through the SDK route per UTC day, with empty days as zeros', async () => {
    const s = await setup();
    await postMix(s);
    const res = await s.stats('?from=2026-03-01&to=2026-03-11');
    expect(res.status, res.text).toBe(200);
    const days = Array.from({ length: 11 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`);
    expect(res.body).toEqual({
      buckets: days.map((day) => {
        const ofDay = s.sent.filter((x) => x.day === day);
        return { start: day, ...(ofDay.length ? expectedCounts(ofDay) : zero) };
      }),
      totals: expectedCounts(s.sent),
    });
    // Sanity of the independent count: 9 receipts, 3 with every optional purpose granted.
    expect(res.body.totals).toMatchObject({ receipts: 9, acceptedAll: 3, rejectedAll: 3, customised: 3, gpc: 4 });
    expect(res.body.totals.actions).toEqual({ accept_all: 3, reject_all: 3, custom: 0, opt_out: 0, gpc: 1 });
    expect(res.body.totals.jurisdictions).toEqual({ DE: 3, 'US-CA': 4 });
    expect(res.body.totals.platforms).toEqual({ android: 2, ios: 3, unknown: 1, web: 3 });
  });

  it('splits decisions by platform (issue 45): each platform’s counts alone, unknown for receipts without a source', async () => {
    const s = await setup();
    await postMix(s);
    for (const platform of ['web', 'ios', 'android', 'other', 'unknown'] as const) {
      const res = await s.stats(`?from=2026-03-01&to=2026-03-11&platform=${platform}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.totals, platform).toEqual(
        (() => {
          const of = s.sent.filter((x) => (x.platform ?? 'unknown') === platform);
          return of.length ? expectedCounts(of) : zero;
        })(),
      );
    }
    expect((await s.stats('?from=2026-03-01&to=2026-03-11&platform=ios')).body.totals).toMatchObject({ receipts: 3, rejectedAll: 3 });
    const bad = await s.stats('?platform=windows');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'validation_failed', details: [{ path: ['platform'] }] });
    const graph = await gql(
      `query($p: ID!) { consentStats(projectId: $p, from: "2026-03-01", to: "2026-03-11", platform: "android") { totals { receipts customised platforms } } }`,
      { p: s.project.id },
      s.viewer.token,
    );
    expect(graph.body.data.consentStats.totals).toEqual({ receipts: 2, customised: 2, platforms: { android: 2 } });
  });

  it('buckets by ISO week (from Monday) and by month, in UTC', async () => {
    const s = await setup();
    await postMix(s);
    const weeks = await s.stats('?from=2026-03-01&to=2026-03-15&interval=week');
    expect(weeks.status).toBe(200);
    expect(weeks.body.buckets).toEqual([
      { start: '2026-02-23', ...zero }, // the week of Sunday 1 March
      { start: '2026-03-02', ...expectedCounts(s.sent.filter((x) => x.day < '2026-03-09')) },
      { start: '2026-03-09', ...expectedCounts(s.sent.filter((x) => x.day >= '2026-03-09')) },
    ]);
    const months = await s.stats('?from=2026-02-01&to=2026-03-31&interval=month');
    expect(months.body.buckets).toEqual([
      { start: '2026-02-01', ...zero },
      { start: '2026-03-01', ...expectedCounts(s.sent) },
    ]);
    // `from` and `to` cut the range by day even inside a bucket.
    const cut = await s.stats('?from=2026-03-03&to=2026-03-09&interval=week');
    expect(cut.body.totals).toEqual(expectedCounts(s.sent.filter((x) => x.day === '2026-03-03')));
  });

  it('filters by version and defaults to the 30 days up to today by day', async () => {
    const s = await setup();
    setClock('2026-03-20T08:00:00.000Z');
    const second = await publishVersion(server, s.owner, s.project.id);
    await s.record({ analytics: true, marketing: true });
    await s.record({ analytics: false, marketing: false }, { v: second });
    await s.record({ analytics: true, marketing: false }, { v: second });
    const only = await s.stats(`?from=2026-03-20&to=2026-03-20&versionId=${second.id}`);
    expect(only.status).toBe(200);
    expect(only.body.totals).toEqual(expectedCounts(s.sent.filter((x) => x.versionId === second.id)));

    // Defaults use the real date (the rollup's days are the receipts' server clock; this test's clock is fixed).
    const today = new Date().toISOString().slice(0, 10);
    const byDefault = await s.stats();
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.buckets).toHaveLength(30);
    expect(byDefault.body.buckets[29].start).toBe(today);
  });

  it('counts each receipt of a concurrent burst exactly once (many group-commit batches)', async () => {
    const s = await setup();
    setClock('2026-03-05T09:00:00.000Z');
    const choices = (i: number) => ({ analytics: i % 3 === 0, marketing: i % 5 === 0 });
    const extras = (i: number) => ({
      ...(i % 6 < 5 && { action: ACTIONS[i % 6]! }),
      ...(i % 4 < 3 && { jurisdiction: ['DE', 'US-CA', 'FR'][i % 4]! }),
    });
    await Promise.all(Array.from({ length: 300 }, (_, i) => s.record(choices(i), { gpc: i % 7 === 0, ...extras(i) })));
    const res = await s.stats('?from=2026-03-05&to=2026-03-05');
    expect(res.status).toBe(200);
    expect(res.body.totals).toEqual(expectedCounts(s.sent));
    // Rows in the rollup match the receipts table itself.
    const [row] = await server.services.db.query<{ n: string | number }>('SELECT count(*) AS n FROM receipts WHERE project_id = $1', [s.project.id]);
    expect(Number(row!.n)).toBe(300);
  });

  it('counts a receipt if and only if it is stored: a failing receipt is not counted, its batch neighbours once each', async () => {
    // Checked broken on purpose (scratch edit, reverted: the rollup upsert in its own transaction before the
    // receipts'): the refused receipts are counted too and totals.receipts is 24, not 20.
    const s = await setup();
    setClock('2026-03-06T09:00:00.000Z');
    const db = server.services.db;
    const fn = `fail_stats_${Date.now().toString(36)}`;
    await db.query(`
      CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.installation_id LIKE 'refused-%' THEN RAISE EXCEPTION 'injected failure'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON receipts FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          server.request('POST', '/api/sdk/v1/consent', {
            token: s.key.secret,
            body: {
              versionId: s.version.id,
              consentHash: s.version.consentHash,
              choices: { analytics: true, marketing: i % 2 === 0 },
              installationId: `${i % 6 === 3 ? 'refused' : 'stored'}-${i}-installation`,
            },
          }),
        ),
      );
      const stored = results.filter((res) => res.status === 201).length;
      expect(stored).toBe(20);
      const res = await s.stats('?from=2026-03-06&to=2026-03-06');
      const [row] = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM receipts WHERE project_id = $1', [s.project.id]);
      expect(Number(row!.n)).toBe(20);
      expect(res.body.totals.receipts).toBe(20);
      expect(res.body.totals.purposes).toEqual({ analytics: 20, marketing: 12, necessary: 20 });
    } finally {
      await db.query(`DROP TRIGGER ${fn} ON receipts`);
      await db.query(`DROP FUNCTION ${fn}()`);
    }
  });

  it('answers a Viewer, 404 to a non-member, 401 without a session', async () => {
    const s = await setup();
    expect((await s.stats('', s.viewer.token)).status).toBe(200);
    const outsider = await s.stats('', s.outsider.token);
    expect(outsider.status).toBe(404);
    expect((await server.request('GET', `/api/platform/projects/${s.project.id}/receipts/stats`)).status).toBe(401);
  });

  it('refuses bad input with 400 validation_failed', async () => {
    const s = await setup();
    const other = await setup();
    const bad = [
      '?interval=hour',
      '?from=2026-03-10&to=2026-03-01',
      '?from=2020-01-01&to=2026-01-01',
      '?from=2026-02-30',
      '?from=yesterday',
      '?to=2026-03-01T00:00:00Z',
      `?versionId=${other.version.id}`,
      '?versionId=no-such-version',
    ];
    for (const query of bad) {
      const res = await s.stats(query);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
    }
    // Exactly five years is fine.
    expect((await s.stats('?from=2021-01-01&to=2025-12-31&interval=month')).status).toBe(200);
  });
});

const COUNT_FIELDS = 'receipts acceptedAll rejectedAll customised gpc purposes actions { accept_all reject_all custom opt_out gpc } jurisdictions platforms';
const STATS_FIELDS = `buckets { start ${COUNT_FIELDS} } totals { ${COUNT_FIELDS} }`;

describe('GraphQL consentStats', () => {
  it('Query.consentStats and Project.consentStats give the REST answer', async () => {
    const s = await setup();
    await postMix(s);
    const range = { from: '2026-03-01', to: '2026-03-15', interval: 'week' };
    const rest = await s.stats('?from=2026-03-01&to=2026-03-15&interval=week');
    const root = await gql(
      `query($p: ID!, $from: String, $to: String, $interval: String) { consentStats(projectId: $p, from: $from, to: $to, interval: $interval) { ${STATS_FIELDS} } }`,
      { p: s.project.id, ...range },
      s.viewer.token,
    );
    expect(root.body.errors).toBeUndefined();
    expect(root.body.data.consentStats).toEqual(rest.body);
    const nested = await gql(
      `query($o: ID!, $from: String, $to: String, $interval: String) { organization(id: $o) { projects { id consentStats(from: $from, to: $to, interval: $interval) { from to interval ${STATS_FIELDS} } } } }`,
      { o: s.org.id, ...range },
      s.viewer.token,
    );
    expect(nested.body.errors).toBeUndefined();
    expect(nested.body.data.organization.projects[0].consentStats).toEqual({ from: '2026-03-01', to: '2026-03-15', interval: 'week', ...rest.body });
  });

  it('bad input is a GraphQL error with code validation_failed; an outsider is not found', async () => {
    const s = await setup();
    const bad = await gql(`query($p: ID!) { consentStats(projectId: $p, interval: "year") { totals { receipts } } }`, { p: s.project.id }, s.viewer.token);
    expect(bad.status).toBe(200);
    expect(bad.body.errors[0].extensions.code).toBe('validation_failed');
    const nested = await gql(
      `query($o: ID!) { organization(id: $o) { projects { consentStats(from: "2026-03-05", to: "2026-03-01") { totals { receipts } } } } }`,
      { o: s.org.id },
      s.viewer.token,
    );
    expect(nested.body.errors[0].extensions.code).toBe('validation_failed');
    const outsider = await gql(`query($p: ID!) { consentStats(projectId: $p) { totals { receipts } } }`, { p: s.project.id }, s.outsider.token);
    expect(outsider.body.errors[0].extensions.code).toBe('not_found');
  });
});

describe('backfill migration', () => {
  it('counts receipts that existed before the rollup exactly as the writer would', async () => {
    const s = await setup();
    await postMix(s);
    const db = server.services.db;
    const before = await s.stats('?from=2026-03-01&to=2026-03-15');
    // Receipts written straight into the table (as before this migration), rollup emptied, then the backfill statement.
    const extra: Sent[] = [
      { day: '2026-03-04', versionId: s.version.id, choices: { analytics: true, marketing: true }, gpc: true, action: 'accept_all', jurisdiction: 'FR' },
      { day: '2026-03-04', versionId: s.version.id, choices: { analytics: false, marketing: true }, action: 'custom' },
      { day: '2026-03-12', versionId: s.version.id, choices: { analytics: false, marketing: false }, gpc: false, jurisdiction: 'US-CA' },
    ];
    for (const [i, x] of extra.entries()) {
      await db.query(
        `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at, gpc, action, jurisdiction)
         VALUES (receipt_id($7::timestamptz), $1, $2, $3, $4::jsonb, $5, $6, $7::timestamptz, $8, $9, $10)`,
        [
          // The id: a uuidv7 of created_at, as every receipt's (receipt_id(), the partitioning migration).
          s.project.id,
          x.versionId,
          s.version.consentHash,
          JSON.stringify({ necessary: true, ...x.choices }),
          `raw-installation-${i}`,
          s.key.id,
          `${x.day}T23:30:00+00:00`,
          x.gpc ?? null,
          x.action ?? null,
          x.jurisdiction ?? null,
        ],
      );
    }
    await db.query('DELETE FROM consent_stats_daily');
    // The rollup's backfill, then the one of actions and jurisdictions (issue 16), as the migrations run them.
    for (const name of ['20261128000000_consent_stats', '20261130200000_consent_stats_actions']) {
      const migration = readFileSync(join(import.meta.dirname, `../prisma/migrations/${name}/migration.sql`), 'utf8');
      // The key has the platform since 20261228100000 (issue 45): backfilled rows are receipts without a source ('').
      await db.query(migration.slice(migration.indexOf('-- Backfill')).replaceAll('(project_id, day, version_id, shard)', "(project_id, day, version_id, platform, shard)"));
    }
    const after = await s.stats('?from=2026-03-01&to=2026-03-15');
    // Those backfills predate sources (issue 45): they count every receipt under the unknown platform.
    const all = [...s.sent, ...extra].map(({ platform: _platform, ...x }) => x);
    expect(after.body.totals).toEqual(expectedCounts(all));
    expect(after.body.buckets.map((b: { start: string; receipts: number }) => b.receipts)).toEqual(
      before.body.buckets.map((b: { start: string }) => all.filter((x) => x.day === b.start).length),
    );
    for (const bucket of after.body.buckets) {
      const ofDay = all.filter((x) => x.day === bucket.start);
      expect(bucket).toEqual({ start: bucket.start, ...(ofDay.length ? expectedCounts(ofDay) : zero) });
    }
  });
});
