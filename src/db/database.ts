import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';

/** What the service needs from a database, whichever engine runs it. */
export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /**
   * Parameterised SQL for the migration runner, probes and hand-tuned hot paths. `name` prepares the statement once
   * per connection on PostgreSQL (the same name must always carry the same text); the embedded engine ignores it.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[], options?: { name?: string }): Promise<Row[]>;
  /** Runs `fn` on one connection (advisory locks and multi-statement scripts need that). */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in one transaction on plain SQL (no Prisma: the ledger's sealing reads thousands of rows), committed
   * when it resolves, rolled back when it throws. On the embedded engine it holds PGlite's transaction lock, so no
   * other query lands inside it.
   */
  transaction<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /** The embedded engine, when there is one (the Unix-socket bridge needs it). */
  pglite?: PGlite;
  /** The PostgreSQL connection pool's counts (metrics); the embedded database has none. */
  pool?: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>;
  close(): Promise<void>;
}

export interface Connection {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Several statements separated by semicolons, no parameters. */
  exec(sql: string): Promise<void>;
}

/**
 * `image`: a dump (PGlite `dumpDataDir`) an empty in-memory embedded database starts from instead of running
 * initdb; the test suite makes one migrated image and clones it for every test server.
 */
export async function openDatabase(options: { databaseUrl?: string; dataDir: string; databaseWaitMs?: number }, image?: Blob): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.databaseWaitMs ?? 2000) : openPglite(options.dataDir, image);
}

function openPostgres(url: string, waitMs: number): Database {
  // Many short queries from many requests: a pool sized for a 2-core box with headroom.
  // A wait for a connection (a free one, or a new one being opened) ends after DATABASE_WAIT_MS
  // with an error that src/db/unavailable.ts turns into 503, instead of queueing without end.
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DATABASE_POOL_SIZE ?? 20), connectionTimeoutMillis: waitMs });
  pool.on('error', () => {}); // idle-client errors surface on the next query; /api/ready reports them
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: 'postgres',
    prisma,
    pool,
    async query(sql, params, options) {
      return (await pool.query({ text: sql, values: params as unknown[], name: options?.name })).rows;
    },
    async withConnection(fn) {
      const client = await pool.connect();
      try {
        return await fn({
          query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
          exec: async (sql) => void (await client.query(sql)),
        });
      } finally {
        client.release();
      }
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
          exec: async (sql) => void (await client.query(sql)),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string, image?: Blob): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) makePrivate(resolve(dataDir));
  const db = await PGlite.create(inMemory ? dataDir : resolve(dataDir), { loadDataDir: inMemory ? image : undefined });
  // PGlite's file system (emscripten NODEFS) gives the files it makes 0666 whatever the umask:
  // tighten them once open and again at close; in between the 0700 directory keeps others out.
  const tighten = () => !inMemory && makePrivate(resolve(dataDir));
  tighten();
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
  const conn: Connection = {
    query: async (sql, params) => (await db.query(sql, params as unknown[])).rows as never,
    exec: async (sql) => void (await db.exec(sql)),
  };
  return {
    kind: 'pglite',
    prisma,
    pglite: db,
    query: conn.query,
    withConnection: (fn) => fn(conn),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async (sql, params) => (await tx.query(sql, params as unknown[])).rows as never, exec: async (sql) => void (await tx.exec(sql)) }),
      ),
    async close() {
      await prisma.$disconnect();
      if (!db.closed) await db.close();
      tighten();
    },
  };
}

/**
 * DATA_DIR holds every tenant's data: the service user's only. Directories 0700 and files 0600
 * (umask 077 for this process, which writes no other shared files, also makes the socket private),
 * and whatever an older version, another umask or PGlite made is tightened.
 */
function makePrivate(dir: string): void {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tighten = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if (stat.isDirectory()) {
      chmodSync(path, 0o700);
      for (const name of readdirSync(path)) tighten(join(path, name));
    } else {
      chmodSync(path, 0o600);
    }
  };
  tighten(dir);
}
