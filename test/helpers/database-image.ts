// vitest globalSetup: one migrated database per run that every test server clones, instead of each server
// creating and migrating its own (on the embedded database, initdb alone is most of a server's start-up).
// - Embedded: a PGlite dump of a migrated in-memory database, kept in node_modules/.cache and reused while
//   the migrations and the PGlite version are unchanged; TEST_PGLITE_IMAGE names the file for the workers.
//   Beside it the same database as a data directory on disk (TEST_PGLITE_DATA_DIR), which tests copy into the
//   DATA_DIR of a service they run in a process of its own (test/helpers/service-process.ts, migratedDataDir).
// - PostgreSQL: a template database migrated once (`CREATE DATABASE ... TEMPLATE`), named in TEST_PG_TEMPLATE,
//   marked IS_TEMPLATE so that a cleanup of test_* databases by a concurrent run cannot drop it.
// A test that needs an empty database (test/migrations.test.ts) still gets one from freshDatabaseUrl().
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEMPLATE_PREFIX = 'test_tmpl_';

// How the image is made (part of its key): a change here must not reuse an image made the old way.
const IMAGE_RECIPE = 'migrated; template0 and template1 dropped';

/** Changes whenever a clone could differ: the migrations, the embedded engine or the recipe. */
function imageKey(): string {
  const pglite = JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version;
  const hash = createHash('sha256').update(`pglite ${pglite}\n${IMAGE_RECIPE}\n`);
  for (const m of listMigrations()) hash.update(`${m.name} ${m.checksum}\n`);
  return hash.digest('hex').slice(0, 16);
}

async function pgliteImage(): Promise<string> {
  const dir = join(ROOT, 'node_modules/.cache/consent-service');
  const key = imageKey();
  const file = join(dir, `pglite-${key}.tar`);
  if (!existsSync(file)) {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrate(db);
      // Only the database the service uses (postgres) goes into the image: the templates are two thirds of the
      // rest and nothing in a test server creates a database. 41 MB -> 26 MB, a clone 130 ms faster to load.
      // One statement per call: DROP DATABASE refuses to run in the block a multi-statement string makes.
      for (const statement of [`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`, 'DROP DATABASE template0', 'DROP DATABASE template1', 'CHECKPOINT']) {
        await db.pglite!.exec(statement);
      }
      const dump = await db.pglite!.dumpDataDir('none');
      mkdirSync(dir, { recursive: true });
      const partial = `${file}.${process.pid}`;
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, file); // a concurrent run sees a whole file or none
      // Images of older migrations (26 MB each, and their data directories) would pile up otherwise.
      for (const name of readdirSync(dir)) {
        if (name.startsWith('pglite-') && !name.startsWith(`pglite-${key}`)) rmSync(join(dir, name), { recursive: true, force: true });
      }
    } finally {
      await db.close();
    }
  }
  return file;
}

/** The image as a data directory on disk (a service given it as DATA_DIR starts without initdb or migrations). */
async function pgliteDataDir(image: string): Promise<string> {
  const dir = image.replace(/\.tar$/, '-data');
  if (!existsSync(dir)) {
    const partial = `${dir}.${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    const db = await PGlite.create(partial, { loadDataDir: new Blob([readFileSync(image)]) });
    await db.close();
    try {
      renameSync(partial, dir); // a concurrent run sees a whole directory or none
    } catch (error) {
      if (!existsSync(dir)) throw error;
      rmSync(partial, { recursive: true, force: true }); // a concurrent run made it first
    }
  }
  return dir;
}

async function withAdmin<T>(adminUrl: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function dropTemplate(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`ALTER DATABASE "${name}" IS_TEMPLATE false`);
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** A migrated template for this run; returns the teardown that drops it. */
async function postgresTemplate(adminUrl: string): Promise<() => Promise<void>> {
  const name = `${TEMPLATE_PREFIX}${process.pid}_${randomBytes(3).toString('hex')}`;
  await withAdmin(adminUrl, async (admin) => {
    // Templates left by runs that were killed (their pid is gone); other live runs keep theirs.
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE '${TEMPLATE_PREFIX}%'`);
    for (const { datname } of rows) {
      const pid = Number(datname.slice(TEMPLATE_PREFIX.length).split('_')[0]);
      if (pid && !alive(pid)) await dropTemplate(admin, datname).catch(() => {});
    }
    await admin.query(`CREATE DATABASE "${name}"`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir: '' });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await withAdmin(adminUrl, (admin) => admin.query(`ALTER DATABASE "${name}" IS_TEMPLATE true`));
  process.env.TEST_PG_TEMPLATE = name;
  return () => withAdmin(adminUrl, (admin) => dropTemplate(admin, name)).catch((error) => console.warn(`could not drop ${name}:`, error));
}

export default async function setup(): Promise<(() => Promise<void>) | void> {
  // The embedded database's image on a PostgreSQL run too: some tests run the embedded database explicitly.
  process.env.TEST_PGLITE_IMAGE = await pgliteImage();
  process.env.TEST_PGLITE_DATA_DIR = await pgliteDataDir(process.env.TEST_PGLITE_IMAGE);
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) return postgresTemplate(adminUrl);
}
