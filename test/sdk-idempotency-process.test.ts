import { afterEach, describe, expect, it } from 'vitest';
import { operator, organization, project } from './helpers/fixtures.js';
import { putDraft, publish } from './helpers/consent.js';
import { createKey } from './helpers/sdk.js';
import { onPostgres, send, type TestServer } from './helpers/server.js';
import { connectSql, killableService, sendUntilKilled } from './helpers/service-process.js';

// Issue 45, under fire: an app sends each decision with an Idempotency-Key and sends it again until it hears an
// answer. The service is killed with SIGKILL while receipts are in flight (some committed and answered, some
// committed and never answered, some never committed); a new instance on the same database gets every send
// again. Exactly one receipt per key must exist afterwards, sealed once, one webhook event, counted once, and
// every answer heard before the kill is the answer the retry gets.

describe('a service killed mid-send, the sends retried against a new instance', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stores exactly one receipt per Idempotency-Key and replays the answers heard before the kill', async () => {
    const { target, start } = await killableService('idempotency-', cleanups);
    let service = await start();
    const client = { request: (method: string, path: string, options?: object) => send(service.url, method, path, options) } as TestServer;
    const owner = await operator(client);
    const org = await organization(client, owner);
    const proj = await project(client, owner, org.id);
    await putDraft(client, owner, proj.id);
    const version = await publish(client, owner, proj.id);
    const key = await createKey(client, owner.token, proj.id);
    const SENDS = 30;
    const sends = Array.from({ length: SENDS }, (_, i) => ({
      key: crypto.randomUUID(),
      body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: i % 2 === 0 }, installationId: `inst-kill-${String(i).padStart(4, '0')}` },
    }));
    const post = (i: number) =>
      client.request('POST', '/api/sdk/v1/consent', { token: key.secret, body: sends[i]!.body, headers: { 'Idempotency-Key': sends[i]!.key } });

    // Every receipt statement takes about a second, so the kill lands while statements are open; a webhook, so
    // each stored receipt also queues one event.
    const sql = await connectSql(target);
    cleanups.push(() => sql.end().catch(() => {}));
    await sql.query(`CREATE FUNCTION slow_receipts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$`);
    await sql.query('CREATE TRIGGER slow_receipts BEFORE INSERT ON receipts FOR EACH STATEMENT EXECUTE FUNCTION slow_receipts()');
    await sql.query(`INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/x', true, 'whsec_t', 'whsec_t')`, [
      proj.id,
    ]);
    if (!onPostgres) await sql.end(); // the embedded database has one session: give it back to the service

    // Sends keep arriving; the process is killed the moment the first one is answered.
    const heard = new Map([...(await sendUntilKilled(service, sends.length, post))].map(([i, res]) => [i, res.text]));
    expect(await service.exited).toBeNull();
    expect(heard.size).toBeGreaterThan(0);

    // A new instance; the app sends everything it has not heard back about, and (lost answers) what it has.
    service = await start();
    const check = await connectSql(target);
    await check.query('DROP TRIGGER slow_receipts ON receipts');
    const [{ before }] = (await check.query<{ before: number }>('SELECT count(*)::int AS before FROM receipts WHERE project_id = $1', [proj.id])).rows as [
      { before: number },
    ];
    if (!onPostgres) await check.end();
    else cleanups.push(() => check.end().catch(() => {}));
    // Something was committed whose answer nobody heard, or at least what was heard: the retries must not add to either.
    expect(before).toBeGreaterThanOrEqual(heard.size);

    const retries = await Promise.all(sends.map((_, i) => post(i)));
    expect(retries.map((r) => r.status)).toEqual(sends.map(() => 201));
    for (const [i, text] of heard) expect(retries[i]!.text, `send ${i}`).toBe(text);
    // Sent a third time: the same answers again.
    const third = await Promise.all(sends.map((_, i) => post(i)));
    expect(third.map((r) => r.text)).toEqual(retries.map((r) => r.text));

    const sqlAfter = await connectSql(target);
    cleanups.push(() => sqlAfter.end().catch(() => {}));
    const [counted] = (
      await sqlAfter.query<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM receipts WHERE project_id = $1) AS receipts,
                (SELECT count(DISTINCT installation_id)::int FROM receipts WHERE project_id = $1) AS installations,
                (SELECT count(*)::int FROM sdk_idempotency_keys WHERE project_id = $1) AS keys,
                (SELECT COALESCE(sum(receipts), 0)::int FROM consent_stats_daily WHERE project_id = $1) AS counted,
                (SELECT count(*)::int FROM webhook_events WHERE project_id = $1 AND type = 'consent.updated') AS events,
                ((SELECT COALESCE(sum(count), 0) FROM ledger_pending_batches WHERE project_id = $1)
                 + (SELECT COALESCE(sum(count), 0) FROM ledger_checkpoints WHERE project_id = $1))::int AS sealed`,
        [proj.id],
      )
    ).rows;
    expect(counted).toEqual({ receipts: SENDS, installations: SENDS, keys: SENDS, counted: SENDS, events: SENDS, sealed: SENDS });
    // Each answer names the receipt stored for its installation.
    const stored = await sqlAfter.query<{ id: string; installation_id: string }>('SELECT id, installation_id FROM receipts WHERE project_id = $1', [proj.id]);
    const idOf = new Map(stored.rows.map((r) => [r.installation_id, r.id]));
    expect(retries.map((r) => JSON.parse(r.text).id)).toEqual(sends.map((s) => idOf.get(s.body.installationId)));
  }, 180_000); // two service start-ups on a loaded machine
});
