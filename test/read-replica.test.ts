// The read replica (DATABASE_REPLICA_URL, docs/scaling.md "Read replicas") against a REAL streaming standby:
// a primary and a `pg_basebackup -R` copy of it made by this file (test/helpers/standby.ts). Proof of where a
// read ran: with the standby's replay paused, a receipt goes to the primary only; an answer without it came
// from the standby, an answer with it from the primary. Runs on every PostgreSQL pass (TEST_DATABASE_URL);
// the embedded pass has no standby to read from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { sdkTeam } from './helpers/sdk.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';
import { startStandbyPair, type StandbyPair } from './helpers/standby.js';

const METRICS_TOKEN = 'replica-metrics-token-0123456789';

/** Polls until `condition` holds (the replica is checked once a second); the test's own timeout bounds it. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('read replica configuration', () => {
  it('is off by default, bounds the lag at 10 s, and needs DATABASE_URL', () => {
    expect(loadConfig({})).toMatchObject({ databaseReplicaUrl: undefined, databaseReplicaMaxLagMs: 10_000 });
    const config = loadConfig({ DATABASE_URL: 'postgres://db/app', DATABASE_REPLICA_URL: 'postgres://standby/app', DATABASE_REPLICA_MAX_LAG_MS: '2500' });
    expect(config).toMatchObject({ databaseReplicaUrl: 'postgres://standby/app', databaseReplicaMaxLagMs: 2500 });
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgres://standby/app' })).toThrow(/DATABASE_REPLICA_URL needs DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/app', DATABASE_REPLICA_MAX_LAG_MS: '0' })).toThrow(/DATABASE_REPLICA_MAX_LAG_MS/);
  });
});

describe.skipIf(!onPostgres)('read replica on a streaming standby', () => {
  let pair: StandbyPair;
  let server: TestServer;
  let clock: Date | undefined; // undefined: the real clock
  const logLines: string[] = [];
  const logged = (message: string) => logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === message);

  beforeAll(async () => {
    pair = await startStandbyPair();
    await pair.primary('CREATE DATABASE app');
    server = await startTestServer(
      {
        databaseUrl: pair.primaryUrl('app'),
        databaseReplicaUrl: pair.standbyUrl('app'),
        databaseReplicaMaxLagMs: 60_000,
        metricsToken: METRICS_TOKEN,
        logLevel: 'info',
      },
      { now: () => clock ?? new Date(), logDestination: { write: (line: string) => void logLines.push(line) } },
    );
    await until(() => server.services.replica!.serves());
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    pair?.close();
  });

  const replica = () => server.services.replica!;
  /** Until a check found the standby holding everything the primary had committed by now. */
  const caughtUp = async () => {
    const now = Date.now();
    await until(() => replica().serves() && (replica().completeAt?.getTime() ?? 0) > now);
  };
  const metric = async (name: string) => {
    const res = await server.request('GET', '/metrics', { token: METRICS_TOKEN });
    return res.text.split('\n').filter((line) => line.startsWith(name));
  };

  it('serves lists, exports and stats from the standby, falls back when it lags past the bound, and keeps /decision on the primary', async () => {
    const t = await sdkTeam(server);
    const base = `/api/platform/projects/${t.project.id}/receipts`;
    const past = new Date(Date.now() - 2 * 3600_000);
    const post = async (installationId: string, at: Date, choices: Record<string, boolean>) => {
      clock = at;
      const res = await server.request('POST', '/api/sdk/v1/consent', { token: t.key.secret, body: { ...t.body(installationId), choices } });
      clock = undefined;
      expect(res.status, res.text).toBe(201);
    };
    for (const n of [1, 2, 3]) await post(`installation-${n}`, past, { analytics: true });
    await caughtUp();

    // The standby stops replaying: the next receipt (recorded "an hour and 59 minutes ago") is on the primary only.
    await pair.standby('SELECT pg_wal_replay_pause()');
    await post('installation-1', new Date(past.getTime() + 60_000), { analytics: false });
    await until(() => replica().lagMs !== null && replica().lagMs! > 0);
    expect(replica().serves()).toBe(true); // behind, but within the bound (60 s)

    const to = new Date(Date.now() - 3600_000).toISOString();
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const stats = `${base}/stats?from=${day(past)}&to=${day(new Date())}`;
    const read = async () => {
      const list = await server.request('GET', `${base}?to=${to}`, { token: t.viewer.token });
      const exported = await server.request('GET', `${base}/export?format=csv&to=${to}`, { token: t.viewer.token });
      const counted = await server.request('GET', stats, { token: t.viewer.token });
      for (const res of [list, exported, counted]) expect(res.status, res.text).toBe(200);
      return { list: list.body.receipts.length, exported: exported.text.trim().split('\n').length - 1, stats: counted.body.totals.receipts };
    };
    expect(await read()).toEqual({ list: 3, exported: 3, stats: 3 }); // the standby's answers

    // A page or export up to now comes from the primary's side of the horizon: nothing recorded is missed.
    const everything = await server.request('GET', `${base}/export?format=csv`, { token: t.viewer.token });
    expect(everything.text.trim().split('\n')).toHaveLength(1 + 4);
    const firstPage = await server.request('GET', base, { token: t.viewer.token });
    expect(firstPage.body.receipts).toHaveLength(4);
    // The SDK's /decision right after a POST must see it: the primary's latest decision, not the standby's.
    const decision = await server.request('GET', '/api/sdk/v2/decision', {
      token: t.key.secret,
      headers: { 'X-Consent-Installation': 'installation-1' },
    });
    expect(decision.status, decision.text).toBe(200);
    expect(decision.body.decision.choices.analytics).toBe(false);

    // Past the bound: every read is the primary's, and it is said once, not per request.
    server.services.config.databaseReplicaMaxLagMs = 500;
    await until(() => replica().reason === 'lagging');
    expect(await read()).toEqual({ list: 4, exported: 4, stats: 4 });
    expect(await read()).toEqual({ list: 4, exported: 4, stats: 4 });
    expect(logged('read replica not used: reads go to the primary').filter((line) => line.reason === 'lagging')).toHaveLength(1);
    expect(await metric('db_replica_in_use')).toEqual(['db_replica_in_use 0']);
    expect(await metric('db_replica_fallbacks_total')).toContain('db_replica_fallbacks_total{reason="lagging"} 1');

    // Replaying again: back in use (logged once), with the receipt it had missed.
    await pair.standby('SELECT pg_wal_replay_resume()');
    server.services.config.databaseReplicaMaxLagMs = 60_000;
    await caughtUp();
    const before = replica().reads.replica;
    expect(await read()).toEqual({ list: 4, exported: 4, stats: 4 });
    expect(replica().reads.replica).toBe(before + 3);
    expect(logged('read replica in use').length).toBeGreaterThanOrEqual(2); // at start, and now
    expect(await metric('db_replica_in_use')).toEqual(['db_replica_in_use 1']);
  }, 120_000);

  it('answers from the primary when the standby goes away, and uses it again when it is back', async () => {
    const t = await sdkTeam(server);
    const base = `/api/platform/projects/${t.project.id}/receipts`;
    clock = new Date(Date.now() - 2 * 3600_000);
    for (const n of [1, 2]) expect((await t.post(`gone-away-${n}`)).status).toBe(201);
    clock = undefined;
    const to = new Date(Date.now() - 3600_000).toISOString();
    const read = async () => {
      const list = await server.request('GET', `${base}?to=${to}&limit=1`, { token: t.viewer.token });
      const next = await server.request('GET', `${base}?cursor=${list.body.nextCursor}`, { token: t.viewer.token });
      const exported = await server.request('GET', `${base}/export?format=csv&to=${to}`, { token: t.viewer.token });
      const counted = await server.request('GET', `${base}/stats`, { token: t.viewer.token });
      for (const res of [list, next, exported, counted]) expect(res.status, res.text).toBe(200);
      return { pages: list.body.receipts.length + next.body.receipts.length, exported: exported.text.trim().split('\n').length - 1 };
    };
    await caughtUp();

    const fallbacks = () => (replica().fallbacks.failed_query ?? 0) + (replica().fallbacks.unreachable ?? 0);
    const before = fallbacks();
    pair.stopStandby();
    // At once, before any check noticed: the reads fail on the standby and are answered by the primary.
    expect(await read()).toEqual({ pages: 2, exported: 2 });
    expect(fallbacks()).toBeGreaterThan(before);
    await until(() => replica().reason === 'unreachable');
    expect(await read()).toEqual({ pages: 2, exported: 2 });
    expect(logged('read replica not used: reads go to the primary').filter((line) => line.reason === 'unreachable')).toHaveLength(1);

    pair.startStandby();
    await until(() => replica().serves());
    expect(await read()).toEqual({ pages: 2, exported: 2 });
  }, 120_000);
});
