import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { socketPathFor } from '../db/socket.js';
import { ADMIN_CLI } from '../audit/record.js';
import { parseTcfFile, storeTcfFile, type TcfFile } from '../tcf/vendor-list.js';
import { addMember, AdminError, listMembers, removeMember, type Sql } from './members.js';

const USAGE = `Usage: npm run admin -- member <command> [options]
  member add    --org <orgId|slug> --email <email> --role OWNER|ADMIN|VIEWER
  member remove --org <orgId|slug> --email <email>
  member list   --org <orgId|slug> [--json]
  tcf import <file>...   IAB GVL v3 files (vendor-list.json, archives/vendor-list-v<N>.json, purposes-<lang>.json)
                         and Google's Additional Consent providers CSV, for installations without internet (docs/tcf.md)
Uses DATABASE_URL, or the embedded database in DATA_DIR (through the running server's socket when it runs).`;

/**
 * Reaches the same database as the server: PostgreSQL by URL; the embedded
 * database through the running server's Unix socket, or directly when no server runs.
 */
async function connect(): Promise<{ sql: Sql; close(): Promise<void> }> {
  const config = loadConfig();
  if (config.databaseUrl) return pgConnection(config.databaseUrl);
  const socket = socketPathFor(config.dataDir);
  if (existsSync(socket)) {
    try {
      return await pgConnection({ host: dirname(socket), port: 5432, user: 'postgres', database: 'postgres' });
    } catch (error) {
      // Only a socket nobody listens on (left by a crashed server) lets us open the files ourselves:
      // opening them while a server runs would corrupt them.
      if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED') throw error;
    }
  }
  const db = await openDatabase({ dataDir: config.dataDir });
  await migrate(db);
  return { sql: db, close: () => db.close() };
}

async function pgConnection(config: string | pg.ClientConfig) {
  const client = new pg.Client(typeof config === 'string' ? { connectionString: config } : config);
  await client.connect();
  return {
    sql: { query: async (text: string, params?: unknown[]) => (await client.query(text, params)).rows } as Sql,
    close: () => client.end(),
  };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [group, command] = positionals;
  if (group === 'tcf') return tcfCommand(command, positionals.slice(2));
  if (group !== 'member' || !command || !values.org || (command !== 'list' && !values.email)) {
    console.error(USAGE);
    return 2;
  }
  const db = await connect();
  try {
    switch (command) {
      case 'add': {
        if (!values.role) throw new AdminError('--role is required');
        const member = await addMember(db.sql, { org: values.org, email: values.email!, role: values.role }, { via: ADMIN_CLI });
        console.log(`${member.email} is ${member.role} of ${values.org}`);
        return 0;
      }
      case 'remove':
        await removeMember(db.sql, { org: values.org, email: values.email! }, { via: ADMIN_CLI });
        console.log(`${values.email} removed from ${values.org}`);
        return 0;
      case 'list': {
        const members = await listMembers(db.sql, values.org);
        if (values.json) console.log(JSON.stringify(members));
        else for (const m of members) console.log(`${m.role.padEnd(6)}  ${m.email}  ${m.name}`);
        return 0;
      }
      default:
        console.error(USAGE);
        return 2;
    }
  } catch (error) {
    if (error instanceof AdminError) {
      console.error(`error: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}

/** `tcf import <file>...`: every file checked first, then stored; nothing is stored when one is not a TCF file. */
async function tcfCommand(command: string | undefined, files: string[]): Promise<number> {
  if (command !== 'import' || !files.length) {
    console.error(USAGE);
    return 2;
  }
  const parsed: { file: string; content: TcfFile }[] = [];
  for (const file of files) {
    try {
      parsed.push({ file, content: parseTcfFile(readFileSync(file, 'utf8'), file) });
    } catch (error) {
      console.error(`error: ${file}: ${(error as Error).message}`);
      return 1;
    }
  }
  const db = await connect();
  try {
    for (const { file, content } of parsed) console.log(`${file}: ${await storeTcfFile(db.sql, content)}`);
    return 0;
  } finally {
    await db.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  // Unexpected failures (database unreachable, bad arguments) still end with one clear line.
  console.error(`error: ${(error as Error).message}`);
  process.exitCode = 1;
}
