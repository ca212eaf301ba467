// Shared set-up of the benchmarks: a running service with one project, a published version and a key.
import { loadConfig, type Config } from '../../src/config.js';
import type { RunningServer } from '../../src/server.js';
import { build } from '../../scripts/build.mjs';
import { send } from '../../test/helpers/server.js';
import { freshDatabaseUrl } from '../../test/helpers/server.js';
import { publishVersion, type PublishedVersion } from '../../test/helpers/versions.js';

export const BENCH_ORIGIN = 'https://shop.example';

export interface BenchProject {
  server: RunningServer;
  projectId: string;
  secret: string;
  keyId: string;
  version: PublishedVersion;
  /** The owner's session token. */
  token: string;
}

/**
 * Where the service's modules come from. `built`: dist/ (built first when stale), the JavaScript `npm start` runs:
 * esbuild without tsx's keepNames, whose `__name` wrapper runs each time a named closure is made (4 µs of the
 * consent POST's 120 in a profile). Benchmarks that reach into the service's modules (a writer's switches, a
 * worker) must take them from here too, or they get a second copy that the running service never sees.
 */
export async function serviceModule<T>(path: string, built: boolean): Promise<T> {
  if (!built) return import(`../../src/${path}`) as Promise<T>;
  build({ ifStale: true });
  return import(`../../dist/src/${path}`) as Promise<T>;
}

/**
 * Starts the service as production would run it, except: rate limits high enough not to stop the
 * load (the limiter still runs on every request) and LOG_LEVEL from the environment (default silent).
 * PostgreSQL when BENCH_DATABASE_URL is set (a fresh database is created on it), else the embedded one.
 * `built`: from dist/ (serviceModule); otherwise from src/ through tsx.
 */
export async function benchProject(overrides: Partial<Config> = {}, { built = false } = {}): Promise<BenchProject> {
  const { startServer } = await serviceModule<typeof import('../../src/server.js')>('server.js', built);
  const adminUrl = process.env.BENCH_DATABASE_URL;
  if (adminUrl) process.env.TEST_DATABASE_URL = adminUrl;
  // An explicit database (bench/receipts-scale.ts measuring one it loaded before) is used as it is.
  const databaseUrl = overrides.databaseUrl ?? (adminUrl ? await freshDatabaseUrl() : undefined);
  const defaults = loadConfig();
  const server = await startServer({
    port: 0,
    dataDir: 'memory://',
    databaseUrl,
    logLevel: (process.env.LOG_LEVEL as Config['logLevel']) ?? 'silent',
    nodeEnv: 'production',
    billingWebhookSecret: 'bench',
    rateLimits: { ...defaults.rateLimits, registerPerHour: 1000, sdkConfigPerMinute: 1e9, sdkConsentPerMinute: 1e9, sdkConsentPerAddressPerMinute: 1e9 },
    ...overrides,
  });
  const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}) => send(server.url, method, path, options);
  const email = `bench-${Date.now()}@example.com`;
  await call('POST', '/api/platform/auth/register', { body: { email, password: 'correct horse battery', name: 'Bench' } });
  const login = await call('POST', '/api/platform/auth/login', { body: { email, password: 'correct horse battery' } });
  const token = login.body.token as string;
  const org = await call('POST', '/api/platform/orgs', { token, body: { name: 'Bench' } });
  const project = await call('POST', `/api/platform/orgs/${org.body.organization.id}/projects`, { token, body: { name: 'Bench' } });
  const projectId = project.body.project.id as string;
  const version = await publishVersion({ services: server.services, request: call }, { token }, projectId);
  const key = await call('POST', `/api/platform/projects/${projectId}/api-keys`, { token, body: { name: 'bench' } });
  // Browsers send an Origin: the allowlist check runs on every benchmarked request.
  await call('PUT', `/api/platform/projects/${projectId}/allowed-origins`, { token, body: { origins: [BENCH_ORIGIN] } });
  return { server, projectId, secret: key.body.secret, keyId: key.body.apiKey.id, version, token };
}

/**
 * Load for POST /api/sdk/v1/consent: one request template whose marker the loader replaces with the
 * request number, so every receipt has its own installation.
 */
export function consentLoad(
  bench: BenchProject,
  choices: Record<string, boolean>,
  extras: Record<string, unknown> = {},
): { template: string; marker: string } {
  const marker = '@@@@@@@@@@@@';
  const body = JSON.stringify({
    versionId: bench.version.id,
    consentHash: bench.version.consentHash,
    choices,
    installationId: `bench-${marker}`,
    timestamp: new Date().toISOString(),
    sdkVersion: '1.0.0',
    ...extras,
  });
  const template =
    `POST /api/sdk/v1/consent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bench.secret}\r\nOrigin: ${BENCH_ORIGIN}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return { template, marker };
}

export const machine = async () => {
  const os = await import('node:os');
  return `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
};
