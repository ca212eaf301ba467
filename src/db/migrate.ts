import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Connection, Database } from './database.js';

// Prisma's own migration lock id, so `prisma migrate deploy` and this runner exclude each other.
const MIGRATION_LOCK_ID = 72707369;
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

// The table `prisma migrate` keeps, with the same columns, so either tool can take over.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies pending migrations, each in its own transaction, one instance at a time. */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = listMigrations(dir);
  return db.withConnection(async (conn) => {
    await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      await conn.exec(CREATE_MIGRATIONS_TABLE);
      const applied = await appliedMigrations(conn);
      const ran: string[] = [];
      for (const file of files) {
        const previous = applied.get(file.name);
        if (previous) {
          if (previous !== file.checksum) {
            throw new Error(`Migration ${file.name} was changed after it was applied (checksum mismatch)`);
          }
          continue;
        }
        await applyOne(conn, file);
        ran.push(file.name);
      }
      return ran;
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  });
}

async function appliedMigrations(conn: Connection): Promise<Map<string, string>> {
  const rows = await conn.query<{ migration_name: string; checksum: string }>(
    `SELECT migration_name, checksum FROM "_prisma_migrations"
     WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  return new Map(rows.map((row) => [row.migration_name, row.checksum]));
}

async function applyOne(conn: Connection, file: MigrationFile): Promise<void> {
  await conn.exec('BEGIN');
  try {
    await conn.exec(file.sql);
    await conn.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), now(), 1)`,
      [randomUUID(), file.checksum, file.name],
    );
    await conn.exec('COMMIT');
  } catch (error) {
    await conn.exec('ROLLBACK');
    throw new Error(`Migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** For /api/health: every migration file on disk has been applied. */
export async function migrationsUpToDate(db: Database): Promise<boolean> {
  const rows = await db.query<{ migration_name: string }>(
    `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return listMigrations().every((file) => applied.has(file.name));
}
