// A PostgreSQL primary and its streaming standby of the test's own, made with initdb and
// `pg_basebackup -R` in a temporary directory on free ports: the shared server is never touched or
// restarted, and a fresh CI machine needs only the PostgreSQL server binaries (PG_BIN, else `pg_config
// --bindir`, else the newest /usr/lib/postgresql/*/bin). initdb refuses root: as root, every command
// runs as the `postgres` user (runuser).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface StandbyPair {
  primaryUrl(database: string): string;
  standbyUrl(database: string): string;
  /** SQL on the primary's or the standby's `postgres` database. */
  primary(sql: string): Promise<Record<string, unknown>[]>;
  standby(sql: string): Promise<Record<string, unknown>[]>;
  stopStandby(): void;
  startStandby(): void;
  close(): void;
}

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config: look where Debian puts the server
  }
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error('PostgreSQL server binaries not found: set PG_BIN (the directory holding initdb, pg_ctl, pg_basebackup)');
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startStandbyPair(): Promise<StandbyPair> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const dir = mkdtempSync(join(tmpdir(), 'pg-standby-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const primaryDir = join(dir, 'primary');
  const standbyDir = join(dir, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const start = (data: string, name: string) => run('pg_ctl', ['-D', data, '-l', join(dir, `${name}.log`), '-w', '-t', '60', 'start']);
  const stop = (data: string) => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);

  run('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  // Streaming needs wal_level replica and WAL senders (initdb's defaults, said here so they hold);
  // initdb -A trust also trusts local replication connections. fsync off: test data, not kept.
  appendFileSync(
    join(primaryDir, 'postgresql.conf'),
    `\nport = ${primaryPort}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nwal_level = replica\nmax_wal_senders = 4\n` +
      `fsync = off\nshared_buffers = 16MB\nmax_connections = 40\n`,
  );
  start(primaryDir, 'primary');
  const stopAll = () => {
    for (const data of [standbyDir, primaryDir]) {
      try {
        stop(data);
      } catch {
        // not running
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // -R writes standby.signal and primary_conninfo: the copy starts as a streaming standby.
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
    appendFileSync(join(standbyDir, 'postgresql.conf'), `\nport = ${standbyPort}\n`);
    writeFileSync(join(dir, 'ports'), `${primaryPort} ${standbyPort}\n`);
    start(standbyDir, 'standby');
  } catch (error) {
    stopAll();
    throw error;
  }

  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const sql = async (port: number, text: string) => {
    const client = new pg.Client({ connectionString: url(port, 'postgres') });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    primaryUrl: (database) => url(primaryPort, database),
    standbyUrl: (database) => url(standbyPort, database),
    primary: (text) => sql(primaryPort, text),
    standby: (text) => sql(standbyPort, text),
    stopStandby: () => stop(standbyDir),
    startStandby: () => start(standbyDir, 'standby'),
    close: stopAll,
  };
}
