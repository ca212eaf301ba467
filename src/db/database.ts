import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';

/** What the service needs from a database, whichever engine runs it. */
export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /** Parameterised SQL for the migration runner, probes and hand-tuned hot paths. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs `fn` on one connection (advisory locks and multi-statement scripts need that). */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /** The embedded engine, when there is one (the Unix-socket bridge needs it). */
  pglite?: PGlite;
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
export async function openDatabase(options: { databaseUrl?: string; dataDir: string }, image?: Blob): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir, image);
}

function openPostgres(url: string): Database {
  // Many short queries from many requests: a pool sized for a 2-core box with headroom.
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DATABASE_POOL_SIZE ?? 20) });
  pool.on('error', () => {}); // idle-client errors surface on the next query; /api/ready reports them
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: 'postgres',
    prisma,
    async query(sql, params) {
      return (await pool.query(sql, params as unknown[])).rows;
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
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string, image?: Blob): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(resolve(dataDir), { recursive: true });
  const db = await PGlite.create(inMemory ? dataDir : resolve(dataDir), { loadDataDir: inMemory ? image : undefined });
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
    async close() {
      await prisma.$disconnect();
      if (!db.closed) await db.close();
    },
  };
}
