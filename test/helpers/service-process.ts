import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { checkAnswersOf, forgetServer } from './openapi-conformance.js';
import { freshDatabaseUrl } from './server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A port that was free a moment ago (PORT=0 would not tell us which one the child took). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

/**
 * A new DATA_DIR (under the system's temporary directory) that already holds the migrated embedded database:
 * a copy of the one the run's global setup made (test/helpers/database-image.ts), so a service started on it
 * skips initdb and the migrations (4.3 s to ready on an empty directory, 1.7 s on a copy). Empty outside
 * vitest. Tests of a first start on an empty directory make their own.
 */
export function migratedDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const seed = process.env.TEST_PGLITE_DATA_DIR;
  if (seed) cpSync(seed, dir, { recursive: true });
  return dir;
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Everything the child wrote, for failure messages. */
  output(): string;
}

/**
 * Starts the service as `npm start` does (the compiled `dist/src/main.js` under plain node, built by
 * test/helpers/build-service.ts) in its own process, and waits until /api/ready answers. One node
 * process, so a signal sent to its pid reaches the service itself.
 */
export async function spawnService(env: Record<string, string>, port: number): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A test that times out before it stops its child must not leave a service running after the run
  // (seen: a child still serving an hour later after a 60 s timeout on a loaded machine).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}) before it was ready:\n${output}`);
    try {
      if ((await fetch(`${url}/api/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not ready within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Its answers are checked against the OpenAPI document like an in-process server's.
  checkAnswersOf(url);
  void exited.then(() => forgetServer(url));
  return { url, child, exited, output: () => output };
}

/**
 * A SQL connection to the service's database: PostgreSQL by URL, or the
 * embedded database through the running service's Unix socket in DATA_DIR.
 */
export async function connectSql(target: { databaseUrl?: string; dataDir?: string }): Promise<pg.Client> {
  const client = new pg.Client(
    target.databaseUrl
      ? { connectionString: target.databaseUrl }
      : { host: target.dataDir, port: 5432, user: 'postgres', database: 'postgres' },
  );
  await client.connect();
  return client;
}

/**
 * What a test that kills a service process needs (test/fault-injection.test.ts, test/sdk-idempotency-process.test.ts):
 * a database of its own (a fresh PostgreSQL database, or a copy of the migrated embedded one), the environment that
 * points a service at it, a port, and `start`, which spawns the service and registers its SIGKILL in `cleanups`.
 */
export async function killableService(prefix: string, cleanups: (() => unknown)[]) {
  let env: Record<string, string>;
  let target: { databaseUrl?: string; dataDir?: string };
  if (process.env.TEST_DATABASE_URL) {
    const databaseUrl = (await freshDatabaseUrl())!;
    env = { DATABASE_URL: databaseUrl };
    target = { databaseUrl };
  } else {
    const dataDir = migratedDataDir(prefix);
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    env = { DATA_DIR: dataDir };
    target = { dataDir };
  }
  const port = await freePort();
  const start = async (): Promise<ServiceProcess> => {
    const service = await spawnService(env, port);
    cleanups.push(() => {
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
      return service.exited;
    });
    return service;
  };
  return { env, target, port, start };
}

/**
 * Starts a scanner-only process as `npm run scanner` does (`dist/src/scanner/main.js`), and waits for its
 * `scanner running` log line (it serves nothing to poll). LOG_LEVEL info: its `scan started` lines say which
 * scans it ran.
 */
export async function spawnScanner(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['dist/src/scanner/main.js'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let ready: () => void;
  const running = new Promise<void>((resolve) => (ready = resolve));
  const listen = (chunk: Buffer) => {
    output += chunk;
    if (output.includes('"msg":"scanner running"')) ready();
  };
  child.stdout!.on('data', listen);
  child.stderr!.on('data', listen);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const outcome = await Promise.race([running.then(() => 'running' as const), exited.then(() => 'exited' as const)]);
  if (outcome === 'exited') throw new Error(`scanner exited (${child.exitCode}) before it ran:\n${output}`);
  return { url: '', child, exited, output: () => output };
}

/**
 * A crash mid-send (test/fault-injection.test.ts, test/sdk-idempotency-process.test.ts): `count` requests start 25 ms
 * apart and `service` is SIGKILLed the moment the first is answered 201 (or after 30 s). Resolves with the answers
 * heard by index once every request ended; requests the dying process left unanswered are not in it.
 */
export async function sendUntilKilled<R extends { status: number }>(service: ServiceProcess, count: number, send: (i: number) => Promise<R>): Promise<Map<number, R>> {
  const heard = new Map<number, R>();
  let killed = false;
  const kill = () => {
    if (!killed) service.child.kill('SIGKILL');
    killed = true;
  };
  const safety = setTimeout(kill, 30_000);
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 25));
      if (killed) return;
      try {
        const res = await send(i);
        if (res.status === 201) {
          heard.set(i, res);
          kill();
        }
      } catch {
        // the connection died with the process: no answer
      }
    }),
  );
  clearTimeout(safety);
  return heard;
}
