import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { listMigrations } from '../src/db/migrate.js';
import { PASSWORD } from './helpers/fixtures.js';
import { migratedDataDir } from './helpers/service-process.js';
import { socketPathFor } from '../src/db/socket.js';
import { TEST_LEDGER_SIGNING_KEY } from './helpers/ledger.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The compiled service, as `npm start` runs it (test/helpers/build-service.ts builds it before the suite).
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

interface Service {
  child: ChildProcess;
  port: number;
  lines: Record<string, unknown>[];
  /** Resolves with the first log line that matches. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
const temps: string[] = [];
afterAll(() => {
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL'); // the process group we started, if any of it is left
    } catch {
      // already gone
    }
  }
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** Starts the service as `npm start` would, in its own process group, reading its JSON log lines. */
async function startService(command: 'node' | 'npm', env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const { DATABASE_URL: _url, ...inherited } = process.env;
  const [file, args] = command === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, [MAIN]];
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...inherited, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let buffer = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = (match: (line: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const found = lines.find(match);
      if (found) return resolve(found);
      waiters.push({ match, resolve });
      void exited.then((code) => reject(new Error(`service exited (${code}) before the expected log line; stderr: ${stderr}`)));
    });
  await waitFor((line) => line.msg === 'listening');
  return { child, port, lines, waitFor, exited };
}

describe('configuration (decisions.md, Configuration)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './data',
      nodeEnv: 'development',
      production: false,
      publicBaseUrl: 'http://127.0.0.1:3000',
      redisUrl: undefined,
      billingProvider: 'mock',
      webhookRetryBaseMs: 5000,
      gitCommit: null,
      logLevel: 'info',
      introspection: true,
      trustProxy: false,
    });
    // Generated per start in development.
    expect(config.billingWebhookSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(loadConfig({}).billingWebhookSecret).not.toBe(config.billingWebhookSecret);
  });

  it('honours every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://app@db.internal:5432/consent',
      DATA_DIR: '/var/lib/consent',
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://consent.example.com/',
      REDIS_URL: 'redis://cache:6379',
      BILLING_PROVIDER: 'stripe',
      BILLING_WEBHOOK_SECRET: 'whsec_test',
      WEBHOOK_RETRY_BASE_MS: '250',
      GIT_COMMIT: 'abc1234',
      LOG_LEVEL: 'warn',
      LEDGER_SIGNING_KEY: TEST_LEDGER_SIGNING_KEY,
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://app@db.internal:5432/consent',
      dataDir: '/var/lib/consent',
      nodeEnv: 'production',
      production: true,
      publicBaseUrl: 'https://consent.example.com',
      redisUrl: 'redis://cache:6379',
      billingProvider: 'stripe',
      billingWebhookSecret: 'whsec_test',
      webhookRetryBaseMs: 250,
      gitCommit: 'abc1234',
      logLevel: 'warn',
      introspection: false,
    });
    expect(loadConfig({ HOST: '10.0.0.5', PORT: '4000' }).publicBaseUrl).toBe('http://10.0.0.5:4000');
    expect(loadConfig({ NODE_ENV: 'staging' })).toMatchObject({ nodeEnv: 'staging', production: false });
    // Empty values count as unset.
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 3000, databaseUrl: undefined });
  });

  it('refuses bad values with one readable line, and the mock billing provider in production', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/Invalid configuration: PORT/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ BILLING_PROVIDER: 'paypal' })).toThrow(/BILLING_PROVIDER/);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
    // Before the fix a secret was enough for the mock provider (whose checkout grants any plan) in production.
    expect(() => loadConfig({ NODE_ENV: 'production', BILLING_WEBHOOK_SECRET: 'set' })).toThrow(/BILLING_PROVIDER/);
    expect(loadConfig({ NODE_ENV: 'production', BILLING_PROVIDER: 'stripe', LEDGER_SIGNING_KEY: TEST_LEDGER_SIGNING_KEY }).production).toBe(true);
  });

  it('reads TRUST_PROXY as false, true (one proxy) or a number of proxies', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  // Fails on the old main: the process started and served the mock checkout (exit code null after SIGKILL, no message).
  it('production with BILLING_PROVIDER=mock does not start: exit 1 and a message naming the variable', async () => {
    const { DATABASE_URL: _url, ...inherited } = process.env;
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: { ...inherited, NODE_ENV: 'production', BILLING_PROVIDER: 'mock', BILLING_WEBHOOK_SECRET: 'set', LEDGER_SIGNING_KEY: TEST_LEDGER_SIGNING_KEY, DATA_DIR: 'memory://', PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain('BILLING_PROVIDER');
    expect(output).not.toMatch(/\n\s+at /); // one line, not a stack
  });
});

describe('npm start', () => {
  // One first start on an empty DATA_DIR for both (initdb and every migration: the costly part of this file).
  // Fails on the old main: DATA_DIR was 0755 with 0644 files and a socket anyone on the machine could connect to.
  it('applies pending migrations before serving, keeps DATA_DIR (0700), its files (0600) and the socket (0600) private to the service user, then stops with exit 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
    temps.push(dataDir);
    // As an older version or another umask may have left it.
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'left-by-an-older-version'), 'x', { mode: 0o644 });
    const service = await startService('npm', { DATA_DIR: dataDir });
    const migrated = service.lines.findIndex((line) => line.msg === 'migrations applied');
    const listening = service.lines.findIndex((line) => line.msg === 'listening');
    expect(migrated).toBeGreaterThanOrEqual(0);
    expect(migrated).toBeLessThan(listening);
    expect(service.lines[migrated]!.migrations).toEqual(listMigrations().map((m) => m.name));

    const health = await fetch(`http://127.0.0.1:${service.port}/api/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { checks: unknown }).checks).toEqual({ database: 'ok', migrations: 'ok' });

    // The embedded database on disk, while the service runs: private to the service user.
    const mode = (path: string) => statSync(path).mode & 0o777;
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(socketPathFor(dataDir))).toBe(0o600);
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        const stat = lstatSync(path);
        return stat.isDirectory() ? [path, ...walk(path)] : stat.isFile() ? [path] : [];
      });
    const entries = walk(dataDir);
    expect(entries.length).toBeGreaterThan(10);
    for (const path of entries) expect([path, mode(path)]).toEqual([path, statSync(path).isDirectory() ? 0o700 : 0o600]);

    // npm's one child is the compiled service under plain node (no shell, no tsx loader process in between).
    const pid = service.child.pid!;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
    expect(children).toHaveLength(1);
    expect(readFileSync(`/proc/${children[0]}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1)).toEqual(['dist/src/main.js']);

    // As a process manager would: SIGTERM to npm only, which must hand it to the service
    // (package.json's `exec` makes sure no shell in between swallows it).
    process.kill(service.child.pid!, 'SIGTERM');
    await service.waitFor((line) => line.msg === 'shutting down');
    expect(await service.exited).toBe(0);

    // The files were closed cleanly and hold the applied migrations.
    const db = await openDatabase({ dataDir });
    try {
      const rows = await db.query<{ migration_name: string; finished_at: Date | null }>('SELECT migration_name, finished_at FROM "_prisma_migrations"');
      expect(rows.map((row) => row.migration_name)).toEqual(listMigrations().map((m) => m.name));
      for (const row of rows) expect(row.finished_at).toBeInstanceOf(Date);
    } finally {
      await db.close();
    }
  }, 180_000); // npm start builds and migrates first: over a minute on a loaded 2-core machine (CI on Node 26 once)
});

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, then exits 0', async () => {
    const dataDir = migratedDataDir('sigterm-');
    temps.push(dataDir);
    const service = await startService('node', { DATA_DIR: dataDir });
    const body = JSON.stringify({ email: `slow-${Date.now()}@example.com`, password: PASSWORD, name: 'Slow' });
    const half = Math.floor(body.length / 2);

    // A slow upload: headers and half of the body now, the rest after SIGTERM. `Expect: 100-continue`
    // makes the server confirm it has taken the request before we signal.
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: service.port,
        method: 'POST',
        path: '/api/platform/auth/register',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
      });
      req.on('continue', async () => {
        req.write(body.slice(0, half));
        process.kill(service.child.pid!, 'SIGTERM');
        await service.waitFor((line) => line.msg === 'shutting down');
        // No new connections once shutdown has begun.
        const refused = await fetch(`http://127.0.0.1:${service.port}/api/ready`).then(
          () => false,
          () => true,
        );
        expect(refused).toBe(true);
        req.end(body.slice(half));
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
    });

    const answered = await response;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.text).user.name).toBe('Slow');
    expect(await service.exited).toBe(0);
    expect(service.lines.some((line) => line.msg === 'request' && line.status === 201)).toBe(true);
  });
});

describe('the request log (src/logger.ts)', () => {
  it('writes a lone line within the flush interval, and the lines still buffered when the process exits', async () => {
    const dataDir = migratedDataDir('log-');
    temps.push(dataDir);
    const service = await startService('node', { DATA_DIR: dataDir });
    const get = (id: string) => fetch(`http://127.0.0.1:${service.port}/api/ready`, { headers: { 'x-request-id': id } });
    // One request, then quiet: its line is far short of the 4 KB buffer, and the periodic flush writes it.
    expect((await get('lone-line')).status).toBe(200);
    await service.waitFor((line) => line.reqId === 'lone-line' && line.msg === 'request');

    // A burst, then SIGTERM at once: what is still buffered is written before the process ends.
    const ids = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    for (const id of ids) expect((await get(id)).status).toBe(200);
    const closed = new Promise((resolve) => service.child.once('close', resolve));
    process.kill(service.child.pid!, 'SIGTERM');
    expect(await service.exited).toBe(0);
    await closed;
    for (const id of ids) expect(service.lines.filter((line) => line.reqId === id && line.msg === 'request'), id).toHaveLength(1);
  });
});
