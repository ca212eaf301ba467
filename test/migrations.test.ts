import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../src/db/migrate.js';
import { getDatamodel } from '../src/generated/pothos-types.js';
import { receiptId } from '../src/receipts/ids.js';
import { freshDatabaseUrl, onPostgres } from './helpers/server.js';

/** A fresh, empty database of the kind this run uses (PostgreSQL when TEST_DATABASE_URL is set). */
async function freshDatabase(): Promise<Database> {
  return openDatabase({ databaseUrl: await freshDatabaseUrl(), dataDir: 'memory://' });
}

const opened: Database[] = [];
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(opened.map((db) => db.close().catch(() => {})));
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});
async function track(db: Promise<Database>) {
  const ready = await db;
  opened.push(ready);
  return ready;
}

/** A copy of the real migrations folder that a test may change. */
function migrationsCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  temps.push(dir);
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

describe('a freshly migrated database matches prisma/schema.prisma', () => {
  let db: Database;
  beforeAll(async () => {
    db = await track(freshDatabase());
    expect(await migrate(db)).toEqual(listMigrations().map((m) => m.name));
  });

  type Field = ReturnType<typeof getDatamodel>['datamodel']['models'][string]['fields'][number];
  const models = getDatamodel().datamodel.models;
  const runtime = (db: Database) =>
    (db.prisma as unknown as { _runtimeDataModel: { models: Record<string, { dbName: string | null; fields: { name: string; kind: string; dbName?: string | null }[] }> } })
      ._runtimeDataModel.models;

  it('has exactly the tables and columns of the data model', async () => {
    // Partitions (receipts' months) are not tables of the model: their parent is.
    const tables = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
         AND NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass(quote_ident(table_name)) AND relispartition)`,
    );
    const actual = new Map<string, string[]>();
    for (const row of tables) actual.set(row.table_name, [...(actual.get(row.table_name) ?? []), row.column_name]);
    const expected = new Map<string, string[]>();
    for (const [name, model] of Object.entries(runtime(db))) {
      expected.set(
        model.dbName ?? name,
        model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum').map((f) => f.dbName ?? f.name),
      );
    }
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [table, columns] of expected) expect(actual.get(table)!.sort(), table).toEqual([...columns].sort());
  });

  it('writes and reads back every field of every model through the Prisma client', async () => {
    let serial = 0;
    const created = new Map<string, Record<string, unknown>>();
    const sample = (model: string, field: Field): unknown => {
      serial++;
      if (field.isList && field.type === 'DateTime') return [new Date(Date.UTC(2026, 10, 22, 10, 0, serial % 60, 123)), new Date(Date.UTC(2026, 10, 23))];
      if (field.isList) return [`${field.name}-a-${serial}`, `${field.name}-b`];
      switch (field.type) {
        case 'String':
          return field.isId ? uuidv7() : `${model}.${field.name}.${serial}`;
        case 'Int':
          return 1000 + serial;
        case 'BigInt':
          return BigInt(1000 + serial);
        case 'Boolean':
          return serial % 2 === 0;
        case 'DateTime':
          // `@db.Date` columns keep the day only (the Pothos datamodel does not say which they are).
          if (`${model}.${field.name}` === 'ConsentStatsDaily.day') return new Date(Date.UTC(2026, 10, 22));
          return new Date(Date.UTC(2026, 10, 22, 10, 0, serial % 60, 123));
        case 'Json':
          return { nested: { list: [1, 'two', true, null] }, serial };
        case 'Role':
          return 'ADMIN';
        case 'Bytes':
          return new Uint8Array(Buffer.from(`${model}.${field.name}.${serial}`));
        default:
          throw new Error(`No sample value for ${model}.${field.name}: ${field.type} (extend this test)`);
      }
    };
    // Parents before children: a model is ready when every relation it owns points at a created model.
    const pending = Object.keys(models);
    const idFieldOf = (model: string) => models[model]!.fields.find((f) => f.isId)!.name;
    while (pending.length) {
      const index = pending.findIndex((name) =>
        models[name]!.fields.every((f) => f.kind !== 'object' || !f.relationFromFields?.length || f.type === name || created.has(f.type)),
      );
      expect(index, `relation cycle among ${pending.join(', ')}`).toBeGreaterThanOrEqual(0);
      const name = pending.splice(index, 1)[0]!;
      const fields = models[name]!.fields;
      const foreignKeys = new Map<string, string>();
      for (const relation of fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length)) {
        foreignKeys.set(relation.relationFromFields![0]!, relation.type);
      }
      const data: Record<string, unknown> = {};
      for (const field of fields.filter((f) => f.kind !== 'object')) {
        const parent = foreignKeys.get(field.name);
        data[field.name] = parent ? created.get(parent)![idFieldOf(parent)] : sample(name, field);
      }
      // A receipt's id carries its time (the database checks it: src/receipts/ids.ts).
      if (name === 'Receipt') data.id = receiptId(data.createdAt as Date);
      const delegate = (db.prisma as unknown as Record<string, { create(a: unknown): Promise<Record<string, unknown>>; findUniqueOrThrow(a: unknown): Promise<Record<string, unknown>> }>)[
        name[0]!.toLowerCase() + name.slice(1)
      ]!;
      await delegate.create({ data });
      // A compound primary key (consent_stats_daily) is found by its fields together.
      const compound = models[name]!.primaryKey?.fields;
      const where = compound
        ? { [compound.join('_')]: Object.fromEntries(compound.map((f) => [f, data[f]])) }
        : { [idFieldOf(name)]: data[idFieldOf(name)] };
      const read = await delegate.findUniqueOrThrow({ where });
      for (const field of fields.filter((f) => f.kind !== 'object' && !f.isUpdatedAt)) {
        expect(read[field.name], `${name}.${field.name}`).toEqual(data[field.name]);
      }
      created.set(name, read);
    }
    expect([...created.keys()].sort()).toEqual(Object.keys(models).sort());
  });

  it('keeps consent versions and receipts immutable at the database level', async () => {
    for (const table of ['consent_versions', 'receipts']) {
      await expect(db.query(`UPDATE ${table} SET id = id`)).rejects.toThrow();
      await expect(db.query(`DELETE FROM ${table}`)).rejects.toThrow();
      const [row] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
      expect(Number(row!.n), table).toBeGreaterThan(0);
    }
  });

  it('re-running migrate is a no-op', async () => {
    const before = await db.query('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');
    expect(await migrate(db)).toEqual([]);
    expect(await db.query('SELECT * FROM "_prisma_migrations" ORDER BY migration_name')).toEqual(before);
  });

  it('records each migration in _prisma_migrations with Prisma columns and checksums', async () => {
    const columns = await db.query<{ column_name: string; data_type: string; is_nullable: string }>(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY column_name`,
    );
    expect(columns.map((c) => [c.column_name, c.data_type, c.is_nullable])).toEqual([
      ['applied_steps_count', 'integer', 'NO'],
      ['checksum', 'character varying', 'NO'],
      ['finished_at', 'timestamp with time zone', 'YES'],
      ['id', 'character varying', 'NO'],
      ['logs', 'text', 'YES'],
      ['migration_name', 'character varying', 'NO'],
      ['rolled_back_at', 'timestamp with time zone', 'YES'],
      ['started_at', 'timestamp with time zone', 'NO'],
    ]);
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');
    expect(rows.map((r) => r.migration_name)).toEqual(listMigrations().map((m) => m.name));
    for (const [i, migration] of listMigrations().entries()) {
      expect(rows[i]!.checksum).toBe(createHash('sha256').update(migration.sql).digest('hex'));
      expect(rows[i]!.finished_at).toBeInstanceOf(Date);
      expect(rows[i]!.rolled_back_at).toBeNull();
      expect(rows[i]!.applied_steps_count).toBe(1);
    }
  });
});

describe('the migration runner', () => {
  it('refuses to run when an applied migration was changed afterwards', async () => {
    const dir = migrationsCopy();
    const db = await track(freshDatabase());
    await migrate(db, dir);
    const [first] = listMigrations(dir);
    appendFileSync(join(dir, first!.name, 'migration.sql'), '\n-- edited after it was applied\n');
    await expect(migrate(db, dir)).rejects.toThrow(/changed after it was applied/);
  });

  it('applies a failing migration not at all: no row, no half-made table, and tells which one', async () => {
    const dir = migrationsCopy();
    mkdirSync(join(dir, '29991231000000_broken'));
    writeFileSync(join(dir, '29991231000000_broken', 'migration.sql'), 'CREATE TABLE "half_made" (id int);\nSELECT no_such_function();\n');
    const db = await track(freshDatabase());
    await expect(migrate(db, dir)).rejects.toThrow(/29991231000000_broken/);
    const [{ n }] = (await db.query<{ n: string }>(`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'half_made'`)) as [{ n: string }];
    expect(Number(n)).toBe(0);
    const names = (await db.query<{ migration_name: string }>('SELECT migration_name FROM "_prisma_migrations"')).map((r) => r.migration_name);
    expect(names).toEqual(listMigrations().map((m) => m.name));
  });

  it.runIf(onPostgres)('lets only one of two concurrent runs apply each migration (advisory lock)', async () => {
    const url = (await freshDatabaseUrl())!;
    const [a, b] = await Promise.all([track(openDatabase({ databaseUrl: url, dataDir: '' })), track(openDatabase({ databaseUrl: url, dataDir: '' }))]);
    const [ranA, ranB] = await Promise.all([migrate(a), migrate(b)]);
    expect([...ranA, ...ranB].sort()).toEqual(listMigrations().map((m) => m.name).sort());
    const rows = await a.query<{ migration_name: string }>('SELECT migration_name FROM "_prisma_migrations"');
    expect(rows).toHaveLength(listMigrations().length);
  });
});
