import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';
import { checkAnswersOf, forgetServer } from './openapi-conformance.js';

/**
 * The database the suite runs on: the embedded one by default, PostgreSQL
 * when TEST_DATABASE_URL is set (CI runs the suite both ways). Each server
 * gets a database of its own, so files run in parallel without sharing rows.
 */
export const onPostgres = !!process.env.TEST_DATABASE_URL;

/** An empty database; `migrated` clones the run's migrated template (test/helpers/database-image.ts) when there is one. */
export async function freshDatabaseUrl(options: { migrated?: boolean } = {}): Promise<string | undefined> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return undefined;
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const template = options.migrated && process.env.TEST_PG_TEMPLATE;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestServer extends RunningServer {
  /** Sends a request; JSON bodies are encoded, JSON responses decoded into `body`. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
}

export interface RequestOptions {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  /** Sent as is (malformed JSON tests). */
  raw?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Config overrides; `rateLimits` may name only the limits a test cares about. */
export type TestOverrides = Partial<Omit<Config, 'rateLimits'>> & { rateLimits?: Partial<Config['rateLimits']> };

/** Leaves sealing to the test (sealDue): no sealing round on the worker's own timer, whose statements and rows
 * would land inside what a test counts. */
export const sealingByTest = (): Pick<TestOverrides, 'ledger'> => ({ ledger: { ...loadConfig().ledger, sealIntervalMs: 3_600_000 } });

// Tests register and log in far more often than a person: the auth limits get out of the way
// unless a test sets them (test/rate-limits.test.ts checks the real defaults). SDK limits keep theirs.
const GENEROUS_AUTH_LIMITS: Partial<Config['rateLimits']> = {
  registerPerHour: 100_000,
  loginPerIp: 100_000,
  loginFailedPerEmailAndAddress: 100_000,
  loginFailedPerEmail: 100_000,
};

// scrypt at N=2^10 instead of production's 2^17: every register and login is ~100 times cheaper.
// test/auth.test.ts proves the default cost and the rehash at login on a server of its own.
const TEST_PASSWORD_HASH_LOG_N = 10;
const TEST_DATABASE_WAIT_MS = 10_000;

export async function startTestServer(
  overrides: TestOverrides = {},
  options: StartOptions = {},
): Promise<TestServer> {
  // `databaseUrl: undefined` given explicitly asks for the embedded database even on a PostgreSQL run.
  const databaseUrl = 'databaseUrl' in overrides ? overrides.databaseUrl : await freshDatabaseUrl({ migrated: true });
  const inMemory = !databaseUrl && (overrides.dataDir ?? 'memory://').startsWith('memory://');
  const running = await startServer(
    {
      port: 0,
      dataDir: 'memory://',
      logLevel: (process.env.TEST_LOG_LEVEL as Config['logLevel']) ?? 'silent',
      nodeEnv: 'test',
      passwordHashLogN: TEST_PASSWORD_HASH_LOG_N,
      // A new PostgreSQL connection can take seconds to open on a machine running two suites at once (seen: a
      // draft PUT answered 503 after the 2 s default). Tests of the bound set their own (test/outages.test.ts).
      databaseWaitMs: TEST_DATABASE_WAIT_MS,
      // Counters of their own: a REDIS_URL in the environment would make every test server share them.
      redisUrl: undefined,
      ...overrides,
      rateLimits: { ...loadConfig().rateLimits, ...GENEROUS_AUTH_LIMITS, ...overrides.rateLimits },
      databaseUrl,
    },
    { embeddedImage: inMemory ? embeddedImage() : undefined, ...options },
  );
  // A database made for this server goes with it (a second instance given the URL does not own it).
  const ownDatabase = !('databaseUrl' in overrides) ? databaseUrl : undefined;
  // Every answer a test receives from it is checked against the OpenAPI document (test/helpers/openapi-conformance.ts).
  checkAnswersOf(running.url);
  return {
    ...running,
    close: async () => {
      forgetServer(running.url);
      await running.close();
      if (ownDatabase) await dropDatabase(ownDatabase);
    },
    request: (method, path, options = {}) => send(running.url, method, path, options),
  };
}

let image: Blob | undefined;
/** The migrated embedded database the run's globalSetup dumped (none outside vitest: servers migrate). */
function embeddedImage(): Blob | undefined {
  const file = process.env.TEST_PGLITE_IMAGE;
  if (file) image ??= new Blob([readFileSync(file)]);
  return image;
}

export async function dropDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  try {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  } catch (error) {
    console.warn(`could not drop the test database of ${url}:`, error); // a leftover database fails nothing
  } finally {
    await admin.end().catch(() => {});
  }
}

export async function send(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  // One JSON document: application/json or a +json type (problem+json), not NDJSON (`application/x-ndjson`, the
  // exports: a document per line).
  if (/^application\/([\w.-]+\+)?json\b/.test(response.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}
