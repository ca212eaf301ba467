// Issue 45: the consent POST's Idempotency-Key (docs/sdk-api.md, "Idempotency-Key"). A repeat answers the first
// 201 byte for byte and leaves one receipt: stored, queued for the ledger, one webhook event, counted once.
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writerReceipt } from './helpers/receipts.js';
import { IdempotencyKeyTaken, purgeExpiredIdempotencyKeys, requestHashOf } from '../src/sdk/idempotency.js';
import { receiptWriter, type NewReceipt } from '../src/sdk/receipt-writer.js';
import { sdkTeam } from './helpers/sdk.js';
import { onPostgres, sealingByTest, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(sealingByTest());
});
afterAll(() => server?.close());

async function setup(target = server) {
  const site = await sdkTeam(target);
  // An enabled webhook, so each stored receipt also writes one consent.updated event.
  await target.services.db.query(
    `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/x', true, 'whsec_test', 'whsec_te')`,
    [site.project.id],
  );
  const post = (body: object, key?: string, via = target) =>
    via.request('POST', '/api/sdk/v1/consent', { token: site.key.secret, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
  return { ...site, post };
}

/** What one receipt leaves behind, per project: receipts, ledger queue entries, webhook events, rollup count. */
async function traces(projectId: string, target = server) {
  const [row] = await target.services.db.query<{ receipts: number; ledger: number; events: number; counted: number }>(
    `SELECT (SELECT count(*)::int FROM receipts WHERE project_id = $1) AS receipts,
            (SELECT COALESCE(sum(count), 0)::int FROM ledger_pending_batches WHERE project_id = $1) AS ledger,
            (SELECT count(*)::int FROM webhook_events WHERE project_id = $1 AND type = 'consent.updated') AS events,
            (SELECT COALESCE(sum(receipts), 0)::int FROM consent_stats_daily WHERE project_id = $1) AS counted`,
    [projectId],
  );
  return row!;
}
const once = { receipts: 1, ledger: 1, events: 1, counted: 1 };

describe('Idempotency-Key on POST /api/sdk/v1/consent', () => {
  it('answers a repeat with the first answer, byte for byte, and keeps one receipt', async () => {
    const s = await setup();
    const body = s.body('inst_idem_repeat_01');
    const first = await s.post(body, 'a7f1c1d2-5b0e-4a4c-9d9e-0c6a1f2b3c4d');
    expect(first.status).toBe(201);
    const again = await s.post(body, 'a7f1c1d2-5b0e-4a4c-9d9e-0c6a1f2b3c4d');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(await traces(s.project.id)).toEqual(once);
    // The same body without a key is a new decision, as before.
    const unkeyed = await s.post(body);
    expect(unkeyed.status).toBe(201);
    expect(unkeyed.body.id).not.toBe(first.body.id);
    expect((await traces(s.project.id)).receipts).toBe(2);
  });

  it('compares the parsed body: key order and a locale’s case do not make another body', async () => {
    const s = await setup();
    const { versionId, consentHash, choices, installationId } = s.body('inst_idem_canon_01');
    const first = await s.post({ versionId, consentHash, choices, installationId, locale: 'de-at' }, 'canon-1');
    const reordered = await s.post({ locale: 'de-AT', installationId, choices, consentHash, versionId }, 'canon-1');
    expect(reordered.status).toBe(201);
    expect(reordered.text).toBe(first.text);
    expect((await traces(s.project.id)).receipts).toBe(1);
  });

  it('hashes the body as RFC 8785 canonical JSON, so keys taken before an upgrade still match their bodies', async () => {
    // The stored hash is the body's canonical JSON (RFC 8785, as the `canonicalize` package writes it) hashed:
    // whatever computes it must give the same bytes, or a retry across a deploy would be refused as another body.
    const body = {
      versionId: 'v_1',
      consentHash: 'sha256:abc',
      choices: { marketing: false, analytics: true, ads_2: true, Zeta: false },
      installationId: 'inst_canonical_1',
      timestamp: '2026-11-28T10:00:00.000+01:00',
      locale: 'de-AT',
      gpc: false,
      source: { sdk: 'react-native', sdkVersion: '1.0.0', platform: 'ios', appVersion: '2.3.1 (456)', appId: 'com.example.shop' },
      tcf: { tcString: 'CQ…', addtlConsent: '2~1.35~dv.' },
      note: 'ä € 😀 "quoted" \\ \n',
    };
    expect(requestHashOf(body)).toBe(createHash('sha256').update(canonicalize(body)!).digest('hex'));
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(requestHashOf(reordered)).toBe(requestHashOf(body));
  });

  it('refuses the same key with another body: 409 idempotency_conflict, nothing stored', async () => {
    const s = await setup();
    const first = await s.post(s.body('inst_idem_conflict_1'), 'key-conflict');
    expect(first.status).toBe(201);
    const other = await s.post({ ...s.body('inst_idem_conflict_1'), choices: { analytics: false } }, 'key-conflict');
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: expect.stringContaining('Idempotency-Key'), code: 'idempotency_conflict' });
    expect(await traces(s.project.id)).toEqual(once);
  });

  it('refuses a malformed key with 400 invalid_idempotency_key and stores nothing', async () => {
    const s = await setup();
    for (const key of ['k'.repeat(256), 'two words', 'caf\u00e9']) {
      const res = await s.post(s.body('inst_idem_badkey_01'), key);
      expect(res.status, key).toBe(400);
      expect(res.body).toEqual({ error: expect.stringContaining('Idempotency-Key'), code: 'invalid_idempotency_key' });
    }
    expect((await traces(s.project.id)).receipts).toBe(0);
    // The bounds themselves are keys: one character and 255.
    expect((await s.post(s.body('inst_idem_badkey_01'), '~')).status).toBe(201);
    expect((await s.post(s.body('inst_idem_badkey_01'), 'k'.repeat(255))).status).toBe(201);
    expect((await traces(s.project.id)).receipts).toBe(2);
  });

  it('keeps keys per project', async () => {
    const a = await setup();
    const b = await setup();
    const ra = await a.post(a.body('inst_idem_project_1'), 'shared-key');
    const rb = await b.post(b.body('inst_idem_project_1'), 'shared-key');
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(await traces(a.project.id)).toEqual(once);
    expect(await traces(b.project.id)).toEqual(once);
  });

  it('stores one receipt for the same key sent many times at once, among other receipts', async () => {
    const s = await setup();
    const body = s.body('inst_idem_concurrent');
    // The same key ten times beside twenty other receipts: they share the writer's batches.
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => s.post(body, 'burst-key')),
      ...Array.from({ length: 20 }, (_, i) => s.post(s.body(`inst_idem_neighbour_${i}`), `neighbour-${i}`)),
    ]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    const keyed = answers.slice(0, 10);
    expect(new Set(keyed.map((a) => a.text)).size).toBe(1);
    expect(await traces(s.project.id)).toEqual({ receipts: 21, ledger: 21, events: 21, counted: 21 });
  });

  it('answers a repeat sent among new receipts, and stores those', async () => {
    const s = await setup();
    const first = await s.post(s.body('inst_idem_batched_1'), 'batched-key');
    // Whether or not the repeat lands in a statement with others (the next test makes sure one does), each is answered.
    const answers = await Promise.all([
      s.post(s.body('inst_idem_batched_1'), 'batched-key'),
      ...Array.from({ length: 15 }, (_, i) => s.post(s.body(`inst_idem_batch_n_${i}`), i % 2 ? `batch-n-${i}` : undefined)),
    ]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    expect(answers[0]!.text).toBe(first.text);
    expect(await traces(s.project.id)).toEqual({ receipts: 16, ledger: 16, events: 16, counted: 16 });
  });

  it('in one batch statement, a taken key fails only its own receipt: the writer answers it with the first and stores the rest', async () => {
    const s = await setup();
    const first = await s.post(s.body('inst_idem_writer_01'), 'writer-key');
    const [version] = await server.services.db.query<{ number: number }>('SELECT number FROM consent_versions WHERE id = $1', [s.version.id]);
    const receipt = (installationId: string, key: string | null): NewReceipt =>
      writerReceipt({
        projectId: s.project.id,
        versionId: s.version.id,
        versionNumber: version!.number,
        consentHash: s.version.consentHash,
        choices: { necessary: true, analytics: true },
        installationId,
        idempotency: key === null ? null : { key, requestHash: requestHashOf({ installationId }) },
        decision: 'acceptedAll',
        apiKeyId: s.key.id,
      });
    // Written in one tick, so the writer puts them in one statement: the taken key fails it, and the writer sorts it out.
    const writer = receiptWriter(server.services);
    const outcomes = await Promise.allSettled([
      writer.write(receipt('inst_idem_writer_02', 'writer-new-1')),
      writer.write(receipt('inst_idem_writer_01', 'writer-key')),
      writer.write(receipt('inst_idem_writer_03', null)),
      writer.write(receipt('inst_idem_writer_04', 'writer-new-2')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const taken = (outcomes[1] as PromiseRejectedResult).reason;
    expect(taken).toBeInstanceOf(IdempotencyKeyTaken);
    expect({ id: taken.taken.receiptId, createdAt: taken.taken.createdAt.toISOString() }).toEqual({ id: first.body.id, createdAt: first.body.createdAt });
    expect(await traces(s.project.id)).toEqual({ receipts: 4, ledger: 4, events: 4, counted: 4 });

    // The same new key twice in one tick: the writer keeps the repeat out of the first's statement, and the next
    // statement answers it with the first's receipt.
    const twice = await Promise.allSettled([
      writer.write(receipt('inst_idem_writer_05', 'writer-twice')),
      writer.write(receipt('inst_idem_writer_05', 'writer-twice')),
      writer.write(receipt('inst_idem_writer_06', null)),
    ]);
    expect(twice.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const [stored] = await server.services.db.query<{ receipt_id: string }>(
      `SELECT receipt_id FROM sdk_idempotency_keys WHERE project_id = $1 AND key = 'writer-twice'`,
      [s.project.id],
    );
    expect((twice[1] as PromiseRejectedResult).reason.taken.receiptId).toBe(stored!.receipt_id);
    expect(await traces(s.project.id)).toEqual({ receipts: 6, ledger: 6, events: 6, counted: 6 });
  });

  it('honours a key for 24 hours; an older one is a new receipt, and the purge deletes it', async () => {
    // A clock the test moves: the instance remembers the keys it took (takenRecently) by the service's clock too.
    let now = new Date();
    const clocked = await startTestServer({}, { now: () => now });
    try {
      const s = await setup(clocked);
      const body = s.body('inst_idem_expired_1');
      const first = await s.post(body, 'old-key');
      now = new Date(now.getTime() + 23 * 3600_000);
      expect((await s.post(body, 'old-key')).text).toBe(first.text);
      now = new Date(now.getTime() + 3600_000 + 1000);
      const later = await s.post(body, 'old-key');
      expect(later.status).toBe(201);
      expect(later.body.id).not.toBe(first.body.id);
      expect((await traces(s.project.id, clocked)).receipts).toBe(2);
      // The new receipt took the key again: a repeat now answers it.
      expect((await s.post(body, 'old-key')).text).toBe(later.text);

      now = new Date(now.getTime() + 25 * 3600_000);
      expect(await purgeExpiredIdempotencyKeys(clocked.services)).toBeGreaterThanOrEqual(1);
      const left = await clocked.services.db.query('SELECT 1 FROM sdk_idempotency_keys WHERE project_id = $1', [s.project.id]);
      expect(left).toHaveLength(0);
    } finally {
      await clocked.close();
    }
  });

  it('forgets nothing after an error: a refused body may be sent again with its key', async () => {
    const s = await setup();
    const refused = await s.post({ ...s.body('inst_idem_error_01'), versionId: 'nope' }, 'after-error');
    expect(refused.status).toBe(400);
    const stored = await s.post(s.body('inst_idem_error_01'), 'after-error');
    expect(stored.status).toBe(201);
    expect(await traces(s.project.id)).toEqual(once);
  });

  it('lets browsers send the header: the preflight allows Idempotency-Key', async () => {
    const res = await fetch(`${server.url}/api/sdk/v1/consent`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key' },
    });
    expect(res.status).toBe(204);
    const allowed = res.headers.get('access-control-allow-headers')!.split(',').map((h) => h.trim().toLowerCase());
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
  });

  it('after an answer lost behind a proxy, the retry gets the first answer and one receipt exists', async () => {
    const s = await setup();
    // A proxy that forwards the request, waits for the service's whole answer (the receipt is committed), then
    // drops the client's connection instead of passing the answer on.
    const upstream = new URL(server.url);
    let committedAnswer = '';
    const proxy: Server = createServer((req, res) => {
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => {
          committedAnswer = text;
          res.socket?.destroy();
        });
      });
      req.pipe(forward);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    try {
      const { port } = proxy.address() as { port: number };
      const body = s.body('inst_idem_dropped_1');
      const headers = { Authorization: `Bearer ${s.key.secret}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'dropped-answer-1' };
      await expect(fetch(`http://127.0.0.1:${port}/api/sdk/v1/consent`, { method: 'POST', headers, body: JSON.stringify(body) })).rejects.toThrow();
      expect(JSON.parse(committedAnswer)).toMatchObject({ ok: true });
      expect(await traces(s.project.id)).toEqual(once);

      const retry = await s.post(body, 'dropped-answer-1');
      expect(retry.status).toBe(201);
      expect(retry.text).toBe(committedAnswer);
      expect(await traces(s.project.id)).toEqual(once);
    } finally {
      await new Promise((done) => proxy.close(done));
    }
  });

  it('GraphQL’s recordConsent takes the key as an argument, with the same answers', async () => {
    const s = await setup();
    const mutation = 'mutation($input: JSON!, $key: String) { recordConsent(input: $input, idempotencyKey: $key) { id createdAt } }';
    const gql = (key: string, input: object) =>
      server.request('POST', '/graphql', { token: s.key.secret, body: { query: mutation, variables: { input, key } } });
    const first = await gql('graphql-key', s.body('inst_idem_graphql_1'));
    const again = await gql('graphql-key', s.body('inst_idem_graphql_1'));
    expect(again.body.data.recordConsent).toEqual(first.body.data.recordConsent);
    const conflict = await gql('graphql-key', { ...s.body('inst_idem_graphql_1'), choices: {} });
    expect(conflict.body.errors[0].extensions.code).toBe('idempotency_conflict');
    expect(await traces(s.project.id)).toEqual(once);
  });
});

describe.runIf(onPostgres)('Idempotency-Key across instances on one PostgreSQL', () => {
  let second: TestServer;
  beforeAll(async () => {
    second = await startTestServer({ ...sealingByTest(), databaseUrl: server.services.config.databaseUrl });
  });
  afterAll(() => second?.close());

  it('stores one receipt when two instances get the same key at once', async () => {
    for (let round = 0; round < 5; round++) {
      const s = await setup();
      const body = s.body(`inst_idem_two_${round}_x`);
      const answers = await Promise.all([s.post(body, 'two-instances'), s.post(body, 'two-instances', second), s.post(body, 'two-instances')]);
      expect(answers.map((a) => a.status), answers.map((a) => a.text).join("\n")).toEqual([201, 201, 201]);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(await traces(s.project.id)).toEqual(once);
    }
  });
});
