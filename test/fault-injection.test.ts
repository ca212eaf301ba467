import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { operator, organization, project } from './helpers/fixtures.js';
import { putDraft, publish } from './helpers/consent.js';
import { createKey, sdkTeam } from './helpers/sdk.js';
import { onPostgres, send, startTestServer, type TestServer } from './helpers/server.js';
import { connectSql, killableService, sendUntilKilled } from './helpers/service-process.js';

// The receipt promise (decisions.md): a 201 means the receipt and its consent.updated outbox event are
// committed, together. These tests make chosen statements fail with triggers installed in raw SQL and check
// what a visitor and the database see. They run on both databases.
//
// Checked broken on purpose (scratch edit of src/sdk/receipt-writer.ts, reverted): with the acknowledgement
// moved before the commit (`for (const p of batch) p.done()` ahead of `await this.store(...)` in `flush`),
// every test here fails on PostgreSQL, and all but "commits with its receipt" on the embedded database (one
// query at a time: the rows are there before the check reads): failing receipts are answered 201 with no
// row behind them, and the crash test finds answered receipts missing after the restart.

const MARKER = 'fault-injected';

/** A BEFORE INSERT trigger on `table` raising for rows whose `column` (text) contains the marker. */
async function failInsertsOn(server: TestServer, table: string, column: string) {
  const fn = `fail_${table}_${Date.now().toString(36)}`;
  await server.services.db.query(`
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.${column}::text LIKE '%${MARKER}%' THEN RAISE EXCEPTION 'injected failure on ${table}'; END IF;
      RETURN NEW;
    END $$`);
  await server.services.db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  return async () => {
    await server.services.db.query(`DROP TRIGGER ${fn} ON ${table}`);
    await server.services.db.query(`DROP FUNCTION ${fn}()`);
  };
}

async function sdkProject(target: TestServer, options: { webhook?: boolean } = {}) {
  const site = await sdkTeam(target);
  if (options.webhook) {
    await target.services.db.query(
      `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/x', true, 'whsec_test', 'whsec_te')`,
      [site.project.id],
    );
  }
  return site;
}

const count = async (server: TestServer, sql: string, params: unknown[]) =>
  Number((await server.services.db.query<{ n: number }>(`SELECT count(*)::int AS n ${sql}`, params))[0]!.n);

/** The contract's error shape (the message is the database's only outside production: rest/errors.ts). */
function expectServerError(res: { status: number; body: any }) {
  expect(res.status).toBe(500);
  expect(res.body).toEqual({ error: expect.any(String), code: 'internal' });
}

describe('a receipt whose transaction fails', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('is answered with an error in the contract shape, never 201, and leaves no row', async () => {
    const s = await sdkProject(server);
    const undo = await failInsertsOn(server, 'receipts', 'installation_id');
    try {
      const res = await s.post(`inst-${MARKER}-1`);
      expectServerError(res);
      expect(await count(server, 'FROM receipts WHERE project_id = $1', [s.project.id])).toBe(0);
      // The failure was the statement's, not the service's: the next receipt is stored.
      expect((await s.post('inst-healthy-0001')).status).toBe(201);
      expect(await count(server, 'FROM receipts WHERE project_id = $1', [s.project.id])).toBe(1);
    } finally {
      await undo();
    }
  });

  it('fails alone: receipts sharing its group commit are stored and answered 201, it is not', async () => {
    const s = await sdkProject(server, { webhook: true });
    const undo = await failInsertsOn(server, 'receipts', 'installation_id');
    try {
      const ids = Array.from({ length: 24 }, (_, i) => (i % 6 === 3 ? `inst-${MARKER}-${i}` : `inst-healthy-${i}`));
      const results = await Promise.all(ids.map((id) => s.post(id)));
      results.forEach((res, i) => {
        if (ids[i]!.includes(MARKER)) expectServerError(res);
        else expect(res.status, res.text).toBe(201);
      });
      const stored = await server.services.db.query<{ installation_id: string }>('SELECT installation_id FROM receipts WHERE project_id = $1', [s.project.id]);
      expect(stored.map((r) => r.installation_id).sort()).toEqual(ids.filter((id) => !id.includes(MARKER)).sort());
      // Each stored receipt has its event, and no failed one has.
      const events = await server.services.db.query<{ receipt_id: string }>(
        `SELECT payload->'data'->>'receiptId' AS receipt_id FROM webhook_events WHERE project_id = $1`,
        [s.project.id],
      );
      expect(events.map((e) => e.receipt_id).sort()).toEqual(results.filter((r) => r.status === 201).map((r) => r.body.id).sort());
    } finally {
      await undo();
    }
  });
});

describe('the consent.updated outbox event', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('rolls back with its receipt: a failing outbox insert leaves neither row and no 201', async () => {
    const s = await sdkProject(server, { webhook: true });
    const undo = await failInsertsOn(server, 'webhook_events', 'payload');
    try {
      expectServerError(await s.post(`inst-${MARKER}-outbox`));
      expect(await count(server, 'FROM receipts WHERE project_id = $1', [s.project.id])).toBe(0);
      expect(await count(server, 'FROM webhook_events WHERE project_id = $1', [s.project.id])).toBe(0);
    } finally {
      await undo();
    }
  });

  it('commits with its receipt: a 201 has both rows', async () => {
    const s = await sdkProject(server, { webhook: true });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.post(`inst-both-${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const rows = await server.services.db.query<{ id: string }>(
      `SELECT r.id FROM receipts r JOIN webhook_events e ON e.payload->'data'->>'receiptId' = r.id WHERE r.project_id = $1`,
      [s.project.id],
    );
    expect(rows.map((r) => r.id).sort()).toEqual(results.map((r) => r.body.id).sort());
  });
});

describe('a service process killed between commit and answer', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('loses no receipt it answered 201', async () => {
    const { target, start } = await killableService('fault-', cleanups);
    let service = await start();
    const client = { request: (method: string, path: string, options?: object) => send(service.url, method, path, options) } as TestServer;
    const s = await sdkProjectOver(client);

    // Every receipt insert takes a while (a burn of about a second), so the kill below lands while
    // transactions are open: a receipt answered before its commit would be lost.
    const sql = await connectSql(target);
    cleanups.push(() => sql.end().catch(() => {}));
    await sql.query(`
      CREATE FUNCTION slow_receipts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$`);
    await sql.query('CREATE TRIGGER slow_receipts BEFORE INSERT ON receipts FOR EACH STATEMENT EXECUTE FUNCTION slow_receipts()');
    if (!onPostgres) await sql.end(); // the embedded database has one session: give it back to the service

    // Receipts keep arriving; the process is killed the moment the first one is answered.
    const heard = await sendUntilKilled(service, 40, (i) => s.post(`inst-crash-${String(i).padStart(4, '0')}`));
    const answered = [...heard.values()].map((res) => res.body.id as string);
    expect(await service.exited).toBeNull();
    expect(answered.length).toBeGreaterThan(0);

    service = await start();
    const check = await connectSql(target);
    cleanups.push(() => check.end().catch(() => {}));
    const stored = await check.query<{ id: string }>('SELECT id FROM receipts WHERE id = ANY($1::text[])', [answered]);
    expect(stored.rows.map((r) => r.id).sort()).toEqual([...answered].sort());
    // The analytics rollup commits with its receipts: after the crash it counts exactly the receipts stored,
    // those answered and those committed but never answered, and none of the rolled-back ones.
    const [counted] = (
      await check.query<{ receipts: number; rollup: number; actions: number }>(
        `SELECT (SELECT count(*)::int FROM receipts WHERE project_id = $1) AS receipts,
                (SELECT COALESCE(sum(receipts), 0)::int FROM consent_stats_daily WHERE project_id = $1) AS rollup,
                (SELECT COALESCE(sum(action_custom), 0)::int FROM consent_stats_daily WHERE project_id = $1) AS actions`,
        [s.project.id],
      )
    ).rows;
    expect(counted!.receipts).toBeGreaterThanOrEqual(answered.length);
    expect(counted).toEqual({ receipts: counted!.receipts, rollup: counted!.receipts, actions: counted!.receipts });
  }, 180_000); // two service start-ups on a loaded machine
});

/** sdkProject for a service in another process (no in-process database handle: no webhook row). */
async function sdkProjectOver(client: TestServer) {
  const owner = await operator(client);
  const org = await organization(client, owner);
  const proj = await project(client, owner, org.id);
  await putDraft(client, owner, proj.id);
  const version = await publish(client, owner, proj.id);
  const key = await createKey(client, owner.token, proj.id);
  const post = (installationId: string) =>
    client.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId, action: 'custom' },
    });
  return { project: proj, version, key, post };
}
