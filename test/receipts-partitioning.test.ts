// Receipts partitioned by month of created_at (issue 33, docs/scaling.md "(a) Partitioning on PostgreSQL"), on
// the database of the run (embedded, or PostgreSQL with TEST_DATABASE_URL): the migration on a populated
// database loses, copies and changes no receipt; the real service then writes on both sides of the boundary and
// into a month with no partition yet; UPDATE, DELETE and TRUNCATE are refused on the parent and every partition;
// lookups by id find legacy receipts whose ids do not carry their time; the list reads only the partitions of its
// range. Then the migration's other paths: a large installation's indexes and bound built beforehand, a receipt
// dated after the first boundary, a prebuilt index of the wrong shape.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../src/admin/members.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../src/db/migrate.js';
import { sealDue } from '../src/ledger/seal.js';
import { receiptId, uuidv7Time } from '../src/receipts/ids.js';
import { NOTICE } from './helpers/consent.js';
import { operator, type Operator } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { dropDatabase, freshDatabaseUrl, onPostgres, sealingByTest, startTestServer, type TestServer } from './helpers/server.js';
import { statementsSent } from './helpers/statements.js';

const PARTITIONING = '20261204000000_receipts_partitioned';
const DAY_MS = 86_400_000;
/** The first of a UTC month, `months` after the one holding `ms`. */
const monthStart = (ms: number, months = 0) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
};
const partitionOf = (ms: number) => {
  const d = new Date(ms);
  return `receipts_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

// --- Databases at the schema before partitioning, cloned from one migrated there ---------------------------------

const temps: string[] = [];
const databases: string[] = [];
let baseImage: Blob | undefined; // embedded
let baseName: string | undefined; // PostgreSQL: a template database

/** A new database migrated up to (not including) the partitioning migration; its URL on PostgreSQL. */
async function beforePartitioning(): Promise<{ db: Database; url: string | undefined }> {
  if (!baseImage && !baseName) {
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    temps.push(dir);
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    for (const m of listMigrations()) if (m.name >= PARTITIONING) rmSync(join(dir, m.name), { recursive: true });
    const url = await freshDatabaseUrl();
    const db = await openDatabase({ databaseUrl: url, dataDir: 'memory://' });
    await migrate(db, dir);
    if (url) baseName = new URL(url).pathname.slice(1);
    else baseImage = await db.pglite!.dumpDataDir('none');
    await db.close();
    if (url) databases.push(url);
  }
  if (baseImage) return { db: await openDatabase({ dataDir: 'memory://' }, baseImage), url: undefined };
  const url = await freshDatabaseUrl();
  const name = new URL(url!).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE "${name}"`);
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${baseName}"`);
  await admin.end();
  databases.push(url!);
  return { db: await openDatabase({ databaseUrl: url, dataDir: '' }), url };
}

afterAll(async () => {
  for (const url of databases.reverse()) await dropDatabase(url);
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** An organization with a project, its published version (a valid stored config) and a key, written as SQL. */
async function addProject(db: Database, n: number) {
  const id = (kind: string) => `${kind}-${n}`;
  const config = {
    categories: [{ id: id('category'), name: 'Essential', sortOrder: 0 }],
    purposes: [
      { id: id('necessary'), key: 'necessary', name: 'Necessary', description: 'Runs the shop', required: true, categoryId: id('category'), sortOrder: 0 },
      { id: id('analytics'), key: 'analytics', name: 'Analytics', description: 'Counts visits', required: false, categoryId: id('category'), sortOrder: 1 },
    ],
    notice: NOTICE,
  };
  await db.query(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, 'Publisher', 'x') ON CONFLICT DO NOTHING`, ['publisher', 'publisher@example.com']);
  await db.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $1)`, [id('org'), `Org ${n}`]);
  await db.query(`INSERT INTO projects (id, organization_id, name, slug, enforce_origins) VALUES ($1, $2, $3, $1, false)`, [id('project'), id('org'), `Shop ${n}`]);
  await db.query(
    `INSERT INTO consent_versions (id, project_id, number, config, content_hash, consent_hash, published_by_id, published_at)
     VALUES ($1, $2, 1, $3::jsonb, $4, $5, 'publisher', '2026-01-01T00:00:00Z')`,
    [id('version'), id('project'), JSON.stringify(config), `content-${n}`, `consent-${n}`],
  );
  await db.query(`INSERT INTO api_keys (id, project_id, prefix, secret_hash) VALUES ($1, $2, 'pk_live_old', $1)`, [id('key'), id('project')]);
  return { org: id('org'), project: id('project'), version: id('version'), consentHash: `consent-${n}`, key: id('key') };
}

interface LegacyRow {
  id: string;
  project: Awaited<ReturnType<typeof addProject>>;
  createdAt: number;
}

/** Receipts as the code before partitioning wrote them (and their place in the ledger's queue, as its writer did). */
async function addReceipts(db: Database, rows: LegacyRow[]) {
  await db.query(
    `WITH r AS (
       INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at)
       SELECT id, project_id, version_id, consent_hash, jsonb_build_object('necessary', true, 'analytics', n % 2 = 0), 'visitor-' || (n % 97), api_key_id, created_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) WITH ORDINALITY
           AS x(id, project_id, version_id, consent_hash, api_key_id, created_at, n)
       RETURNING project_id, id, created_at)
     INSERT INTO ledger_pending (project_id, receipt_id, receipt_created_at) SELECT project_id, id, created_at FROM r`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.project.project),
      rows.map((r) => r.project.version),
      rows.map((r) => r.project.consentHash),
      rows.map((r) => r.project.key),
      rows.map((r) => new Date(r.createdAt).toISOString()),
    ],
  );
}

const COLUMNS = 'id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at, locale, gpc, jurisdiction, action, gpp';
async function digest(db: Database) {
  const [row] = await db.query<{ count: string | number; ids: string; rows: string }>(
    `SELECT count(*) AS count, md5(string_agg(id, ',' ORDER BY id)) AS ids,
            md5(string_agg(concat_ws('|', ${COLUMNS}), E'\\n' ORDER BY id)) AS rows
       FROM receipts`,
  );
  return { count: Number(row!.count), ids: row!.ids, rows: row!.rows };
}

const planOf = async (db: Database, sql: string, params: unknown[] = []) =>
  (await db.query<Record<string, string>>(`EXPLAIN ${sql}`, params)).map((row) => Object.values(row)[0]).join('\n');
/** The partitions a plan reads: scans "on" a partition or one of its indexes (a bitmap index scan names the index). */
const partitionsIn = (plan: string) =>
  [...new Set([...plan.matchAll(/ on (receipts_\w+?)(_pkey|_created_at_idx|_decision_idx|_project_id_installation_id_created_at_idx)?\b/g)].map((match) => match[1]!))].sort();

describe('the partitioning migration on a populated database', () => {
  let server: TestServer;
  let clock = new Date();
  let owner: Operator;
  let shop: Awaited<ReturnType<typeof addProject>>;
  let key: { id: string; secret: string };
  let before: Awaited<ReturnType<typeof digest>>;
  const boundary = monthStart(Date.now(), 1); // the first month boundary after the migration runs
  // The code before took the id (uuidv7()) and the time (services.now()) apart: most ids a few ms off.
  const skewed: string[] = [];
  let movedClock: LegacyRow; // a test's moved clock: the id two days from its time
  let imported: LegacyRow; // an id that is no uuidv7 at all
  let lastLegacy: LegacyRow; // at the boundary's millisecond minus one: the legacy partition's last
  const sharing: LegacyRow[] = []; // several receipts of one millisecond

  beforeAll(async () => {
    const { db, url } = await beforePartitioning();
    shop = await addProject(db, 1);
    const other = await addProject(db, 2);
    // Six months up to now, every 2h17m, alternately for the two projects.
    const rows: LegacyRow[] = [];
    const oldest = monthStart(Date.now(), -5);
    for (let at = oldest, n = 0; at < Date.now(); at += 8_220_000, n++) {
      const id = receiptId(new Date(at - (n % 4)));
      if (n % 4 === 2) skewed.push(id); // the project the test's operator owns, its id 2 ms early
      rows.push({ id, project: n % 2 ? other : shop, createdAt: at });
    }
    const thisMonth = monthStart(Date.now());
    for (let i = 0; i < 5; i++) sharing.push({ id: receiptId(new Date(thisMonth + 12_345)), project: shop, createdAt: thisMonth + 12_345 });
    rows.push(...sharing);
    rows.push({ id: receiptId(new Date(thisMonth)), project: shop, createdAt: thisMonth }); // the current month's first ms
    lastLegacy = { id: receiptId(new Date(boundary - 1)), project: shop, createdAt: boundary - 1 };
    movedClock = { id: receiptId(new Date(thisMonth + 3 * DAY_MS - 2 * DAY_MS)), project: shop, createdAt: thisMonth + 3 * DAY_MS };
    imported = { id: 'imported-0001', project: shop, createdAt: thisMonth + 4 * DAY_MS };
    rows.push(lastLegacy, movedClock, imported);
    await addReceipts(db, rows);
    // The rollup as its migration's backfill leaves it (the evidence package counts from it).
    await db.query(
      `INSERT INTO consent_stats_daily (project_id, day, version_id, shard, receipts)
       SELECT project_id, (created_at AT TIME ZONE 'UTC')::date, version_id, 0, count(*) FROM receipts GROUP BY 1, 2, 3`,
    );
    before = await digest(db);
    expect(before.count).toBe(rows.length);

    // The service migrates the rest at start-up, as an upgrade would.
    const image = url ? undefined : await db.pglite!.dumpDataDir('none');
    await db.close();
    server = await startTestServer(
      // Sealing is the test's (sealDue), not the worker's.
      { databaseUrl: url, ...sealingByTest() },
      { now: () => clock, embeddedImage: image },
    );
    owner = await operator(server, 'Owner');
    await addMember(server.services.db, { org: shop.org, email: owner.email, role: 'OWNER' });
    key = await createKey(server, owner.token, shop.project);
  });
  afterAll(() => server?.close());

  const db = () => server.services.db;
  const post = (installationId: string) =>
    server.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: { versionId: shop.version, consentHash: shop.consentHash, choices: { analytics: true }, installationId },
    });
  const gql = (query: string, variables: Record<string, unknown>) => server.request('POST', '/graphql', { token: owner.token, body: { query, variables } });
  const partitionOfId = async (id: string) =>
    (await db().query<{ part: string }>('SELECT tableoid::regclass::text AS part FROM receipts WHERE id = $1', [id]))[0]?.part;

  it('keeps every receipt, in place: the same count, ids and rows, all in the legacy partition', async () => {
    expect(await digest(db())).toEqual(before);
    const parts = await db().query<{ name: string; bound: string }>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'receipts'::regclass ORDER BY c.relname`,
    );
    const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('.000Z', '+00');
    // This month is the legacy partition's last; the next two are made.
    expect(parts).toEqual([
      { name: partitionOf(boundary), bound: `FOR VALUES FROM ('${iso(boundary)}') TO ('${iso(monthStart(boundary, 1))}')` },
      { name: partitionOf(monthStart(boundary, 1)), bound: `FOR VALUES FROM ('${iso(monthStart(boundary, 1))}') TO ('${iso(monthStart(boundary, 2))}')` },
      { name: 'receipts_legacy', bound: `FOR VALUES FROM (MINVALUE) TO ('${iso(boundary)}')` },
    ]);
    const [where] = await db().query<{ n: string | number }>(`SELECT count(*) AS n FROM receipts WHERE tableoid <> 'receipts_legacy'::regclass`);
    expect(Number(where!.n)).toBe(0);
    const [legacy] = await db().query<{ before: Date; skew_ms: string | number; other_ids: boolean }>('SELECT * FROM receipts_legacy()');
    expect({ ...legacy, skew_ms: Number(legacy!.skew_ms) }).toEqual({ before: new Date(boundary), skew_ms: 2 * DAY_MS, other_ids: true });
  });

  it('writes through the service on both sides of the boundary, and into a month with no partition yet', async () => {
    const made: { at: number; id: string; partition: string }[] = [];
    const months5 = monthStart(boundary, 5) + 7 * DAY_MS + 123;
    const nextMonth = monthStart(boundary, 1) + DAY_MS;
    for (const [i, at] of [boundary - 1, boundary, boundary + 1, nextMonth, months5].entries()) {
      clock = new Date(at);
      const res = await post(`partitioning-${i}`);
      expect(res.status, res.text).toBe(201);
      expect(res.body.createdAt).toBe(clock.toISOString());
      expect(uuidv7Time(res.body.id)).toBe(at);
      made.push({ at, id: res.body.id, partition: (await partitionOfId(res.body.id))! });
    }
    expect(made.map((m) => m.partition)).toEqual(['receipts_legacy', partitionOf(boundary), partitionOf(boundary), partitionOf(nextMonth), partitionOf(months5)]);
    // The receipt five months on made its month's partition (the writer's fallback), with the TRUNCATE refusal.
    const [trigger] = await db().query(`SELECT 1 FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'receipts_no_truncate'`, [partitionOf(months5)]);
    expect(trigger).toBeDefined();
    // The database refuses an id that does not carry its receipt's time, in the legacy partition as in the others.
    for (const at of [boundary - 2, boundary + 2]) {
      await expect(
        db().query(
          `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at)
           VALUES ($1, $2, $3, $4, '{}', 'visitor-x', $5, $6)`,
          [receiptId(new Date(at + 1)), shop.project, shop.version, shop.consentHash, key.id, new Date(at)],
        ),
      ).rejects.toThrow(/receipts_id_time/);
    }
    clock = new Date();
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the parent and on every partition', async () => {
    const counted = (await digest(db())).count;
    const relations = ['receipts', ...(await db().query<{ name: string }>(`SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'receipts'::regclass`)).map((r) => r.name)];
    expect(relations.length).toBeGreaterThanOrEqual(5);
    for (const relation of relations) {
      // Row triggers refuse rows: every partition has some (the receipts written above).
      const [held] = await db().query<{ n: string | number }>(`SELECT count(*) AS n FROM ${relation}`);
      expect(Number(held!.n), relation).toBeGreaterThan(0);
      await expect(db().query(`UPDATE ${relation} SET sdk_version = 'changed'`), relation).rejects.toThrow(/immutable: UPDATE refused/);
      await expect(db().query(`DELETE FROM ${relation}`), relation).rejects.toThrow(/immutable: DELETE refused/);
      await expect(db().query(`TRUNCATE ${relation}`), relation).rejects.toThrow(/immutable: TRUNCATE refused/);
    }
    expect((await digest(db())).count).toBe(counted);
  });

  it('finds legacy receipts by id, whether or not their id carries their time: node(), the graph, the proof', async () => {
    const wanted = [skewed[0]!, movedClock.id, imported.id, lastLegacy.id, ...sharing.map((r) => r.id)];
    const nodes = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Receipt { createdAt } } }`, { ids: wanted });
    expect(nodes.body.errors).toBeUndefined();
    expect(nodes.body.data.nodes.map((n: { id: string }) => n.id)).toEqual(wanted);
    expect(nodes.body.data.nodes[1].createdAt).toBe(new Date(movedClock.createdAt).toISOString());
    // A uuidv7 no receipt has: not found, like any unknown id.
    const unknown = await gql(`query($id: ID!) { node(id: $id) { id } }`, { id: receiptId(new Date(movedClock.createdAt)) });
    expect(unknown.body.data.node).toBeNull();

    // The operator graph's page of a project's receipts (ids read back with their times).
    const page = await gql(`query($id: ID!) { project(id: $id) { receipts(first: 7) { edges { node { id createdAt } } } } }`, { id: shop.project });
    expect(page.body.errors).toBeUndefined();
    const listed = await server.request('GET', `/api/platform/projects/${shop.project}/receipts?limit=7`, { token: owner.token });
    expect(page.body.data.project.receipts.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(listed.body.receipts.map((r: { id: string }) => r.id));

    const proof = (id: string) => server.request('GET', `/api/platform/projects/${shop.project}/receipts/${id}/proof`, { token: owner.token });
    for (const id of [movedClock.id, imported.id]) expect((await proof(id)).body.code).toBe('receipt_not_sealed');
    expect((await proof(receiptId(new Date(movedClock.createdAt)))).status).toBe(404);
    await sealDue(server.services);
    for (const id of [movedClock.id, imported.id, skewed[0]!]) {
      const res = await proof(id);
      expect(res.status, res.text).toBe(200);
      expect(res.body.receipt.id).toBe(id);
    }
  });

  it('answers the evidence package from the rollup exactly as the receipts say', async () => {
    const res = await server.request('GET', `/api/platform/projects/${shop.project}/evidence/publish/${shop.version}`, { token: owner.token });
    expect(res.status, res.text).toBe(200);
    const [truth] = await db().query<{ count: string | number; first: Date }>('SELECT count(*) AS count, min(created_at) AS first FROM receipts WHERE version_id = $1', [shop.version]);
    expect(res.body.evidence.receiptsCount).toBe(Number(truth!.count));
    expect(res.body.evidence.firstReceiptAt).toBe(new Date(truth!.first).toISOString());
  });

  it('reads only the partitions of the range the list asks for', async () => {
    const list = async (query: string) => {
      const sent = await statementsSent(server, async () => {
        const res = await server.request('GET', `/api/platform/projects/${shop.project}/receipts${query}`, { token: owner.token });
        expect(res.status, res.text).toBe(200);
      });
      const statement = sent.find((s) => /FROM "public"\."receipts"/.test(s.sql) && /ORDER BY/.test(s.sql));
      expect(statement, sent.map((s) => s.sql).join('\n')).toBeDefined();
      return statement!;
    };
    const all = (await db().query<{ name: string }>(`SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'receipts'::regclass`)).map((r) => r.name).sort();
    // A range within one month: that month's partition alone, at planning.
    const month = new Date(boundary).toISOString();
    const inMonth = await list(`?from=${month}&to=${new Date(boundary + DAY_MS).toISOString()}`);
    expect(partitionsIn(await planOf(db(), inMonth.sql, inMonth.params))).toEqual([partitionOf(boundary)]);
    // A cursor page: the cursor's partition and older ones, never the newer.
    const first = await server.request('GET', `/api/platform/projects/${shop.project}/receipts?limit=2&to=${new Date(boundary + DAY_MS).toISOString()}`, { token: owner.token });
    const cursor = await list(`?limit=2&cursor=${first.body.nextCursor}`);
    expect(partitionsIn(await planOf(db(), cursor.sql, cursor.params))).toEqual([partitionOf(boundary), 'receipts_legacy']);
    // The first page (no range): partitions newest first, read until the page is full (limit 1 reads 2 rows, to
    // know whether there is a next page): the two newest receipts' partitions and any empty month between. The
    // legacy partition, every receipt before partitioning, is never read.
    const newest = await list('?limit=1');
    const analysed = await planOf(db(), `(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${newest.sql}`, newest.params);
    const ran = analysed.split('\n').filter((line) => / on receipts_\w+/.test(line) && !/never executed/.test(line));
    const [latest, second] = (
      await db().query<{ part: string }>('SELECT tableoid::regclass::text AS part FROM receipts WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT 2', [shop.project])
    ).map((row) => row.part);
    expect(second).not.toBe('receipts_legacy');
    expect(partitionsIn(ran.join('\n'))).toEqual(all.filter((name) => name >= second! && name <= latest! && name !== 'receipts_legacy'));
    expect(analysed).toMatch(/on receipts_legacy \w+ \(never executed\)/);
  });
});

describe('the partitioning migration, its other paths', () => {
  const parts = async (db: Database) =>
    (await db.query<{ name: string }>(`SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'receipts'::regclass ORDER BY 1`)).map((r) => r.name);
  const legacyBefore = async (db: Database) => new Date((await db.query<{ before: Date }>('SELECT before FROM receipts_legacy()'))[0]!.before).getTime();

  it("uses a large installation's key, index and bound built beforehand, without building or checking them again", async () => {
    const { db } = await beforePartitioning();
    const shop = await addProject(db, 1);
    await addReceipts(db, [{ id: receiptId(new Date(Date.now() - DAY_MS)), project: shop, createdAt: Date.now() - DAY_MS }]);
    // docs/operations.md: CONCURRENTLY on PostgreSQL, so receipts are written meanwhile (the embedded database has
    // one connection: a plain build); a bound two months ahead, checked without blocking writes.
    const concurrently = onPostgres ? 'CONCURRENTLY' : '';
    const bound = new Date(monthStart(Date.now(), 2)).toISOString();
    await db.query(`CREATE UNIQUE INDEX ${concurrently} receipts_legacy_key ON receipts (project_id, created_at, id)`);
    await db.query(`CREATE INDEX ${concurrently} receipts_legacy_created_at_idx ON receipts (created_at)`);
    await db.query(`ALTER TABLE receipts ADD CONSTRAINT receipts_legacy_bound CHECK (created_at < '${bound}') NOT VALID`);
    await db.query('ALTER TABLE receipts VALIDATE CONSTRAINT receipts_legacy_bound');
    const built = await db.query<{ oid: number }>(`SELECT to_regclass(name)::oid::int AS oid FROM unnest(ARRAY['receipts_legacy_key', 'receipts_legacy_created_at_idx']) AS name`);
    await migrate(db);
    const indexes = await db.query<{ oid: number; name: string }>(`SELECT indexrelid::int AS oid, indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'receipts_legacy'::regclass ORDER BY 2`);
    expect(indexes.map((i) => i.name)).toEqual(['receipts_legacy_created_at_idx', 'receipts_legacy_decision_idx', 'receipts_legacy_pkey', 'receipts_legacy_project_id_subject_hash_created_at_idx']);
    // The same indexes (the key renamed as the constraint's), not new builds; later migrations' indexes (the decision's,
    // the signed-in person's) are built on every partition.
    expect(indexes.filter((i) => !['receipts_legacy_decision_idx', 'receipts_legacy_project_id_subject_hash_created_at_idx'].includes(i.name)).map((i) => i.oid).sort()).toEqual(built.map((b) => b.oid).sort());
    expect(await legacyBefore(db)).toBe(Date.parse(bound));
    expect(await parts(db)).toEqual([partitionOf(Date.parse(bound)), 'receipts_legacy']);
    expect(await db.query(`SELECT 1 FROM pg_constraint WHERE conname = 'receipts_legacy_bound'`)).toEqual([]);
    await db.close();
  });

  it('refuses a prebuilt key of another shape, changing nothing; puts the boundary after a receipt dated later than now', async () => {
    const { db } = await beforePartitioning();
    const shop = await addProject(db, 1);
    // A receipt a month ahead (a clock set wrong): the legacy partition must hold it.
    const ahead = monthStart(Date.now(), 1) + 3_600_000;
    await addReceipts(db, [{ id: receiptId(new Date(ahead)), project: shop, createdAt: ahead }]);
    await db.query('CREATE UNIQUE INDEX receipts_legacy_key ON receipts (id, created_at)');
    await expect(migrate(db)).rejects.toThrow(/index receipts_legacy_key exists but is not a valid/);
    expect(await db.query(`SELECT 1 FROM pg_class WHERE relname = 'receipts' AND relkind = 'r'`)).toHaveLength(1);
    await db.query('DROP INDEX receipts_legacy_key');
    await migrate(db);
    expect(await legacyBefore(db)).toBe(monthStart(ahead, 1));
    // This month and the next are in it; the one after (made ahead) is the first of its own.
    expect(await parts(db)).toEqual([partitionOf(monthStart(ahead, 1)), 'receipts_legacy']);
    const [row] = await db.query<{ part: string }>('SELECT tableoid::regclass::text AS part FROM receipts');
    expect(row!.part).toBe('receipts_legacy');
    await db.close();
  });

  it('lets a fresh installation drop its empty legacy partition and make past months, to import history by month', async () => {
    const { db } = await beforePartitioning();
    const shop = await addProject(db, 1);
    await migrate(db);
    await db.query('ALTER TABLE receipts DETACH PARTITION receipts_legacy');
    await db.query('DROP TABLE receipts_legacy');
    const past = Date.UTC(2025, 5, 17, 12);
    expect(await db.query<{ made: string }>('SELECT receipts_make_partition($1) AS made', [new Date(past)])).toEqual([{ made: 'receipts_2025_06' }]);
    await addReceipts(db, [{ id: receiptId(new Date(past)), project: shop, createdAt: past }]);
    const [row] = await db.query<{ part: string }>('SELECT tableoid::regclass::text AS part FROM receipts');
    expect(row!.part).toBe('receipts_2025_06');
    await expect(db.query('DELETE FROM receipts_2025_06')).rejects.toThrow(/immutable: DELETE refused/);
    await db.close();
  });
});
