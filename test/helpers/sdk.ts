import { loadConfig, type Config } from '../../src/config.js';
import { startTestServer, type TestServer } from './server.js';

/** A test server whose register limit lets a file create many teams; SDK limits stay as configured. */
export function startSdkTestServer(overrides: Partial<Config> = {}, options: { now?: () => Date } = {}): Promise<TestServer> {
  const defaults = loadConfig().rateLimits;
  return startTestServer({ ...overrides, rateLimits: { ...defaults, registerPerHour: 10_000, loginPerIp: 10_000, ...overrides.rateLimits } }, options);
}

/** Creates a publishable key as the project's owner and returns its id and secret. */
export async function createKey(server: TestServer, ownerToken: string, projectId: string, name?: string): Promise<{ id: string; secret: string }> {
  const created = await server.request('POST', `/api/platform/projects/${projectId}/api-keys`, { token: ownerToken, body: name ? { name } : {} });
  if (created.status !== 201) throw new Error(`key create failed: ${created.status} ${created.text}`);
  return { id: created.body.apiKey.id, secret: created.body.secret };
}
