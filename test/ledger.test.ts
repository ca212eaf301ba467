import { spawn } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointHash, checkpointMessage, keyIdOf, merkleRoot, merkleTree, nodeHash, readKeys, rootFromInclusion } from '../verify/ledger.mjs';
import { verifyExport, verifyProof } from '../verify/verify-export.mjs';
import { loadConfig } from '../src/config.js';
import { DEV_KEY_FILE, openLedgerSigner, publicJwkOf } from '../src/ledger/keys.js';
import { sealDue } from '../src/ledger/seal.js';
import { sdkTeam } from './helpers/sdk.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';
import { freePort, migratedDataDir } from './helpers/service-process.js';
import { startReceiver, verifySignature } from './helpers/webhook-receiver.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const temps: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};

const signingKey = generateKeyPairSync('ed25519').privateKey;
let server: TestServer;

beforeAll(async () => {
  // Sealing is driven by the tests (sealDue), not by the worker's clock.
  server = await startTestServer({ ledger: { signingKey, publicKeys: [], sealIntervalMs: 50_000 } });
});
afterAll(async () => {
  await server?.close();
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

type Team = Awaited<ReturnType<typeof sdkTeam>>;
const range = (from: number, to: number, step: number) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
let visitor = 0;
async function record(t: Team, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.post(`ledger-visitor-${visitor++}`);
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

const gql = (query: string, variables: Record<string, unknown>, token?: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

async function exportText(t: Team, query = '?format=ledger') {
  const res = await fetch(`${server.url}/api/platform/projects/${t.project.id}/receipts/export${query}`, {
    headers: { authorization: `Bearer ${t.viewer.token}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const keysDocument = async () => (await server.request('GET', '/.well-known/consent-ledger-keys.json')).body;

describe('Merkle tree (RFC 6962 / 9162)', () => {
  // The recursive definition of RFC 6962 section 2.1, to check the level-by-level builder against.
  const mth = (leaves: Buffer[]): Buffer => {
    if (leaves.length === 1) return leaves[0]!;
    let k = 1;
    while (k * 2 < leaves.length) k *= 2;
    return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
  };
  it('has RFC 6962 roots and inclusion paths that verify for every leaf of trees of 1 to 40 leaves', () => {
    for (let size = 1; size <= 40; size++) {
      const leaves = Array.from({ length: size }, (_, i) => Buffer.alloc(32, i + 1));
      const tree = merkleTree(leaves);
      expect(tree.root.equals(mth(leaves)), `size ${size}`).toBe(true);
      expect(merkleRoot(leaves).equals(tree.root)).toBe(true);
      for (let i = 0; i < size; i++) {
        expect(rootFromInclusion(i, size, leaves[i]!, tree.path(i))?.equals(tree.root), `leaf ${i} of ${size}`).toBe(true);
        // The same path read as another leaf's, or for another size, does not lead to the root.
        if (size > 1) expect(rootFromInclusion((i + 1) % size, size, leaves[i]!, tree.path(i))?.equals(tree.root) ?? false).toBe(false);
      }
    }
  });
});

describe('sealing', () => {
  it('seals every committed receipt into exactly one signed, chained checkpoint; the proof answers 409 until then', async () => {
    const t = await sdkTeam(server);
    const first = await record(t, 5);
    const proofOf = (id: string, token = t.viewer.token) => server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${id}/proof`, { token });

    const early = await proofOf(first[0]!);
    expect(early.status).toBe(409);
    expect(early.body).toEqual({ error: expect.stringMatching(/not sealed yet/), code: 'receipt_not_sealed' });

    const made = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ sequence: 1, previous: null, count: 5, firstReceiptId: [...first].sort()[0], lastReceiptId: [...first].sort()[4] });
    // Nothing waits any more: a second round makes nothing for this project.
    expect((await sealDue(server.services)).filter((c) => c.projectId === t.project.id)).toEqual([]);

    const second = await record(t, 3);
    const [next] = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    expect(next).toMatchObject({ sequence: 2, previous: checkpointHash(made[0]!), count: 3 });

    // Each receipt in exactly one checkpoint.
    const leaves = await server.services.db.query<{ receipt_id: string; sequence: number }>(
      'SELECT s.receipt_id, c.sequence FROM ledger_checkpoints AS c, unnest(c.receipt_ids) AS s(receipt_id) WHERE c.project_id = $1 ORDER BY c.sequence',
      [t.project.id],
    );
    expect(leaves.map((l) => l.receipt_id).sort()).toEqual([...first, ...second].sort());
    expect(leaves.filter((l) => l.sequence === 1)).toHaveLength(5);

    // The proof alone verifies against the published keys, on REST and on /graphql alike.
    const keys = readKeys(await keysDocument());
    const proof = await proofOf(second[1]!);
    expect(proof.status).toBe(200);
    expect(proof.body.checkpoint).toEqual(next);
    expect(proof.body.receipt).toMatchObject({ id: second[1], choices: { analytics: true } });
    expect(verifyProof(proof.body, keys)).toEqual({ ok: true, problems: [] });
    const viaGraphql = await gql(
      `query ($p: ID!, $r: ID!) { receiptProof(projectId: $p, receiptId: $r) { receipt proof { leafIndex treeSize leafHash path } checkpoint { projectId sequence previous root count firstReceiptId lastReceiptId createdAt keyId signature } } }`,
      { p: t.project.id, r: second[1] },
      t.viewer.token,
    );
    expect(viaGraphql.body.data.receiptProof).toEqual(proof.body);

    // A receipt edited in the proof no longer verifies.
    const edited = structuredClone(proof.body);
    edited.receipt.choices.analytics = false;
    expect(verifyProof(edited, keys).problems.map((p: { code: string }) => p.code)).toEqual(['receipt_edited']);

    // Access: unknown receipt 404, other project's member 404, outsider 404, no session 401.
    expect((await proofOf('0190aaaa-0000-7000-8000-000000000000')).status).toBe(404);
    expect((await proofOf('bad\u0000id')).status).toBe(404);
    expect((await proofOf(second[1]!, t.outsider.token)).status).toBe(404);
    expect((await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${second[1]}/proof`)).status).toBe(401);
  });

  it('lists checkpoints newest first by cursor (Viewer), the same on /graphql; bad input is 400, outsiders 404', async () => {
    const t = await sdkTeam(server);
    for (let round = 0; round < 3; round++) {
      await record(t, 2);
      await sealDue(server.services);
    }
    const list = (query = '', token = t.viewer.token) => server.request('GET', `/api/platform/projects/${t.project.id}/ledger/checkpoints${query}`, { token });
    const all = await list();
    expect(all.status).toBe(200);
    expect(all.body.checkpoints.map((c: { sequence: number }) => c.sequence)).toEqual([3, 2, 1]);
    expect(all.body.nextCursor).toBeNull();

    const page1 = await list('?limit=2');
    expect(page1.body.checkpoints.map((c: { sequence: number }) => c.sequence)).toEqual([3, 2]);
    const page2 = await list(`?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toEqual({ checkpoints: [all.body.checkpoints[2]], nextCursor: null });

    const viaGraphql = await gql(
      `query ($p: ID!) { ledgerCheckpoints(projectId: $p, limit: 2) { checkpoints { sequence root signature } nextCursor } }`,
      { p: t.project.id },
      t.viewer.token,
    );
    expect(viaGraphql.body.data.ledgerCheckpoints).toEqual({
      checkpoints: page1.body.checkpoints.map(({ sequence, root, signature }: Record<string, unknown>) => ({ sequence, root, signature })),
      nextCursor: page1.body.nextCursor,
    });

    expect((await list('?limit=0')).body.code).toBe('validation_failed');
    expect((await list('?cursor=nonsense')).status).toBe(400);
    expect((await list('', t.outsider.token)).status).toBe(404);
    expect((await gql(`query ($p: ID!) { ledgerCheckpoints(projectId: $p) { nextCursor } }`, { p: t.project.id }, t.outsider.token)).body.errors[0].extensions.code).toBe(
      'not_found',
    );
  });

  it('sends ledger.checkpoint to the project webhook once the project opts in (Admin), signed like every event', async () => {
    const t = await sdkTeam(server);
    const hook = await startReceiver();
    try {
      const put = await server.request('PUT', `/api/platform/projects/${t.project.id}/webhook`, { token: t.owner.token, body: { url: hook.url, enabled: true } });
      expect(put.status).toBe(200);
      const settings = `/api/platform/projects/${t.project.id}/ledger/settings`;
      expect((await server.request('GET', settings, { token: t.viewer.token })).body).toEqual({ settings: { checkpointWebhook: false } });

      // Off by default: receivers written for the contract get only consent.updated.
      const quiet = await record(t, 1);
      expect((await sealDue(server.services)).some((c) => c.projectId === t.project.id)).toBe(true);
      await hook.until((received) => received.some((r) => r.json?.data?.receiptId === quiet[0]));

      expect((await server.request('PUT', settings, { token: t.viewer.token, body: { checkpointWebhook: true } })).status).toBe(403);
      expect((await server.request('PUT', settings, { token: t.admin.token, body: { checkpointWebhook: 'yes' } })).status).toBe(400);
      const on = await server.request('PUT', settings, { token: t.admin.token, body: { checkpointWebhook: true } });
      expect(on.body).toEqual({ settings: { checkpointWebhook: true } });
      const audit = await server.request('GET', `/api/platform/orgs/${t.org.id}/audit-log?action=ledger.settings_updated`, { token: t.owner.token });
      expect(audit.body.events?.[0]).toMatchObject({ action: 'ledger.settings_updated', changes: { checkpointWebhook: { before: false, after: true } } });

      await record(t, 2);
      const [checkpoint] = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
      await hook.until((received) => received.some((r) => r.json?.type === 'ledger.checkpoint'));
      const events = hook.received.filter((r) => r.json.type === 'ledger.checkpoint');
      expect(events).toHaveLength(1);
      expect(events[0]!.headers['x-consent-event']).toBe('ledger.checkpoint');
      expect(events[0]!.json).toEqual({ id: expect.any(String), type: 'ledger.checkpoint', createdAt: checkpoint!.createdAt, data: checkpoint });
      expect(verifySignature(events[0]!, put.body.secret)).toBe(true);
    } finally {
      await hook.close();
    }
  });

  it('seals the leaf of what was acknowledged: a receipt changed in the database before sealing does not verify', async () => {
    const t = await sdkTeam(server);
    const [kept, changed] = await record(t, 2);
    // Someone able to bypass the append-only trigger edits a receipt in the seconds before it is sealed.
    await server.services.db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(`UPDATE receipts SET choices = '{"necessary": true, "analytics": false}' WHERE id = $1`, [changed]);
    });
    await sealDue(server.services);
    const keys = readKeys(await keysDocument());
    const proofOf = async (id: string) =>
      (await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${id}/proof`, { token: t.viewer.token })).body;
    expect(verifyProof(await proofOf(kept!), keys).ok).toBe(false); // its path was built from the changed neighbour
    const problems = (await verifyExport((await exportText(t)).text.trimEnd().split('\n'), keys)).problems;
    expect(problems.map((p: { code: string }) => p.code)).toContain('receipt_edited');
  });

  it('seals receipts queued by an older release (one row per receipt, with or without its leaf) with the batches', async () => {
    const t = await sdkTeam(server);
    const ids = await record(t, 4);
    // What releases before the batches queued: one row per receipt. The first two receipts' batches become such
    // rows, the first without a leaf (hashed from the stored receipt); the other two stay batches.
    await server.services.db.query(
      `WITH moved AS (DELETE FROM ledger_pending_batches WHERE project_id = $1 AND receipt_ids && $2::text[] RETURNING receipt_ids, receipt_created_ats, leaves)
       INSERT INTO ledger_pending (project_id, receipt_id, receipt_created_at, leaf_hash)
       SELECT $1, s.id, s.created_at, CASE WHEN s.id = $3 THEN NULL ELSE substring(m.leaves FROM s.n::int * 32 - 31 FOR 32) END
         FROM moved AS m, unnest(m.receipt_ids, m.receipt_created_ats) WITH ORDINALITY AS s(id, created_at, n)`,
      [t.project.id, ids.slice(0, 2), ids[0]],
    );
    expect(await server.services.db.query('SELECT 1 FROM ledger_pending WHERE project_id = $1', [t.project.id])).toHaveLength(2);
    const [checkpoint] = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    expect(checkpoint).toMatchObject({ count: 4, firstReceiptId: [...ids].sort()[0], lastReceiptId: [...ids].sort()[3] });
    expect(await server.services.db.query('SELECT 1 FROM ledger_pending WHERE project_id = $1', [t.project.id])).toEqual([]);
    expect(await server.services.db.query('SELECT 1 FROM ledger_pending_batches WHERE project_id = $1', [t.project.id])).toEqual([]);
    const keys = readKeys(await keysDocument());
    for (const id of ids) {
      const proof = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${id}/proof`, { token: t.viewer.token });
      expect(verifyProof(proof.body, keys)).toEqual({ ok: true, problems: [] });
    }
    expect(await verifyExport((await exportText(t)).text.trimEnd().split('\n'), keys)).toMatchObject({ ok: true, receipts: 4 });
  });

  it('proves and exports checkpoints an older release sealed (their receipts in ledger_leaves, none on the checkpoint)', async () => {
    const t = await sdkTeam(server);
    const older = await record(t, 3);
    await sealDue(server.services);
    const newer = await record(t, 2);
    await sealDue(server.services);
    // The first checkpoint as the previous release stored it: its receipts one row each in ledger_leaves.
    await server.services.db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `INSERT INTO ledger_leaves (project_id, receipt_id, sequence, leaf_index, receipt_created_at)
         SELECT c.project_id, s.id, c.sequence, s.n - 1, s.created_at
           FROM ledger_checkpoints AS c, unnest(c.receipt_ids, c.receipt_created_ats) WITH ORDINALITY AS s(id, created_at, n)
          WHERE c.project_id = $1 AND c.sequence = 1`,
        [t.project.id],
      );
      await tx.query(`UPDATE ledger_checkpoints SET receipt_ids = '{}', receipt_created_ats = '{}' WHERE project_id = $1 AND sequence = 1`, [t.project.id]);
    });
    const keys = readKeys(await keysDocument());
    for (const id of [...older, ...newer]) {
      const proof = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${id}/proof`, { token: t.viewer.token });
      expect(proof.body.checkpoint.sequence).toBe(older.includes(id) ? 1 : 2);
      expect(verifyProof(proof.body, keys)).toEqual({ ok: true, problems: [] });
    }
    expect(await verifyExport((await exportText(t)).text.trimEnd().split('\n'), keys)).toMatchObject({ ok: true, checkpoints: 2, receipts: 5 });
  });

  it('seals at most 10,000 receipts a checkpoint, whole batches oldest first, each leaf kept with its id', async () => {
    const t = await sdkTeam(server);
    // Queued straight into the tables (14,500 receipts through the SDK would take minutes): ids numbered n, each
    // leaf derived from n, so the test knows which leaf belongs to which id. An older release's 2,500 rows (even
    // ids 2..5,000) interleave with the first batch's (odd ids below 8,000).
    const id = (n: string) => `'00000000-0000-7000-8000-' || lpad(${n}::text, 12, '0')`;
    const leaf = (n: string) => `decode(md5(${n}::text) || md5((${n} + 1)::text), 'hex')`;
    const db = server.services.db;
    await db.query(
      `INSERT INTO ledger_pending (project_id, receipt_id, receipt_created_at, leaf_hash)
       SELECT $1, ${id('n')}, now(), ${leaf('n')} FROM generate_series(2, 5000, 2) AS n`,
      [t.project.id],
    );
    for (const [from, to, step] of [[1, 7999, 2], [8001, 12000, 1], [12001, 16000, 1]]) {
      await db.query(
        `INSERT INTO ledger_pending_batches (project_id, count, receipt_ids, receipt_created_ats, leaves)
         SELECT $1, count(*), array_agg(${id('n')} ORDER BY n), array_agg(now() ORDER BY n), string_agg(${leaf('n')}, ''::bytea ORDER BY n)
           FROM generate_series($2::int, $3::int, $4::int) AS n`,
        [t.project.id, from, to, step],
      );
    }
    const made = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    // The older rows and the first batch (6,500); the second batch would pass 10,000, so it opens the next one.
    expect(made.map((c) => c.count)).toEqual([6500, 8000]);
    expect(await db.query('SELECT 1 FROM ledger_pending WHERE project_id = $1', [t.project.id])).toEqual([]);
    expect(await db.query('SELECT 1 FROM ledger_pending_batches WHERE project_id = $1', [t.project.id])).toEqual([]);

    const numbers = [[...range(2, 5000, 2), ...range(1, 7999, 2)], [...range(8001, 16000, 1)]].map((ns) => ns.sort((a, b) => a - b));
    const idOf = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
    const leafOf = (n: number) => Buffer.concat([createHash('md5').update(String(n)).digest(), createHash('md5').update(String(n + 1)).digest()]);
    const stored = await db.query<{ receipt_ids: string[] }>('SELECT receipt_ids FROM ledger_checkpoints WHERE project_id = $1 ORDER BY sequence', [
      t.project.id,
    ]);
    numbers.forEach((ns, i) => {
      expect(stored[i]!.receipt_ids).toEqual(ns.map(idOf));
      expect(made[i]).toMatchObject({ firstReceiptId: idOf(ns[0]!), lastReceiptId: idOf(ns.at(-1)!), root: merkleRoot(ns.map(leafOf)).toString('hex') });
    });
  });

  it("finds a receipt's checkpoint by its ids where checkpoints' id ranges overlap (a receipt committed late)", async () => {
    const t = await sdkTeam(server);
    const ids = await record(t, 4);
    const db = server.services.db;
    // The second and fourth receipts' batches held back (as if their transactions committed after the first
    // sealing): the first checkpoint seals the first and third, its range covering the second.
    const held = await db.query<{ receipt_ids: string[]; receipt_created_ats: string[]; leaves: Uint8Array }>(
      `DELETE FROM ledger_pending_batches WHERE project_id = $1 AND receipt_ids && $2::text[]
       RETURNING receipt_ids, receipt_created_ats::text[] AS receipt_created_ats, leaves`,
      [t.project.id, [ids[1], ids[3]]],
    );
    const [first] = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    for (const batch of held) {
      await db.query('INSERT INTO ledger_pending_batches (project_id, count, receipt_ids, receipt_created_ats, leaves) VALUES ($1, 1, $2, $3, $4)', [
        t.project.id,
        batch.receipt_ids,
        batch.receipt_created_ats,
        Buffer.from(batch.leaves),
      ]);
    }
    const [second] = (await sealDue(server.services)).filter((c) => c.projectId === t.project.id);
    expect([first, second].map((c) => [c!.firstReceiptId, c!.lastReceiptId])).toEqual([
      [ids[0], ids[2]],
      [ids[1], ids[3]],
    ]);
    const keys = readKeys(await keysDocument());
    for (const [i, sequence] of [1, 2, 1, 2].entries()) {
      const proof = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${ids[i]}/proof`, { token: t.viewer.token });
      expect(proof.body.checkpoint.sequence, `receipt ${i + 1}`).toBe(sequence);
      expect(verifyProof(proof.body, keys)).toEqual({ ok: true, problems: [] });
    }
  });

  it('refuses to change or remove what was sealed, at the database level', async () => {
    const t = await sdkTeam(server);
    await record(t, 1);
    await sealDue(server.services);
    // ledger_leaves is what older releases sealed into (one row per receipt): one such row, kept as sealed.
    const [sealed] = await server.services.db.query<{ project_id: string; id: string; created_at: string }>(
      'SELECT c.project_id, c.receipt_ids[1] AS id, c.receipt_created_ats[1]::text AS created_at FROM ledger_checkpoints AS c WHERE c.project_id = $1',
      [t.project.id],
    );
    await server.services.db.query('INSERT INTO ledger_leaves (project_id, receipt_id, sequence, leaf_index, receipt_created_at) VALUES ($1, $2, 1, 0, $3)', [
      sealed!.project_id,
      `legacy-${sealed!.id}`,
      sealed!.created_at,
    ]);
    for (const table of ['ledger_checkpoints', 'ledger_leaves']) {
      await expect(server.services.db.query(`UPDATE ${table} SET sequence = sequence`)).rejects.toThrow(/immutable/);
      await expect(server.services.db.query(`DELETE FROM ${table}`)).rejects.toThrow(/immutable/);
    }
    // The receipts a checkpoint sealed are part of it.
    await expect(server.services.db.query(`UPDATE ledger_checkpoints SET receipt_ids = receipt_ids[1:1]`)).rejects.toThrow(/immutable/);
  });
});

describe('the ledger export and consent-verify', () => {
  let t: Team;
  let text: string;
  const keysFile = () => {
    const file = join(tempDir('ledger-keys-'), 'keys.json');
    return file;
  };
  let trustedKeys: string;

  beforeAll(async () => {
    t = await sdkTeam(server);
    for (const size of [6, 4, 5]) {
      await record(t, size);
      await sealDue(server.services);
    }
    const exported = await exportText(t);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="ledger-.+\.ndjson"$/);
    text = exported.text;
    trustedKeys = keysFile();
    writeFileSync(trustedKeys, JSON.stringify(await keysDocument()));
  });

  const lines = () => text.trimEnd().split('\n');
  const parsed = () => lines().map((line) => JSON.parse(line));
  const verify = (input: string[] | string, keys = readKeys(JSON.parse(readFileSync(trustedKeys, 'utf8')))) =>
    verifyExport(typeof input === 'string' ? input.split('\n') : input, keys);
  const codes = async (input: string[]) => (await verify(input)).problems.map((p: { code: string }) => p.code);
  const receiptLines = () => parsed().flatMap((entry, index) => (entry.type === 'receipt' ? [{ entry, index }] : []));
  const rewrite = (index: number, change: (entry: any) => void) => {
    const all = lines();
    const entry = JSON.parse(all[index]!);
    change(entry);
    all[index] = JSON.stringify(entry);
    return all;
  };

  it('is a header, each checkpoint’s receipts with their paths, the checkpoint, and an end line; the ndjson receipts are the same', async () => {
    const entries = parsed();
    expect(entries[0]).toMatchObject({ type: 'ledger', version: 1, projectId: t.project.id, keys: `${server.url}/.well-known/consent-ledger-keys.json` });
    expect(entries.map((e) => e.type).join(',')).toBe(
      ['ledger', ...Array(6).fill('receipt'), 'checkpoint', ...Array(4).fill('receipt'), 'checkpoint', ...Array(5).fill('receipt'), 'checkpoint', 'end'].join(','),
    );
    expect(entries.at(-1)).toEqual({ type: 'end', checkpoints: 3, receipts: 15 });
    // The receipts hashed are the receipts exported: byte for byte the ndjson export's objects.
    const ndjson = (await exportText(t, '?format=ndjson')).text.trimEnd().split('\n').map((line) => JSON.parse(line));
    const sealed = entries.filter((e) => e.type === 'receipt').map((e) => e.receipt);
    expect([...sealed].sort((a, b) => a.id.localeCompare(b.id))).toEqual([...ndjson].sort((a, b) => a.id.localeCompare(b.id)));
  });

  it('verifies untouched with the CLI from the repository (npx consent-verify), with keys from a file or an address given; never from the header', async () => {
    expect(await verify(lines())).toMatchObject({ ok: true, problems: [], checkpoints: 3, receipts: 15 });
    const file = join(tempDir('ledger-export-'), 'export.ndjson');
    writeFileSync(file, text);
    const withKeys = await run('npx', ['consent-verify', file, '--keys', trustedKeys]);
    expect(withKeys.code, withKeys.output).toBe(0);
    expect(withKeys.output).toMatch(/^OK: 15 receipts in 3 checkpoints verified/m);
    expect(withKeys.output).toContain(`keys:        the file ${trustedKeys}`);
    const keysUrl = `${server.url}/.well-known/consent-ledger-keys.json`;
    const fetched = await run(process.execPath, ['verify/consent-verify.mjs', file, '--keys-url', keysUrl, '--json']);
    expect(fetched.code, fetched.output).toBe(0);
    expect(JSON.parse(fetched.output)).toMatchObject({ ok: true, checkpoints: 3, receipts: 15, keys: { url: keysUrl, origin: new URL(server.url).origin } });
    // The header names the same address, but the header is not signed: an export alone is refused.
    const alone = await run(process.execPath, ['verify/consent-verify.mjs', file]);
    expect(alone.code).toBe(2);
    expect(alone.output).toMatch(/^consent-verify: no keys given: pass --keys <file> .* or --keys-url <url>/);
  });

  it('names an edited receipt', async () => {
    const { entry, index } = receiptLines()[7]!;
    const tampered = rewrite(index, (e) => (e.receipt.choices.analytics = !e.receipt.choices.analytics));
    const result = await verify(tampered);
    expect(result.problems).toEqual([
      expect.objectContaining({ code: 'receipt_edited', receiptId: entry.receipt.id, sequence: 2, line: index + 1, message: expect.stringContaining(`receipt ${entry.receipt.id} was changed after checkpoint 2`) }),
    ]);
    // The CLI says the same on its own line and exits 1.
    const file = join(tempDir('ledger-export-'), 'edited.ndjson');
    writeFileSync(file, tampered.join('\n'));
    const cli = await run(process.execPath, ['verify/consent-verify.mjs', file, '--keys', trustedKeys]);
    expect(cli.code).toBe(1);
    expect(cli.output).toContain(`FAIL receipt_edited: line ${index + 1}: receipt ${entry.receipt.id} was changed`);
  });

  it('names a removed receipt by its leaf and neighbours', async () => {
    const receipts = receiptLines();
    const all = lines();
    all.splice(receipts[2]!.index, 1);
    const result = await verify(all);
    expect(result.problems.map((p: { code: string }) => p.code)).toEqual(['receipt_missing', 'truncated']);
    expect(result.problems[0]).toMatchObject({
      sequence: 1,
      leafIndex: 2,
      message: expect.stringContaining(`leaf 2 (between receipts ${receipts[1]!.entry.receipt.id} and ${receipts[3]!.entry.receipt.id}) is missing`),
    });
  });

  it('names two reordered receipts', async () => {
    const receipts = receiptLines();
    const all = lines();
    [all[receipts[11]!.index], all[receipts[13]!.index]] = [all[receipts[13]!.index]!, all[receipts[11]!.index]!];
    const result = await verify(all);
    expect(result.problems).toEqual([
      expect.objectContaining({ code: 'receipts_out_of_order', sequence: 3, receiptIds: [receipts[13]!.entry.receipt.id, receipts[11]!.entry.receipt.id] }),
    ]);
  });

  it('names an inserted, forged receipt', async () => {
    const receipts = receiptLines();
    const forged = structuredClone(receipts[4]!.entry);
    forged.receipt.id = '0190ffff-ffff-7fff-bfff-ffffffffffff';
    forged.receipt.installationId = 'forged';
    const all = lines();
    all.splice(receipts[4]!.index + 1, 0, JSON.stringify(forged));
    const result = await verify(all);
    expect(result.problems.map((p: { code: string }) => p.code)).toEqual(['receipt_inserted', 'truncated']);
    expect(result.problems[0]).toMatchObject({ receiptId: forged.receipt.id, sequence: 1, message: expect.stringContaining('inserted') });
    // After the last checkpoint, a receipt no checkpoint seals.
    const trailing = lines();
    trailing.splice(trailing.length - 1, 0, JSON.stringify(forged));
    expect(await codes(trailing)).toEqual(['receipt_not_sealed', 'truncated']);
  });

  it('names a forged checkpoint signature, and a checkpoint signed by a key nobody published', async () => {
    const at = parsed().findIndex((e) => e.type === 'checkpoint' && e.checkpoint.sequence === 2);
    const forgedSignature = rewrite(at, (e) => (e.checkpoint.signature = Buffer.alloc(64, 7).toString('base64')));
    expect(await verify(forgedSignature)).toMatchObject({
      ok: false,
      problems: [expect.objectContaining({ code: 'checkpoint_signature_invalid', sequence: 2, message: expect.stringContaining('forged or altered') })],
    });
    // A checkpoint whose root was swapped for one that fits edited receipts fails the same way.
    const alteredRoot = rewrite(at, (e) => (e.checkpoint.root = 'ab'.repeat(32)));
    expect(await codes(alteredRoot)).toContain('checkpoint_signature_invalid');
    // Re-signed by someone else's key: not a key the auditor trusts.
    const other = generateKeyPairSync('ed25519').privateKey;
    const resigned = rewrite(at, (e) => {
      e.checkpoint.keyId = publicJwkOf(other).kid;
      e.checkpoint.signature = sign(null, Buffer.from(checkpointMessage(e.checkpoint)), other).toString('base64');
    });
    expect(await codes(resigned)).toEqual(['unknown_key']);
  });

  it('names a broken chain: a checkpoint removed, and one re-signed with a wrong previous', async () => {
    const entries = parsed();
    const start = entries.findIndex((e) => e.type === 'checkpoint' && e.checkpoint.sequence === 1) + 1;
    const end = entries.findIndex((e) => e.type === 'checkpoint' && e.checkpoint.sequence === 2);
    const all = lines();
    all.splice(start, end - start + 1);
    const removed = await verify(all);
    expect(removed.problems.map((p: { code: string }) => p.code)).toEqual(['sequence_gap', 'truncated']);
    expect(removed.problems[0]!.message).toContain('checkpoint 3 (line');
    expect(removed.problems[0]!.message).toContain('follows checkpoint 1');
    expect(removed.problems[0]!.message).toContain('checkpoint 2 is missing');

    // Whoever holds the signing key rewrites history: the chain shows it.
    const rewritten = rewrite(end, (e) => {
      e.checkpoint.previous = 'cd'.repeat(32);
      e.checkpoint.signature = sign(null, Buffer.from(checkpointMessage(e.checkpoint)), signingKey).toString('base64');
    });
    // Checkpoint 2 no longer follows 1, and 3 no longer follows the 2 it names.
    expect((await verify(rewritten)).problems).toEqual([
      expect.objectContaining({ code: 'chain_broken', sequence: 2, message: expect.stringContaining('checkpoint 1 hashes to') }),
      expect.objectContaining({ code: 'chain_broken', sequence: 3, message: expect.stringContaining('checkpoint 2 hashes to') }),
    ]);
  });

  it('with from/to, exports the checkpoints created in that window; an unknown format is 400', async () => {
    const checkpoints = parsed().filter((e) => e.type === 'checkpoint').map((e) => e.checkpoint);
    const window = await exportText(t, `?format=ledger&from=${checkpoints[1].createdAt}`);
    const entries = window.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(entries.filter((e) => e.type === 'checkpoint').map((e) => e.checkpoint.sequence)).toEqual([2, 3]);
    // A window that starts later is not a gap.
    expect(await verify(window.text.trimEnd().split('\n'))).toMatchObject({ ok: true, receipts: 9 });
    const bad = await exportText(t, '?format=xml');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).details[0].message).toBe('Must be csv, ndjson or ledger');
  });
});

describe('keys', () => {
  it('publishes every key that signed, and keeps old ones after a rotation', async () => {
    const t = await sdkTeam(server);
    await record(t, 2);
    await sealDue(server.services);
    const before = await server.request('GET', '/.well-known/consent-ledger-keys.json');
    expect(before.status).toBe(200);
    expect(before.headers.get('cache-control')).toBe('public, max-age=300');
    const current = publicJwkOf(signingKey);
    expect(before.body.keys).toContainEqual({ ...current, alg: 'EdDSA', use: 'sig', createdAt: expect.any(String), notBefore: expect.any(String), notAfter: null });
    expect(keyIdOf(current)).toBe(current.kid);

    // A restart with a new key (what LEDGER_SIGNING_KEY does), and a retired key kept published from a file.
    const rotated = generateKeyPairSync('ed25519').privateKey;
    const retired = generateKeyPairSync('ed25519').privateKey;
    const file = join(tempDir('ledger-retired-'), 'retired.pem');
    writeFileSync(file, publicKeyPem(retired));
    const { ledger } = loadConfig({ LEDGER_SIGNING_KEY_FILE: writeKey(rotated), LEDGER_PUBLIC_KEYS_FILE: file });
    const rotatedServices = { ...server.services, config: { ...server.services.config, ledger } };
    await openLedgerSigner(rotatedServices);
    await record(t, 3);
    const [afterRotation] = (await sealDue(rotatedServices)).filter((c) => c.projectId === t.project.id);
    expect(afterRotation).toMatchObject({ sequence: 2, keyId: publicJwkOf(rotated).kid });

    const after = (await server.request('GET', '/.well-known/consent-ledger-keys.json')).body;
    expect(after.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([current.kid, publicJwkOf(rotated).kid, publicJwkOf(retired).kid]));
    const exported = (await exportText(t)).text.trimEnd().split('\n');
    expect(await verifyExport(exported, readKeys(after))).toMatchObject({ ok: true, checkpoints: 2 });
    // Without the old key, the old checkpoint cannot be vouched for, and the verifier says which.
    const onlyNew = readKeys({ keys: [publicJwkOf(rotated)] });
    expect((await verifyExport(exported, onlyNew)).problems).toEqual([expect.objectContaining({ code: 'unknown_key', sequence: 1 })]);
    // The suite's key is retired now (a newer one took over): it never signs again (test/verify-hostile.test.ts).
    const validity = Object.fromEntries(after.keys.map((k: { kid: string; notBefore: string | null; notAfter: string | null }) => [k.kid, [k.notBefore, k.notAfter]]));
    expect(validity[current.kid]).toEqual([expect.any(String), validity[publicJwkOf(rotated).kid][0]]);
    expect(validity[publicJwkOf(rotated).kid][1]).toBeNull();
    expect(validity[publicJwkOf(retired).kid]).toEqual([null, validity[current.kid][0]]);
  });
});

describe('configuration', () => {
  const production = { NODE_ENV: 'production', BILLING_PROVIDER: 'stripe' };
  it('production requires a signing key, named in one line; a key that is not Ed25519 is refused', () => {
    expect(() => loadConfig(production)).toThrow(/^LEDGER_SIGNING_KEY or LEDGER_SIGNING_KEY_FILE is required in production/);
    const pem = signingKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(loadConfig({ ...production, LEDGER_SIGNING_KEY: pem }).ledger.signingKey?.asymmetricKeyType).toBe('ed25519');
    // One line in an environment file: newlines written as \n.
    expect(loadConfig({ ...production, LEDGER_SIGNING_KEY: pem.replace(/\n/g, '\\n') }).ledger.signingKey).toBeDefined();
    expect(loadConfig({ LEDGER_SIGNING_KEY_FILE: writeKey(signingKey) }).ledger.signingKey).toBeDefined();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => loadConfig({ LEDGER_SIGNING_KEY: rsa })).toThrow(/LEDGER_SIGNING_KEY: not an Ed25519 private key/);
    expect(() => loadConfig({ LEDGER_SIGNING_KEY_FILE: '/nonexistent/key.pem' })).toThrow(/LEDGER_SIGNING_KEY_FILE: cannot read/);
    expect(loadConfig({}).ledger).toMatchObject({ signingKey: undefined, publicKeys: [], sealIntervalMs: 5000 });
  });

  it('production without a key does not start: exit 1 and the message', async () => {
    const { DATABASE_URL: _url, LEDGER_SIGNING_KEY: _key, LEDGER_SIGNING_KEY_FILE: _file, ...inherited } = process.env;
    const result = await run(process.execPath, ['dist/src/main.js'], {
      ...inherited,
      ...production,
      STRIPE_SECRET_KEY: 'sk_test_unused',
      BILLING_WEBHOOK_SECRET: 'set',
      DATA_DIR: 'memory://',
      PORT: String(await freePort()),
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/^LEDGER_SIGNING_KEY or LEDGER_SIGNING_KEY_FILE is required in production/);
    expect(result.output).not.toMatch(/\n\s+at /);
  });

  it('development makes a key in DATA_DIR on the first start (0600) and keeps it', async () => {
    const dataDir = onPostgres ? tempDir('ledger-dev-') : migratedDataDir('ledger-dev-');
    if (!onPostgres) temps.push(dataDir);
    const keyIdOnce = async () => {
      const dev = await startTestServer({ dataDir, ...(onPostgres ? {} : { databaseUrl: undefined }), ledger: { signingKey: undefined, publicKeys: [], sealIntervalMs: 50_000 } });
      try {
        return (await dev.request('GET', '/.well-known/consent-ledger-keys.json')).body.keys.map((k: { kid: string }) => k.kid);
      } finally {
        await dev.close();
      }
    };
    const first = await keyIdOnce();
    expect(readdirSync(dataDir)).toContain(DEV_KEY_FILE);
    expect(statSync(join(dataDir, DEV_KEY_FILE)).mode & 0o777).toBe(0o600);
    const pem = readFileSync(join(dataDir, DEV_KEY_FILE), 'utf8');
    expect(await keyIdOnce()).toEqual(first);
    expect(readFileSync(join(dataDir, DEV_KEY_FILE), 'utf8')).toBe(pem);
  });
});

describe('the verifier stands alone', () => {
  it('imports nothing but node built-ins, canonicalize and its own files', () => {
    const dir = join(ROOT, 'verify');
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.mjs'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      const specifiers = [...source.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]/gm), ...source.matchAll(/import\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      expect(specifiers.length, file).toBeGreaterThan(0);
      for (const specifier of specifiers) expect(specifier, `${file} imports ${specifier}`).toMatch(/^(node:[a-z/]+|canonicalize|\.\/[\w-]+\.mjs)$/);
    }
  });
});

function writeKey(key: KeyObject): string {
  const file = join(tempDir('ledger-key-'), 'key.pem');
  writeFileSync(file, key.export({ format: 'pem', type: 'pkcs8' }));
  return file;
}

const publicKeyPem = (key: KeyObject) => createPublicKey(key).export({ format: 'pem', type: 'spki' }).toString();

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}
